"""The arm_from_urdf console script, run as a subprocess: writes the file, or refuses in one line.

Every refusal ends with exit status 1, one line on stderr that names the joint (or link, or
file) and the reason, and no traceback; nothing is written.
"""

import math
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest
import yaml

from test.kinematics.description.family_urdf import urdf_text, UrdfJointSpec
from test.tools.conftest import REPO_ROOT

X, Y, Z = np.eye(3)


def run(*args: str) -> subprocess.CompletedProcess:
    """Run arm_from_urdf with ``args``."""
    return subprocess.run([sys.executable, '-m', 'fabrik_ros.tools.arm_from_urdf', *args],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)


def joint(name: str, point, axis=None, *, type: str = 'revolute',
          limits=(-1.5, 1.5)) -> UrdfJointSpec:
    """Return a joint laid out in the base frame."""
    if type == 'fixed':
        return UrdfJointSpec(name, type, np.array(point, dtype=float))
    return UrdfJointSpec(name, type, np.array(point, dtype=float), np.array(axis, dtype=float),
                         limits)


def good_arm() -> list[UrdfJointSpec]:
    """Return a yaw, three pitch, roll arm in the base frame."""
    return [joint('pan', (0.0, 0.0, 0.05), Z), joint('lift', (0.03, 0.0, 0.1), Y),
            joint('elbow', (0.13, 0.0, 0.2), -Y), joint('wrist', (0.25, 0.0, 0.2), Y),
            joint('twist', (0.28, 0.0, 0.2), X), joint('tip', (0.35, 0.0, 0.21), type='fixed')]


def write(tmp_path: Path, joints: list[UrdfJointSpec]) -> Path:
    """Write the joints as a URDF (frames tilted at random) with tool link ``tool``."""
    path = tmp_path / 'arm.urdf'
    path.write_text(urdf_text(joints, np.random.default_rng(5)))
    return path


def test_writes_the_arm_file_and_prints_one_summary_line(tmp_path: Path):
    out = tmp_path / 'arm.yaml'
    result = run(str(write(tmp_path, good_arm())), '--tool-link', 'tool', '-o', str(out))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ''
    assert result.stdout.count('\n') == 1
    assert result.stdout.startswith(f'wrote {out}: base -> tool, 5 joints (yaw pan, pitch lift')
    params = yaml.safe_load(out.read_text())['/**']['ros__parameters']
    assert params['joint_names'] == ['pan', 'lift', 'elbow', 'wrist', 'twist']
    assert params['geometry']['shoulder_offset_m'] == pytest.approx(0.03, abs=1e-12)
    assert params['geometry']['shoulder_height_m'] == pytest.approx(0.05, abs=1e-12)
    assert params['geometry']['tool_offset_m'] == pytest.approx(0.01, abs=1e-12)
    assert params['servos']['pan']['channel'] == 0


def test_every_number_carries_a_comment_and_servos_are_marked_placeholders(tmp_path: Path):
    out = tmp_path / 'arm.yaml'
    assert run(str(write(tmp_path, good_arm())), '--tool-link', 'tool', '-o', str(out),
               '--first-channel', '1', '--aux-servo', 'gripper').returncode == 0
    text = out.read_text()
    section = ''
    for line in text.splitlines():
        content, _, comment = line.partition('#')
        if content.strip().endswith(':') and content.startswith('    ') \
                and not content.startswith('      '):
            section = content.strip()
        value = content.partition(':')[2].strip()
        if any(c.isdigit() for c in value) and not line.lstrip().startswith('#'):
            assert comment.strip(), f'number without a comment: {line}'
            if section in ('servos:', 'aux_servos:'):
                assert 'PLACEHOLDER: calibrate' in comment, line
    params = yaml.safe_load(text)['/**']['ros__parameters']
    assert [params['servos'][n]['channel'] for n in params['joint_names']] == [1, 2, 3, 4, 5]
    assert params['aux_servos']['gripper']['channel'] == 6
    assert 'link_lengths_m[1]: elbow to wrist axis distance' in text


def tilted(axis, degrees: float, about) -> np.ndarray:
    """Return ``axis`` turned by ``degrees`` about ``about``."""
    about = np.array(about, dtype=float)
    angle = math.radians(degrees)
    axis = np.array(axis, dtype=float)
    return (axis * math.cos(angle) + np.cross(about, axis) * math.sin(angle)
            + about * (about @ axis) * (1 - math.cos(angle)))


def replace(joints: list[UrdfJointSpec], index: int, new: UrdfJointSpec) -> list:
    """Return the joints with one replaced."""
    return [new if i == index else j for i, j in enumerate(joints)]


