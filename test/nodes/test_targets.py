"""Target messages become checked points in the base frame, or a TargetError naming why not."""

import math

from geometry_msgs.msg import PointStamped, PoseStamped
from nav_msgs.msg import Path
import pytest

from fabrik_ros.nodes.targets import (
    target_from_point,
    target_from_pose,
    TargetError,
    targets_from_path,
)


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
    assert target_from_point(msg, 'base_link').position_m == (0.1, 0.0, 0.0)
    msg.header.frame_id = 'map'
    with pytest.raises(TargetError) as raised:
        target_from_point(msg, 'base_link')
    assert "frame_id 'map' is not the arm's base frame 'base_link'" in str(raised.value)


def test_a_non_finite_coordinate_is_refused():
    with pytest.raises(TargetError) as raised:
        target_from_pose(_pose((0.1, math.inf, 0.0)), 'base_link')
    assert 'target_pose: position (0.1, inf, 0.0) is not finite' in str(raised.value)


def test_the_pose_orientation_gives_the_approach_axis_and_an_unset_one_gives_none():
    half = math.sqrt(0.5)
    down = target_from_pose(_pose((0.1, 0.0, 0.1), quaternion_wxyz=(half, 0.0, half, 0.0)),
                            'base_link')
    assert down.approach == pytest.approx((0.0, 0.0, -1.0))
    left = target_from_pose(_pose((0.1, 0.0, 0.1), quaternion_wxyz=(2 * half, 0, 0, 2 * half)),
                            'base_link')
    assert left.approach == pytest.approx((0.0, 1.0, 0.0)), 'quaternions are normalised'
    unset = target_from_pose(_pose((0.1, 0.0, 0.1), quaternion_wxyz=(0.0, 0.0, 0.0, 0.0)),
                             'base_link')
    assert unset.approach is None


def test_path_poses_inherit_the_path_frame_and_a_bad_pose_is_named_by_index():
    path = Path()
    path.header.frame_id = 'base_link'
    path.poses = [_pose((0.1, 0.0, 0.1)), _pose((0.1, 0.1, 0.1), frame_id='base_link')]
    assert [t.position_m for t in targets_from_path(path, 'base_link')] == [
        (0.1, 0.0, 0.1), (0.1, 0.1, 0.1)]
    path.poses.append(_pose((0.1, 0.1, 0.1), frame_id='odom'))
    with pytest.raises(TargetError) as raised:
        targets_from_path(path, 'base_link')
    assert str(raised.value).startswith('target_path.poses[2]: ')
    with pytest.raises(TargetError) as raised:
        targets_from_path(Path(), 'base_link')
    assert 'no poses' in str(raised.value)
