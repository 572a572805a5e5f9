"""The hand-written URDFs of real hobby arms (issue 21's table) read by arm_from_urdf: exact FK.

Each URDF under urdf/ was written for these tests from the numbers its vendor published (each
file says where they came from). The arm file arm_from_urdf writes must put the tool where the
URDF itself does (yourdfpy), to 1e-5 m, over 1,000 random configurations within the limits,
both by the arm model's definition (model_fk.py) and by ``load_arm(file).fk``; ``ik`` must
reach what the URDF reaches.
"""

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from fabrik_ros.kinematics import load_arm
from fabrik_ros.tools.arm_from_urdf import main
from test.kinematics.description.model_fk import model_tool_point
from test.kinematics.description.urdf_fk import UrdfFk

URDF_DIR = Path(__file__).parent / 'urdf'
# arm: (URDF file, base link, tool link, movable joints in chain order)
ARMS = {
    'so101': ('so101.urdf', 'base_link', 'gripper_frame_link',
              ['shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll']),
    'so100': ('so100.urdf', 'base', 'gripper',
              ['shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll']),
    'lss_4dof': ('lss_4dof.urdf', 'world', 'lss_arm_ee',
                 [f'lss_arm_joint_{i}' for i in range(1, 5)]),
    'al5d': ('al5d.urdf', 'base_link', 'gripper', [f'Joint{i}' for i in range(1, 6)]),
    'phantomx_pincher': ('phantomx_pincher.urdf', 'base_link', 'end_effector',
                         ['arm_shoulder_pan_joint', 'arm_shoulder_lift_joint',
                          'arm_elbow_flex_joint', 'arm_wrist_flex_joint']),
}


def arm_file_of(tmp_path: Path, arm: str) -> tuple[Path, dict]:
    """Run arm_from_urdf on one vendor arm; return the file and its parameters."""
    urdf, base, tool, _ = ARMS[arm]
    out = tmp_path / f'{arm}.yaml'
    assert main([str(URDF_DIR / urdf), '--tool-link', tool, '--base-link', base,
                 '-o', str(out)]) == 0
    return out, yaml.safe_load(out.read_text())['/**']['ros__parameters']


def random_positions(arm_file: dict, rng: np.random.Generator) -> dict[str, float]:
    """Return random joint positions within the arm file's limits [rad]."""
    return {name: math.radians(rng.uniform(arm_file['joints'][name]['min_deg'],
                                           arm_file['joints'][name]['max_deg']))
            for name in arm_file['joint_names']}


def worst_tool_errors(path: Path, reference: UrdfFk, count: int,
                      seed: int) -> tuple[float, float]:
    """Return the largest tool point distances [m] of the oracle and of Arm.fk from the URDF's.

    :param path: the arm file, read as YAML by the oracle and by load_arm for Arm.fk
    """
    rng = np.random.default_rng(seed)
    arm_file = yaml.safe_load(path.read_text())['/**']['ros__parameters']
    arm = load_arm(path)
    oracle = core = 0.0
    for _ in range(count):
        positions = random_positions(arm_file, rng)
        urdf_point = reference.tool_point(positions)
        oracle = max(oracle, float(np.linalg.norm(model_tool_point(arm_file, positions)
                                                  - urdf_point)))
        fk = arm.fk([positions[name] for name in arm.joint_names])[-1]
        core = max(core, float(np.linalg.norm(fk - urdf_point)))
    return oracle, core


@pytest.mark.parametrize('arm', sorted(ARMS))
def test_vendor_arm_tool_point_equals_its_urdfs(tmp_path: Path, arm: str):
    path, arm_file = arm_file_of(tmp_path, arm)
    urdf, base, tool, joints = ARMS[arm]
    assert arm_file['joint_names'] == joints
    reference = UrdfFk(URDF_DIR / urdf, base_link=base, tool_link=tool)
    oracle, core = worst_tool_errors(path, reference, 200, seed=21)
    assert oracle < 1e-5 and core < 1e-5


IK_ARMS = sorted(ARMS)


@pytest.mark.parametrize('arm', IK_ARMS)
def test_vendor_arm_ik_reaches_what_its_urdf_reaches(tmp_path: Path, arm: str):
    path, arm_file = arm_file_of(tmp_path, arm)
    urdf, base, tool, _ = ARMS[arm]
    reference = UrdfFk(URDF_DIR / urdf, base_link=base, tool_link=tool)
    solver = load_arm(path)
    rng = np.random.default_rng(3)
    missed = []
    for _ in range(100):
        target = reference.tool_point(random_positions(arm_file, rng))
        result = solver.ik(target)
        assert solver.within_limits(result.angles_rad)
        answer = reference.tool_point(dict(zip(solver.joint_names, result.angles_rad,
                                               strict=True)))
        assert np.linalg.norm(answer - result.position_m) < 1e-5
        if result.reached:
            # reached within the tolerance by the arm file's FK, which is the URDF's to 1e-5 m
            assert np.linalg.norm(answer - target) <= solver.options.tolerance_m + 1e-5
        else:
            missed.append((result.stop_reason.value, result.residual_m))
    assert missed == []


def test_so101_numbers_match_the_issue(tmp_path: Path):
    # issue 21 measured on the SO-101: shoulder 30.4 mm off the yaw axis, tool 7.9 mm off the
    # roll axis, pitch zeros +76.0 and -73.8 deg, yaw reversed.
    _, arm_file = arm_file_of(tmp_path, 'so101')
    geometry, joints = arm_file['geometry'], arm_file['joints']
    assert geometry['shoulder_offset_m'] == pytest.approx(0.0304, abs=5e-5)
    assert geometry['tool_offset_m'] == pytest.approx(0.0079, abs=5e-5)
    assert geometry['base_xyz_m'] == pytest.approx([0.0388353, 0.0, 0.0624], abs=1e-7)
    assert joints['shoulder_pan']['direction'] == -1
    assert joints['shoulder_lift']['zero_deg'] == pytest.approx(76.0, abs=0.05)
    assert joints['elbow_flex']['zero_deg'] == pytest.approx(-73.8, abs=0.05)
