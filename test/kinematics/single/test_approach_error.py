"""IkResult.approach_error_rad against an independent forward kinematics of the tool's axis.

The axis is computed here by rotation matrices from the arm file's conventions (each joint turns
by ``zero + direction * position``; the yaw about +z, each pitch about the plane's normal so
that a positive pitch lifts; the roll about the axis itself), sharing nothing with the solver's
planar sums. Targets are drawn from poses of every shipped arm, so each is reachable with the
tool along that pose's axis: asked that axis, the answer must meet it; asked it tilted out of
the arm's vertical plane, the answer misses by the tilt, and the reported miss is the angle to
the axis the answer reaches.
"""

import math
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from fabrik_ros.kinematics import Arm, JointKind, load_arm
from fabrik_ros.kinematics.approach import angle_between
from test.kinematics.reference import tool_points

CONFIGS = sorted((Path(__file__).resolve().parents[3] / 'config').glob('*.yaml'))
ARMS = {path.stem: load_arm(path) for path in CONFIGS}
MET_RAD = 1e-3
"""An approach counts as met within 0.06 deg. The solver lays the last link along it exactly
(1e-9 rad) in the plane it picks for the position; an arm whose plane runs beside the yaw axis
(the AL5D's, by 1e-7 m) sees a target near the axis from a plane turned by up to 1e-4 rad when it
picks the branch reaching over the top."""


def _rotation(axis: str, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    if axis == 'z':
        return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def tool_frame(arm: Arm, positions) -> np.ndarray:
    """Return the last link's frame: columns the tool's axis, the plane's normal, "up".

    A positive pitch lifts the tool, so it turns about -y of the link frame. A roll turns
    about the axis (x) and leaves it where it is; it is not applied, so that the second
    column stays the arm's plane's normal.
    """
    frame = np.eye(3)
    for joint, position in zip(arm.joints, positions, strict=True):
        turned = joint.zero_rad + joint.direction * float(position)
        if joint.kind is JointKind.YAW:
            frame = frame @ _rotation('z', turned)
        elif joint.kind is JointKind.PITCH:
            frame = frame @ _rotation('y', -turned)
    return frame


def _pose(data, arm: Arm) -> np.ndarray:
    return np.array([data.draw(st.floats(j.min_rad, j.max_rad), label=j.name)
                     for j in arm.joints])


def _seed_with_roll_of(arm: Arm, pose: np.ndarray) -> np.ndarray:
    """Return home with the pose's roll: a pose target keeps the seed's roll (not solved)."""
    seed = arm.home.copy()
    for index, joint in enumerate(arm.joints):
        if joint.kind is JointKind.ROLL:
            seed[index] = pose[index]
    return seed


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_an_approach_the_pose_shows_reachable_is_met_and_the_miss_reported_is_its_angle(data):
    name = data.draw(st.sampled_from(sorted(ARMS)), label='arm')
    arm = ARMS[name]
    pose = _pose(data, arm)
    target = tool_points(arm, pose[None])[0]
    axis = tool_frame(arm, pose)[:, 0]
    result = arm.ik(target, _seed_with_roll_of(arm, pose), approach=axis)
    reached_axis = tool_frame(arm, result.angles_rad)[:, 0]
    assert result.approach_error_rad == pytest.approx(angle_between(axis, reached_axis),
                                                      abs=1e-9)
    assert result.reached, f'{name}: {result.residual_m * 1e3:.3f} mm short of {target}'
    assert result.approach_error_rad <= MET_RAD


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_an_approach_tilted_out_of_the_arms_plane_is_missed_by_the_tilt_and_said(data):
    name = data.draw(st.sampled_from(sorted(ARMS)), label='arm')
    arm = ARMS[name]
    pose = _pose(data, arm)
    tilt = data.draw(st.floats(0.01, 1.5), label='tilt out of the plane [rad]')
    frame = tool_frame(arm, pose)
    target = tool_points(arm, pose[None])[0]
    beside_axis = np.hypot(*(target - arm.offsets.base_xyz_m)[:2])
    # On the yaw axis every plane holds the target: the yaw may turn toward the approach.
    assume(arm.model.yaw is None or beside_axis > 0.005)
    asked = math.cos(tilt) * frame[:, 0] + math.sin(tilt) * frame[:, 1]
    result = arm.ik(target, _seed_with_roll_of(arm, pose), approach=asked)
    reached_frame = tool_frame(arm, result.angles_rad)
    assert result.approach_error_rad == pytest.approx(
        angle_between(asked, reached_frame[:, 0]), abs=1e-9)
    out_of_plane = math.asin(min(1.0, abs(float(asked @ reached_frame[:, 1]))))
    assert result.reached, f'{name}: {result.residual_m * 1e3:.3f} mm short of {target}'
    assert result.approach_error_rad >= out_of_plane - 1e-9, 'the axis never leaves the plane'
    # Met in the plane, missed by what lies out of it; the pose's own plane misses by the
    # tilt, another (beside the yaw axis, reaching over the top) may miss by less.
    assert result.approach_error_rad == pytest.approx(out_of_plane, abs=MET_RAD)
    assert result.approach_error_rad <= tilt + MET_RAD
    miss = arm.approach_miss(result.angles_rad, asked)
    assert miss.error_rad == result.approach_error_rad
    assert miss.out_of_plane_rad == pytest.approx(out_of_plane, abs=1e-9)


def test_a_position_target_reports_no_approach_error():
    arm = ARMS['arm_4dof']
    target = arm.fk(arm.home)[-1] * 0.9
    assert arm.ik(target).approach_error_rad is None
    assert arm.ik(target, arm.home).approach_error_rad is None


def test_the_tool_axis_is_the_roll_axis_not_the_line_to_a_tool_point_off_it():
    """The asked approach is met by the roll axis, not the line to a tool point beside it.

    The AL5D's roll axis runs 5 mm beside its last pitch axis (the SO-101's tool point sits
    8 mm off the roll axis): the line from the last pitch axis to the tool point is 7 deg
    (3 deg) off the tool's axis.
    """
    for name in ('al5d', 'so101'):
        arm = ARMS[name]
        pose = arm.home.copy()
        axis = tool_frame(arm, pose)[:, 0]
        assert arm.tool_axis(pose) == pytest.approx(axis, abs=1e-12)
        result = arm.ik(arm.fk(pose)[-1], pose, approach=axis)
        assert result.reached and result.approach_error_rad < 1e-6