REFUSALS = {
    'prismatic': (lambda a: replace(a, 2, joint('elbow', (0.13, 0.0, 0.2), X, type='prismatic')),
                  "joint 'elbow' is prismatic"),
    'roll_between_pitches': (lambda a: a[:3] + [joint('spin', (0.2, 0.0, 0.2), X)] + a[3:],
                             "joint 'spin': a roll joint between pitch joints 'elbow' and "
                             "'wrist'"),
    'second_yaw': (lambda a: a[:1] + [joint('pan2', (0.01, 0.0, 0.06), -Z)] + a[1:],
                   "joint 'pan2': a second yaw joint after 'pan'"),
    'pitch_tilted_from_yaw': (lambda a: replace(a, 1, joint('lift', (0.03, 0.0, 0.1),
                                                            tilted(Y, 3.0, X))),
                              "joint 'lift': axis 3 deg off perpendicular to the yaw axis"),
    'yaw_tilted_from_base_z': (lambda a: replace(a, 0, joint('pan', (0.0, 0.0, 0.05),
                                                             tilted(Z, 1.0, X))),
                               "joint 'pan': axis (0, -0.0175, 0.9998) in the base link's "
                               "frame is 1 deg off the base link's z"),
    'second_roll': (lambda a: a[:5] + [joint('twist2', (0.3, 0.0, 0.2), Z)] + a[5:],
                    "joint 'twist2': a second roll joint after 'twist'"),
    'pitch_not_along_y_without_yaw': (lambda a: [joint('lift', (0.03, 0.0, 0.1), X)] + a[2:],
                                      "joint 'lift': pitch axis (1, 0, 0) in the base link's "
                                      'frame in a chain without a yaw joint must be parallel'),
    'skew_axis': (lambda a: replace(a, 4, joint('twist', (0.28, 0.0, 0.2), tilted(X, 30, Z))),
                  "joint 'twist': axis at 60 deg to the pitch axis of 'lift'"),
    'range_over_a_turn': (lambda a: replace(a, 0, joint('pan', (0.0, 0.0, 0.05), Z,
                                                        limits=(-3.5, 3.5))),
                          "joint 'pan': limits [-200.535, 200.535] deg, an arm file takes a "
                          'range of at most 360 deg'),
    'tool_on_the_last_pitch_axis': (lambda a: a[:4] + [joint('tip', (0.25, 0.05, 0.2),
                                                             type='fixed')],
                                    "tool link 'tool' lies on the axis of the last pitch joint "
                                    "'wrist'"),
    'only_a_yaw_joint': (lambda a: a[:1] + [joint('tip', (0.1, 0.0, 0.1), type='fixed')],
                         "joint 'pan' is the only movable joint"),
    'coinciding_pitch_axes': (lambda a: replace(a, 2, joint('elbow', (0.03, 0.1, 0.1), Y)),
                              "joint 'elbow': its axis is the axis of 'lift'"),
}


@pytest.mark.parametrize('case', sorted(REFUSALS))
def test_a_chain_outside_the_family_is_refused_in_one_line(tmp_path: Path, case: str):
    build, fragment = REFUSALS[case]
    out = tmp_path / 'arm.yaml'
    result = run(str(write(tmp_path, build(good_arm()))), '--tool-link', 'tool', '-o', str(out))
    assert result.returncode == 1
    assert result.stdout == ''
    assert result.stderr.count('\n') == 1 and 'Traceback' not in result.stderr
    assert fragment in result.stderr
    assert not out.exists()


def test_a_urdf_in_millimetres_is_refused_with_the_loaders_reason(tmp_path: Path):
    arm = [UrdfJointSpec(j.name, j.type, j.point * 1000.0, j.axis, j.limits) for j in good_arm()]
    out = tmp_path / 'arm.yaml'
    result = run(str(write(tmp_path, arm)), '--tool-link', 'tool', '-o', str(out))
    assert result.returncode == 1
    assert result.stderr.count('\n') == 1 and 'Traceback' not in result.stderr
    assert 'the arm file it makes would not load: geometry.' in result.stderr
    assert 'millimetres written as metres?' in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(('args', 'fragment'), [
    (['--tool-link', 'hand'], "link 'hand': no such link"),
    (['--tool-link', 'tool', '--base-link', 'nowhere'], "link 'nowhere': no such link"),
    (['--tool-link', 'spare'], "tool link 'spare' is not below base link 'link_0'"),
    (['--tool-link', 'base'], "tool link 'base' is the base link"),
])
def test_an_unknown_or_misplaced_link_is_refused(tmp_path: Path, args: list[str], fragment: str):
    urdf = write(tmp_path, good_arm())
    if 'spare' in args:
        args = [*args, '--base-link', 'link_0']
    result = run(str(urdf), *args, '-o', str(tmp_path / 'arm.yaml'))
    assert result.returncode == 1
    assert result.stderr.count('\n') == 1 and 'Traceback' not in result.stderr
    assert fragment in result.stderr


