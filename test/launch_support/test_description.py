"""description:= hands the arm's own URDF to robot_state_publisher, or refuses before any start.

Pure Python, as test_arguments.py: the launch files hand the same values to plan_sim/plan_arm.
The URDFs are written here: a serial chain of named joints below ``base_link``.
"""

from pathlib import Path

import pytest

from fabrik_ros.kinematics import load_arm
from fabrik_ros.kinematics.description.urdf_model import MAX_URDF_CHARS
from fabrik_ros.launch_support.arguments import (
    arm_arguments,
    arm_urdf,
    defaults,
    LaunchArgumentError,
    plan_arm,
    plan_sim,
    sim_arguments,
)
from test.package_layout import REPO_ROOT

SHARE = REPO_ROOT
ARM_6SERVO = str(REPO_ROOT / 'config' / 'arm_6servo.yaml')      # + aux servo 'gripper'
ARM_JOINTS = ('base_yaw', 'shoulder', 'elbow', 'wrist_pitch', 'wrist_roll')


def everything(package: str) -> bool:
    return True


def _sim(**given):
    return plan_sim(defaults(sim_arguments(SHARE), config=ARM_6SERVO, **given), share=SHARE,
                    installed=everything, simavr_check=lambda: None)


def _arm(**given):
    return plan_arm(defaults(arm_arguments(SHARE), config=ARM_6SERVO, **given), share=SHARE,
                    installed=everything)


def _urdf(joints, mimic=()) -> str:
    """Return a URDF whose joints (name, type) form a chain; ``mimic`` joints copy the first."""
    links = ['base_link', *(f'link_{i}' for i in range(len(joints)))]
    text = ['<?xml version="1.0"?>', '<robot name="vendor_arm">']
    text += [f'  <link name="{link}"/>' for link in links]
    for i, (name, kind) in enumerate(joints):
        limit = ('<limit lower="-1.5" upper="1.5" effort="1" velocity="1"/>'
                 if kind in ('revolute', 'prismatic') else '')
        copy = f'<mimic joint="{joints[0][0]}"/>' if name in mimic else ''
        text.append(f'  <joint name="{name}" type="{kind}"><parent link="{links[i]}"/>'
                    f'<child link="{links[i + 1]}"/><origin xyz="0 0 0.05"/>'
                    f'<axis xyz="0 1 0"/>{limit}{copy}</joint>')
    return '\n'.join([*text, '</robot>', ''])


def _write(tmp_path: Path, text: str, name: str = 'vendor.urdf') -> str:
    path = tmp_path / name
    path.write_text(text, encoding='utf-8')
    return str(path)


def _robot_description(plan) -> str:
    publisher = next(p for p in plan.processes if p.executable == 'robot_state_publisher')
    return publisher.parameters[0]['robot_description']


def _refused(plan, **given) -> str:
    with pytest.raises(LaunchArgumentError) as refused:
        plan(**given)
    return str(refused.value)


MATCHING = [*((name, 'revolute') for name in ARM_JOINTS), ('tool_mount', 'fixed'),
            ('gripper', 'revolute'), ('finger_mirror', 'revolute')]


# -- the vendor's URDF goes through, as written -----------------------------------------------

@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_a_matching_urdf_is_what_robot_state_publisher_gets(plan, tmp_path):
    text = _urdf(MATCHING, mimic={'finger_mirror'})
    assert _robot_description(plan(description=_write(tmp_path, text))) == text


@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_without_description_robot_state_publisher_gets_the_generated_urdf(plan):
    assert _robot_description(plan()) == arm_urdf(load_arm(ARM_6SERVO))


def test_the_argument_is_declared_on_both_launch_files_empty_by_default():
    for arguments in (sim_arguments(SHARE), arm_arguments(SHARE)):
        declared = {a.name: a.default for a in arguments}
        assert declared['description'] == ''


# -- refused before anything starts, one line naming the argument ----------------------------

@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_a_missing_file_or_a_folder_is_refused(plan, tmp_path):
    for path in (tmp_path / 'nowhere.urdf', tmp_path):
        assert _refused(plan, description=str(path)).startswith(
            f'description:={path}: no such file; name the URDF of the arm')


def test_a_file_that_is_not_text_is_refused(tmp_path):
    path = tmp_path / 'mesh.stl'
    path.write_bytes(b'solid \xff\xfe\x00binary')
    assert _refused(_sim, description=str(path)).startswith(
        f'description:={path}: not readable as UTF-8 text')


def test_a_file_past_the_size_bound_is_refused_unparsed(tmp_path):
    path = _write(tmp_path, _urdf(MATCHING) + ' ' * MAX_URDF_CHARS)
    assert _refused(_sim, description=path) == (
        f'description:={path}: longer than {MAX_URDF_CHARS} characters, more than any URDF '
        'without inlined meshes')


@pytest.mark.parametrize('text,why', [
    ('/**:\n  ros__parameters: {}\n', 'URDF is not well-formed XML'),
    ('<sdf version="1.9"><model name="arm"/></sdf>', 'root element <sdf>, must be <robot>'),
    ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY a "b">]><robot name="x"/>', 'DOCTYPE'),
])
def test_a_file_that_is_not_a_urdf_is_refused_saying_why(text, why, tmp_path):
    path = _write(tmp_path, text)
    message = _refused(_arm, description=path)
    assert message.startswith(f'description:={path}: not a URDF: ') and why in message


def test_an_arm_joint_the_urdf_lacks_or_fixes_is_named(tmp_path):
    joints = [(name, 'fixed' if name == 'wrist_roll' else 'revolute')
              for name in ARM_JOINTS if name != 'elbow']
    path = _write(tmp_path, _urdf(joints))
    assert _refused(_sim, description=path) == (
        f"description:={path}: its joints do not match the arm file's (robot_state_publisher "
        'places a link by the name of the joint above it): joints of the arm file that are no '
        'movable joint of the URDF: elbow, wrist_roll (fixed there)')


def test_a_movable_urdf_joint_the_arm_file_lacks_is_named(tmp_path):
    joints = [*((name, 'revolute') for name in ARM_JOINTS), ('gripper', 'revolute'),
              ('jaw', 'prismatic'), ('turntable', 'continuous')]
    message = _refused(_arm, description=_write(tmp_path, _urdf(joints)))
    assert message.endswith(': movable joints of the URDF that are neither a joint nor an '
                            'auxiliary servo of the arm file: jaw, turntable')


def test_names_missing_on_both_sides_are_said_in_one_line(tmp_path):
    joints = [('Shoulder_Pan' if name == 'base_yaw' else name, 'revolute')
              for name in ARM_JOINTS]
    message = _refused(_sim, description=_write(tmp_path, _urdf(joints)))
    assert message.endswith(': joints of the arm file that are no movable joint of the URDF: '
                            'base_yaw; movable joints of the URDF that are neither a joint nor '
                            'an auxiliary servo of the arm file: Shoulder_Pan')
    assert '\n' not in message


def test_a_description_nobody_would_show_is_refused(tmp_path):
    path = _write(tmp_path, _urdf(MATCHING))
    assert _refused(_sim, description=path, robot_state_publisher='false') == (
        f'description:={path} needs robot_state_publisher (true or auto): with '
        'robot_state_publisher:=false no one shows it')
