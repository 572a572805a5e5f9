"""An arm with a single pitch joint, read off its URDF: load_arm takes it, fk is the URDF's, ik.

The family allows one pitch joint (a pan-tilt pointer with a tool); arm_from_urdf writes it and
load_arm reads it. Arm.ik raises ValueError on it today (planar_arm.arc_table: "diff requires
input that is at least one dimensional"): reported to the lead (issue 21); the strict mark goes
when ik answers.
"""

from pathlib import Path

import numpy as np
import pytest

from test.kinematics.description.family_urdf import random_family_arm, urdf_text
from test.kinematics.description.test_urdf_in import random_positions, write_arm_file
from test.kinematics.description.urdf_fk import UrdfFk


@pytest.mark.parametrize('yaw', [True, False])
def test_one_pitch_arm_fk_is_the_urdfs(tmp_path: Path, yaw: bool):
    rng = np.random.default_rng(31 + yaw)
    spec = random_family_arm(rng, yaw=yaw, roll=True, pitches=1, continuous=False)
    urdf, arm_file, arm = write_arm_file(tmp_path, urdf_text(spec, rng), 'arm')
    reference = UrdfFk(urdf, base_link='base', tool_link='tool')
    for _ in range(50):
        positions = random_positions(arm_file, rng)
        fk = arm.fk([positions[name] for name in arm.joint_names])[-1]
        assert np.linalg.norm(fk - reference.tool_point(positions)) < 1e-5


def test_one_pitch_arm_ik_answers_within_limits(tmp_path: Path):
    rng = np.random.default_rng(33)
    spec = random_family_arm(rng, yaw=True, roll=False, pitches=1, continuous=False)
    urdf, arm_file, arm = write_arm_file(tmp_path, urdf_text(spec, rng), 'arm')
    reference = UrdfFk(urdf, base_link='base', tool_link='tool')
    for _ in range(20):
        target = reference.tool_point(random_positions(arm_file, rng))
        result = arm.ik(target)
        assert arm.within_limits(result.angles_rad)
        assert result.reached