@pytest.mark.parametrize(('content', 'fragment'), [
    (None, 'No such file'),
    (b'<robot name="x"><link name="a"></robot>', 'not well-formed XML'),
    (b'\xff\xfe<robot/>', 'not UTF-8 text'),
    (b'<robot name="x"/>' + b' ' * 4_000_001, 'more than 4000000 bytes'),
    (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "a">]><robot name="&a;"/>', 'DOCTYPE'),
])
def test_a_bad_file_is_refused_in_one_line(tmp_path: Path, content: bytes | None,
                                            fragment: str):
    urdf = tmp_path / 'bad.urdf'
    if content is not None:
        urdf.write_bytes(content)
    result = run(str(urdf), '--tool-link', 'tool', '-o', str(tmp_path / 'arm.yaml'))
    assert result.returncode == 1
    assert result.stderr.count('\n') == 1 and 'Traceback' not in result.stderr
    assert fragment in result.stderr
    assert str(urdf) in result.stderr


def test_help_names_the_options():
    result = run('--help')
    assert result.returncode == 0
    for option in ('--tool-link', '--base-link', '-o', '--first-channel', '--aux-servo'):
        assert option in result.stdout


def test_the_tool_imports_without_ros():
    blocker = ('import importlib.abc, sys\n'
               'class Block(importlib.abc.MetaPathFinder):\n'
               '    def find_spec(self, name, path=None, target=None):\n'
               "        top = name.split('.')[0]\n"
               "        if top == 'rclpy' or top.endswith('_msgs'):\n"
               "            raise ImportError(f'blocked: {name}')\n"
               'sys.meta_path.insert(0, Block())\n'
               'import fabrik_ros.tools.arm_from_urdf\n'
               "print(sorted(m for m in sys.modules if m.startswith(('rclpy', 'std_msgs'))))\n")
    result = subprocess.run([sys.executable, '-c', blocker], capture_output=True, text=True,
                            cwd=REPO_ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[]'


def test_bus_servos_get_count_sections_and_a_gripper_joint_its_urdf_limits(tmp_path: Path):
    out = tmp_path / 'arm.yaml'
    so101 = REPO_ROOT / 'test' / 'kinematics' / 'description' / 'urdf' / 'so101.urdf'
    result = run(str(so101), '--tool-link', 'gripper_frame_link', '--first-channel', '1',
                 '--aux-servo', 'gripper', '--aux-servo', 'led', '--bus-servos', '4096',
                 '-o', str(out))
    assert result.returncode == 0, result.stderr
    params = yaml.safe_load(out.read_text())['/**']['ros__parameters']
    assert params['servos']['shoulder_pan'] == {'id': 1, 'zero_count': 2048.0, 'direction': 1,
                                                'counts_per_turn': 4096}
    grip = params['aux_servos']['gripper']
    assert (grip['id'], grip['home_deg']) == (6, 0.0)
    assert (grip['min_deg'], grip['max_deg']) == pytest.approx((math.degrees(-0.174533),
                                                                math.degrees(1.74533)))
    led = params['aux_servos']['led']
    assert (led['id'], led['min_deg'], led['max_deg']) == (7, -90.0, 90.0)
    assert 'PLACEHOLDER: calibrate: no URDF joint led' in out.read_text()


def test_a_bus_joint_of_a_whole_turn_is_narrowed_to_the_servos_turn_and_said(tmp_path: Path):
    out = tmp_path / 'arm.yaml'
    arm = good_arm()
    arm[4] = joint('twist', (0.28, 0.0, 0.2), X, limits=(-math.pi, math.pi))
    result = run(str(write(tmp_path, arm)), '--tool-link', 'tool', '--bus-servos', '4096',
                 '-o', str(out))
    assert result.returncode == 0, result.stderr
    params = yaml.safe_load(out.read_text())['/**']['ros__parameters']
    twist = params['joints']['twist']
    assert twist['max_deg'] - twist['min_deg'] == pytest.approx(4095 * 360 / 4096, abs=1e-5)
    assert params['servos']['twist']['zero_count'] == 2047.5
    assert 'narrowed about its middle to the 4095 counts' in out.read_text()


@pytest.mark.parametrize('value', ['40', 'many'])
def test_a_bus_turn_outside_the_arm_files_rule_is_refused(tmp_path: Path, value: str):
    out = tmp_path / 'arm.yaml'
    result = run(str(write(tmp_path, good_arm())), '--tool-link', 'tool', '--bus-servos',
                 value, '-o', str(out))
    assert result.returncode == 2
    assert '--bus-servos' in result.stderr and 'Traceback' not in result.stderr
    assert not out.exists()
