"""arm_from_urdf on random arms of the family: the arm file's tool point is the URDF's.

Each URDF is written by the tests' own writer (family_urdf.py) with tilted frames, odd axes,
fixed joints in between and joints in shuffled order; the arm file arm_from_urdf writes is read
back as YAML and posed both by an oracle written from the arm model's definition (model_fk.py)
and by ``load_arm(file).fk``, and compared with yourdfpy's forward kinematics of the
URDF itself. Arm.ik is checked through the URDF's FK on targets the URDF reaches.
"""

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from fabrik_ros.kinematics import Arm, load_arm
from fabrik_ros.tools.arm_from_urdf import main
from test.kinematics.description.family_urdf import random_family_arm, urdf_text
from test.kinematics.description.model_fk import model_tool_point
from test.kinematics.description.urdf_fk import UrdfFk

SHAPES = [(yaw, roll, pitches) for yaw in (True, False) for roll in (True, False)
          for pitches in (1, 2, 3, 4)]


def write_arm_file(tmp_path: Path, text: str, name: str) -> tuple[Path, dict, Arm]:
    """Run arm_from_urdf on URDF text; return the URDF path, the file's parameters, its Arm."""
    urdf = tmp_path / f'{name}.urdf'
    urdf.write_text(text)
    out = tmp_path / f'{name}.yaml'
    assert main([str(urdf), '--tool-link', 'tool', '-o', str(out)]) == 0
    return urdf, yaml.safe_load(out.read_text())['/**']['ros__parameters'], load_arm(out)


def random_positions(arm_file: dict, rng: np.random.Generator) -> dict[str, float]:
    """Return random joint positions within the arm file's limits [rad]."""
    return {name: math.radians(rng.uniform(arm_file['joints'][name]['min_deg'],
                                           arm_file['joints'][name]['max_deg']))
            for name in arm_file['joint_names']}


@pytest.mark.parametrize(('yaw', 'roll', 'pitches'), SHAPES)
def test_random_arm_tool_point_equals_the_urdfs(tmp_path: Path, yaw: bool, roll: bool,
                                                 pitches: int):
    rng = np.random.default_rng(SHAPES.index((yaw, roll, pitches)))
    worst = 0.0
    for trial in range(3):
        spec = random_family_arm(rng, yaw=yaw, roll=roll, pitches=pitches)
        urdf, arm_file, arm = write_arm_file(tmp_path, urdf_text(spec, rng), f'arm{trial}')
        movable = [j.name for j in spec if j.type != 'fixed']
        assert arm_file['joint_names'] == movable
        reference = UrdfFk(urdf, base_link='base', tool_link='tool')
        for _ in range(25):
            positions = random_positions(arm_file, rng)
            urdf_point = reference.tool_point(positions)
            oracle = model_tool_point(arm_file, positions)
            core = arm.fk([positions[name] for name in arm.joint_names])[-1]
            worst = max(worst, float(np.linalg.norm(oracle - urdf_point)),
                        float(np.linalg.norm(core - urdf_point)))
    assert worst < 1e-5


def test_joint_kinds_and_limits_come_from_the_urdf(tmp_path: Path):
    rng = np.random.default_rng(99)
    spec = random_family_arm(rng, yaw=True, roll=True, pitches=3)
    _, arm_file, _ = write_arm_file(tmp_path, urdf_text(spec, rng), 'arm')
    kinds = [arm_file['joints'][name]['kind'] for name in arm_file['joint_names']]
    assert kinds == ['yaw', 'pitch', 'pitch', 'pitch', 'roll']
    for joint in spec:
        if joint.type == 'fixed':
            continue
        entry = arm_file['joints'][joint.name]
        low, high = (-math.pi, math.pi) if joint.limits is None else joint.limits
        assert entry['min_deg'] == pytest.approx(math.degrees(low), abs=1e-9)
        assert entry['max_deg'] == pytest.approx(math.degrees(high), abs=1e-9)
        assert entry['min_deg'] <= entry['home_deg'] <= entry['max_deg']
        assert entry['direction'] in (1, -1)
        assert -180.0 < entry['zero_deg'] <= 180.0


IK_SHAPES = [(yaw, roll, pitches) for yaw in (True, False) for roll in (True, False)
             for pitches in (2, 3)]


@pytest.mark.parametrize(('yaw', 'roll', 'pitches'), IK_SHAPES)
def test_ik_reaches_what_the_urdf_reaches_within_limits(tmp_path: Path, yaw: bool, roll: bool,
                                                        pitches: int):
    rng = np.random.default_rng(100 + 10 * pitches + 2 * yaw + roll)
    missed = []
    for trial in range(3):
        spec = random_family_arm(rng, yaw=yaw, roll=roll, pitches=pitches, continuous=False)
        urdf, arm_file, arm = write_arm_file(tmp_path, urdf_text(spec, rng), f'arm{trial}')
        reference = UrdfFk(urdf, base_link='base', tool_link='tool')
        for _ in range(20):
            target = reference.tool_point(random_positions(arm_file, rng))
            result = arm.ik(target)
            assert arm.within_limits(result.angles_rad)
            answer = reference.tool_point(dict(zip(arm.joint_names, result.angles_rad,
                                                   strict=True)))
            # Where the solver says the tool is, the URDF agrees, reached or not.
            assert np.linalg.norm(answer - result.position_m) < 1e-5
            if not result.reached:
                missed.append((trial, result.stop_reason.value, result.residual_m))
            assert np.linalg.norm(answer - target) <= (arm.options.tolerance_m + 1e-5
                                                       if result.reached else 1.0)
    assert missed == []
