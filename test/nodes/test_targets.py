"""Target messages become checked points in the base frame, or a TargetError naming why not."""

import math

from geometry_msgs.msg import PointStamped, PoseStamped
from nav_msgs.msg import Path
import pytest

from fabrik_ros.kinematics import TargetError
from fabrik_ros.nodes.frames import BaseFrames
from fabrik_ros.nodes.targets import (
    cause_of,
    deserialized,
    target_from_point,
    target_from_pose,
    TargetCause,
    targets_from_path,
)

BASE = BaseFrames('base_link')     # no tf: the base frame (or an empty frame_id) only


def _pose(xyz, frame_id='', quaternion_wxyz=(1.0, 0.0, 0.0, 0.0)) -> PoseStamped:
    pose = PoseStamped()
    pose.header.frame_id = frame_id
    pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = xyz
    o = pose.pose.orientation
    o.w, o.x, o.y, o.z = quaternion_wxyz
    return pose


def test_an_empty_frame_means_the_base_frame_and_another_frame_is_refused():
    msg = PointStamped()
    msg.point.x = 0.1
    assert target_from_point(msg, BASE).position_m == (0.1, 0.0, 0.0)
    msg.header.frame_id = 'map'
    with pytest.raises(TargetError) as raised:
        target_from_point(msg, BASE)
    assert "frame_id 'map' is not the arm's base frame 'base_link'" in str(raised.value)


def test_a_non_finite_coordinate_is_refused():
    with pytest.raises(TargetError) as raised:
        target_from_pose(_pose((0.1, math.inf, 0.0)), BASE)
    assert 'target_pose: position (0.1, inf, 0.0) is not finite' in str(raised.value)


def _approach(quaternion_wxyz):
    return target_from_pose(_pose((0.1, 0.0, 0.1), quaternion_wxyz=quaternion_wxyz),
                            BASE, use_orientation=True).approach


def test_the_pose_orientation_gives_the_approach_axis_only_when_used():
    half = math.sqrt(0.5)
    assert _approach((half, 0.0, half, 0.0)) == pytest.approx((0.0, 0.0, -1.0))
    assert _approach((2 * half, 0, 0, 2 * half)) == pytest.approx((0.0, 1.0, 0.0)), \
        'quaternions are normalised'
    ignored = target_from_pose(_pose((0.1, 0.0, 0.1), quaternion_wxyz=(math.nan, 0, 0, 0)),
                               BASE)
    assert ignored.approach is None, 'the orientation is not read unless it is used'


@pytest.mark.parametrize('scale', [5e-324, 1e-160, 1e-9, 3.0, 1e154, 1e200, 1.7e308])
def test_a_quaternion_of_any_finite_non_zero_length_normalises_to_a_unit_axis(scale):
    """Regression: x = 1e-160 squared underflows to 0, so 2 / |q|^2 was inf and the axis NaN."""
    axis = _approach((0.0, scale, 0.0, 0.0))
    assert axis == pytest.approx((1.0, 0.0, 0.0))
    half = math.sqrt(0.5) * scale
    assert _approach((half, 0.0, half, 0.0)) == pytest.approx((0.0, 0.0, -1.0))


@pytest.mark.parametrize('wxyz, cause, fragment', [
    ((0.0, 0.0, 0.0, 0.0), TargetCause.NO_ROTATION, '(0, 0, 0, 0) is not a rotation'),
    ((math.inf, 0.0, 0.0, 0.0), TargetCause.NOT_FINITE, 'orientation (0.0, 0.0, 0.0, inf) is'),
    ((1.0, math.nan, 0.0, 0.0), TargetCause.NOT_FINITE, 'is not finite'),
])
def test_an_orientation_that_is_no_rotation_is_refused_with_the_reason(wxyz, cause, fragment):
    with pytest.raises(TargetError) as raised:
        _approach(wxyz)
    assert cause_of(raised.value) is cause
    assert fragment in str(raised.value)


def test_errors_name_the_topic_the_message_came_on():
    with pytest.raises(TargetError) as raised:
        target_from_pose(_pose((math.nan, 0.0, 0.0)), BASE, topic='/goal_pose')
    assert str(raised.value).startswith('/goal_pose: position (nan, 0.0, 0.0)')


def test_a_solver_refusal_has_a_cause_of_its_own():
    assert cause_of(TargetError('approach = (0, 0, 0), must be a non-zero direction')) is \
        TargetCause.UNSOLVABLE


def test_path_poses_inherit_the_path_frame_and_a_bad_pose_is_named_by_index():
    path = Path()
    path.header.frame_id = 'base_link'
    path.poses = [_pose((0.1, 0.0, 0.1)), _pose((0.1, 0.1, 0.1), frame_id='base_link')]
    assert [t.position_m for t in targets_from_path(path, BASE)] == [
        (0.1, 0.0, 0.1), (0.1, 0.1, 0.1)]
    path.poses.append(_pose((0.1, 0.1, 0.1), frame_id='odom'))
    with pytest.raises(TargetError) as raised:
        targets_from_path(path, BASE)
    assert str(raised.value).startswith('target_path.poses[2]: ')
    with pytest.raises(TargetError) as raised:
        targets_from_path(Path(), BASE)
    assert 'no poses' in str(raised.value)


def test_bytes_that_are_no_point_are_refused_naming_the_topic_and_the_type():
    with pytest.raises(TargetError) as raised:
        deserialized(b'\x00\x01\x00\x00\xff\xff\xff\xff', PointStamped, topic='/target_point')
    assert cause_of(raised.value) is TargetCause.MALFORMED
    assert str(raised.value).startswith('/target_point: 8 bytes that are no '
                                        'geometry_msgs/PointStamped (')
