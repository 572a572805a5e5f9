"""Targets in any tf frame: BaseFrames against tf2_ros (or its stand-in), and fabrik_ik with it.

CI has no tf2_ros (not on PyPI): the stand-in in test/nodes/tf2_stand_in.py implements the
methods frames.py calls, as tf2 behaves. The lookup tests run against both it and the real
tf2_ros where that is installed, so a difference between the two shows as a failure here.
"""

import math
import sys

from geometry_msgs.msg import PointStamped, PoseStamped, TransformStamped
from nav_msgs.msg import Path
import numpy as np
import pytest
from rclpy.time import Time
from sensor_msgs.msg import JointState
from visualization_msgs.msg import InteractiveMarkerFeedback

from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes import frames as frames_module
from fabrik_ros.nodes.frames import BaseFrames, LISTED_FRAMES, TF_WAIT_S
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.nodes.interactive_target import target_from_feedback
from fabrik_ros.nodes.path_intake import PathRequest, prepare_path
from fabrik_ros.nodes.targets import (
    target_from_point,
    target_from_pose,
    TargetCause,
    TargetMessageError,
    targets_from_path,
)
from test.nodes import tf2_stand_in
from test.nodes.conftest import ARM_CONFIG

ARM = load_arm(ARM_CONFIG)
HALF = math.sqrt(0.5)
# camera_link: 0.1 m ahead of base_link and 0.2 m up, turned a quarter about z, so a point
# (x, y, z) in the camera is (0.1 - y, x, 0.2 + z) in the base frame.
CAMERA_XYZ, CAMERA_XYZW = (0.1, 0.0, 0.2), (0.0, 0.0, HALF, HALF)
IN_CAMERA, IN_BASE = (0.05, -0.05, -0.08), (0.15, 0.05, 0.12)
TOOL_MM = 1e-3


def _stamp(seconds: float):
    return Time(nanoseconds=round(seconds * 1e9)).to_msg()


def _transform(child, xyz, xyzw=(0.0, 0.0, 0.0, 1.0), *, parent='base_link',
               stamp_s=0.0) -> TransformStamped:
    msg = TransformStamped()
    msg.header.frame_id, msg.child_frame_id = parent, child
    msg.header.stamp = _stamp(stamp_s)
    t, r = msg.transform.translation, msg.transform.rotation
    t.x, t.y, t.z = xyz
    r.x, r.y, r.z, r.w = xyzw
    return msg


def _point(xyz, frame_id='camera_link', stamp_s=0.0) -> PointStamped:
    msg = PointStamped()
    msg.header.frame_id, msg.header.stamp = frame_id, _stamp(stamp_s)
    msg.point.x, msg.point.y, msg.point.z = xyz
    return msg


def _pose(xyz, frame_id='camera_link', xyzw=(0.0, 0.0, 0.0, 1.0), stamp_s=0.0) -> PoseStamped:
    msg = PoseStamped()
    msg.header.frame_id, msg.header.stamp = frame_id, _stamp(stamp_s)
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = xyz
    o = msg.pose.orientation
    o.x, o.y, o.z, o.w = xyzw
    return msg


@pytest.fixture(params=['stand-in', 'tf2_ros'])
def tf2(request, monkeypatch):
    """Return tf2_ros: the stand-in, or the real one where it is installed."""
    if request.param == 'stand-in':
        return tf2_stand_in.install(monkeypatch)
    return pytest.importorskip('tf2_ros')


def _frames(tf2, *static) -> tuple[BaseFrames, object]:
    buffer = tf2.Buffer()
    for transform in static:
        buffer.set_transform_static(transform, 'test')
    return BaseFrames('base_link', tf2_ros=tf2, buffer=buffer), buffer


def _camera() -> TransformStamped:
    return _transform('camera_link', CAMERA_XYZ, CAMERA_XYZW)


def test_the_base_frame_and_an_empty_frame_need_no_tf_and_without_tf2_others_are_refused():
    frames = BaseFrames('base_link')
    assert target_from_point(_point(IN_BASE, 'base_link'), frames).position_m == IN_BASE
    assert target_from_point(_point(IN_BASE, ''), frames).position_m == IN_BASE
    with pytest.raises(TargetMessageError) as refused:
        target_from_point(_point(IN_BASE), frames)
    assert refused.value.cause is TargetCause.WRONG_FRAME
    assert str(refused.value) == ("target_point: frame_id 'camera_link' is not the arm's base "
                                  "frame 'base_link' (tf2_ros is not installed: send targets "
                                  "in 'base_link')")
    assert not frames.uses_tf and np.array_equal(frames.rotation_to_base('', _stamp(0)),
                                                 np.eye(3))


def test_a_point_a_pose_its_approach_and_a_vector_in_a_camera_frame_come_out_in_the_base(tf2):
    frames, _ = _frames(tf2, _camera())
    assert target_from_point(_point(IN_CAMERA), frames).position_m == pytest.approx(IN_BASE)
    pose = target_from_pose(_pose(IN_CAMERA), frames, use_orientation=True)
    assert pose.position_m == pytest.approx(IN_BASE)
    assert pose.approach == pytest.approx((0.0, 1.0, 0.0)), "the camera's x is the base's y"
    down = target_from_pose(_pose(IN_CAMERA, xyzw=(0.0, HALF, 0.0, HALF)), frames,
                            use_orientation=True)
    assert down.approach == pytest.approx((0.0, 0.0, -1.0))
    rotation = frames.rotation_to_base('camera_link', _stamp(0))
    assert rotation @ np.array([1.0, 2.0, 3.0]) == pytest.approx([-2.0, 1.0, 3.0])
    assert frames.rotation_to_base('base_link', _stamp(0)) is not None


def test_a_frame_two_transforms_away_is_composed(tf2):
    mount = _transform('camera_mount', (0.0, 0.0, 0.2))
    lens = _transform('camera_link', (0.1, 0.0, 0.0), CAMERA_XYZW, parent='camera_mount')
    frames, _ = _frames(tf2, mount, lens)
    assert target_from_point(_point(IN_CAMERA), frames).position_m == pytest.approx(IN_BASE)


def test_a_zero_stamp_takes_the_latest_transform_and_a_stamp_its_own(tf2):
    frames, buffer = _frames(tf2)
    for seconds, x in ((1.0, 0.1), (2.0, 0.2)):
        buffer.set_transform(_transform('camera_link', (x, 0.0, 0.0), stamp_s=seconds), 'test')
    origin = (0.0, 0.0, 0.0)
    assert target_from_point(_point(origin), frames).position_m == pytest.approx((0.2, 0, 0))
    assert target_from_point(_point(origin, stamp_s=1.0), frames).position_m == \
        pytest.approx((0.1, 0, 0))
    assert target_from_point(_point(origin, stamp_s=1.5), frames).position_m == \
        pytest.approx((0.15, 0, 0))
    with pytest.raises(TargetMessageError) as later:
        target_from_point(_point(origin, stamp_s=3.0), frames)
    assert later.value.cause is TargetCause.NOT_AT_STAMP
    text = str(later.value)
    assert text.startswith("target_point: tf has no transform from 'camera_link' to "
                           "'base_link' at the stamp 3.000000000 s (")
    assert 'extrapolation into the future' in text
    assert text.endswith('a zero stamp takes the latest transform')


def test_a_vector_takes_the_latest_rotation_where_tf_has_none_at_its_stamp(tf2):
    frames, buffer = _frames(tf2)
    for seconds, xyzw in ((1.0, (0.0, 0.0, 0.0, 1.0)), (2.0, CAMERA_XYZW)):
        buffer.set_transform(_transform('hand', (0.0, 0.0, 0.0), xyzw, stamp_s=seconds), 'test')
    quarter = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert np.allclose(frames.rotation_to_base('hand', _stamp(1.0)), np.eye(3))
    assert np.allclose(frames.rotation_to_base('hand', _stamp(2.5)), quarter)
    with pytest.raises(TargetMessageError) as unknown:
        frames.rotation_to_base('elbow_camera', _stamp(2.5))
    assert str(unknown.value).startswith("jog/twist: tf knows no frame 'elbow_camera'")


def test_an_unknown_frame_is_refused_naming_it_and_the_frames_tf_has(tf2):
    frames, buffer = _frames(tf2, _camera())
    with pytest.raises(TargetMessageError) as unknown:
        target_from_pose(_pose(IN_CAMERA, frame_id='map'), frames)
    assert unknown.value.cause is TargetCause.UNKNOWN_FRAME
    assert str(unknown.value) == ("target_pose: tf knows no frame 'map'; the frames tf has: "
                                  'camera_link, base_link')
    buffer.set_transform_static(_transform('odom', (1.0, 0.0, 0.0), parent='map'), 'test')
    with pytest.raises(TargetMessageError) as apart:
        target_from_point(_point(IN_CAMERA, frame_id='odom'), frames)
    assert str(apart.value) == ("target_point: tf has no chain of transforms from 'odom' to "
                                "'base_link' (they are in two unconnected trees); the frames "
                                'tf has: camera_link, base_link, odom, map')
    alone, _ = _frames(tf2, _transform('camera_link', CAMERA_XYZ, parent='world'))
    with pytest.raises(TargetMessageError) as no_base:
        target_from_point(_point(IN_CAMERA), alone)
    assert str(no_base.value) == ("target_point: tf knows no frame 'base_link' (the arm's base "
                                  'frame); the frames tf has: camera_link, world')
    empty, _ = _frames(tf2)
    with pytest.raises(TargetMessageError) as nothing:
        target_from_point(_point(IN_CAMERA), empty)
    assert str(nothing.value).endswith('tf has no frames (nothing heard on /tf or /tf_static)')
    with pytest.raises(TargetMessageError) as slash:
        target_from_point(_point(IN_CAMERA, frame_id='/camera_link'), frames)
    assert str(slash.value) == ("target_point: tf cannot transform '/camera_link' into "
                                "'base_link': Invalid argument \"/camera_link\" passed to "
                                'lookupTransform argument source_frame - in tf2 frame_ids '
                                "cannot start with a '/'")


def test_the_frames_named_and_a_long_frame_id_are_bounded(monkeypatch):
    tf2 = tf2_stand_in.install(monkeypatch)
    frames, _ = _frames(tf2, *(_transform(f'f{i}', (0.0, 0.0, 0.0)) for i in range(30)))
    with pytest.raises(TargetMessageError) as refused:
        target_from_point(_point(IN_CAMERA, frame_id='x' * 100_000), frames)
    text = str(refused.value)
    named = ', '.join(['f0', 'base_link', *(f'f{i}' for i in range(1, LISTED_FRAMES - 1))])
    assert len(text) < 500 and text.endswith(f'the frames tf has: {named} and '
                                             f'{31 - LISTED_FRAMES} more')
    assert "'" + 'x' * 64 + '... (100000 characters)' in text


def test_a_negative_stamp_and_a_point_leaving_the_floats_are_refused(monkeypatch):
    tf2 = tf2_stand_in.install(monkeypatch)
    eighth = (0.0, 0.0, math.sin(math.pi / 8), math.cos(math.pi / 8))     # 45 deg about z
    frames, _ = _frames(tf2, _camera(), _transform('tilted', (0.0, 0.0, 0.0), eighth))
    msg = _point(IN_CAMERA)
    msg.header.stamp.sec = -5
    with pytest.raises(TargetMessageError) as negative:
        target_from_point(msg, frames)
    assert 'stamp -5 s 0 ns is negative' in str(negative.value)
    with pytest.raises(TargetMessageError) as huge:
        target_from_point(_point((1.7e308, -1.7e308, 0.0), frame_id='tilted'), frames)
    assert huge.value.cause is TargetCause.NOT_FINITE
    assert str(huge.value).startswith('target_point: position (1.7e+308, -1.7e+308, 0.0) is '
                                      '(inf, ')
    assert str(huge.value).endswith(" in the arm's base frame 'base_link', not finite")


def test_path_poses_take_the_path_frame_or_their_own_each_looked_up_once(monkeypatch):
    tf2 = tf2_stand_in.install(monkeypatch)
    frames, buffer = _frames(tf2, _camera(), _transform('table', (0.0, 0.0, 0.1)))
    path = Path()
    path.header.frame_id = 'camera_link'
    path.poses = [_pose(IN_CAMERA, frame_id=''), _pose((0.15, 0.05, 0.02), frame_id='table'),
                  _pose(IN_CAMERA, frame_id='camera_link'), _pose(IN_CAMERA, frame_id='')]
    targets = targets_from_path(path, frames, wait_s=0.5)
    assert np.allclose([t.position_m for t in targets], [IN_BASE] * 4)
    assert [(lookup[1], lookup[3]) for lookup in buffer.lookups] == [
        ('camera_link', 500_000_000), ('table', 500_000_000), ('camera_link', 500_000_000)]
    path.poses.append(_pose(IN_CAMERA, frame_id='shelf'))
    with pytest.raises(TargetMessageError) as refused:
        targets_from_path(path, frames)
    assert str(refused.value).startswith("target_path.poses[4]: tf knows no frame 'shelf'")


def test_the_path_worker_waits_for_a_transform_the_executor_thread_does_not(monkeypatch):
    """The executor's thread feeds the listener: only the worker's lookups may wait."""
    from rclpy.serialization import serialize_message
    tf2 = tf2_stand_in.install(monkeypatch)
    frames, buffer = _frames(tf2, _camera())
    path = Path()
    path.header.frame_id = 'camera_link'
    path.poses = [_pose(IN_CAMERA, frame_id='')]
    start = tuple(float(v) for v in ARM.fk(list(ARM.home))[-1])
    prepared = prepare_path(PathRequest(serialize_message(path), 'target_path', frames, start,
                                        0.05, ARM))
    assert prepared.follower.position_at(prepared.follower.duration_s) == pytest.approx(IN_BASE)
    target_from_point(_point(IN_CAMERA), frames)
    assert [lookup[3] for lookup in buffer.lookups] == [round(TF_WAIT_S * 1e9), 0]


def test_interactive_feedback_in_another_frame_is_transformed(monkeypatch):
    tf2 = tf2_stand_in.install(monkeypatch)
    frames, _ = _frames(tf2, _camera())
    feedback = InteractiveMarkerFeedback(event_type=InteractiveMarkerFeedback.POSE_UPDATE)
    feedback.header.frame_id = 'camera_link'
    feedback.pose.position.x, feedback.pose.position.y, feedback.pose.position.z = IN_CAMERA
    assert target_from_feedback(feedback, frames).position_m == pytest.approx(IN_BASE)


# -- fabrik_ik ---------------------------------------------------------------------------------

@pytest.fixture
def stand_in(monkeypatch):
    return tf2_stand_in.install(monkeypatch)


class _Rig:
    def __init__(self, ros, arm_args, extra=()):
        self.ros = ros
        self.ik = ros.add(FabrikIkNode(context=ros.context, cli_args=[*arm_args, *extra]))
        self.probe = ros.probe()
        self.commands = []
        self.probe.create_subscription(JointState, 'joint_commands', self.commands.append, 10)
        self.publishers = {}

    def publish(self, topic, msg):
        if topic not in self.publishers:
            publisher = self.probe.create_publisher(type(msg), topic, 10)
            self.ros.spin_until(lambda: publisher.get_subscription_count() > 0, timeout_s=10.0,
                                what=f'fabrik_ik to subscribe {topic}')
            self.publishers[topic] = publisher
        self.publishers[topic].publish(msg)

    def refused(self, count):
        self.ros.spin_until(lambda: self.ik._stats.rejected >= count, timeout_s=10.0,
                            what=f'{count} refused targets')

    def tip_after(self, count):
        self.ros.spin_until(lambda: len(self.commands) >= count, timeout_s=10.0,
                            what=f'{count} joint_commands')
        return ARM.fk(list(self.commands[count - 1].position))[-1]


@pytest.mark.ros
@pytest.mark.timeout(60)
def test_fabrik_ik_moves_to_a_point_a_pose_and_a_path_given_in_a_camera_frame(
        ros, arm_args, stand_in):
    rig = _Rig(ros, arm_args, ['-p', 'path_speed_m_s:=2.0'])
    [buffer], [listener] = tf2_stand_in.BUFFERS, tf2_stand_in.LISTENERS
    assert listener.buffer is buffer and listener.node is rig.ik
    buffer.set_transform_static(_camera(), 'test')      # as the listener does for /tf_static
    rig.publish('target_point', _point(IN_CAMERA))
    assert np.linalg.norm(rig.tip_after(1) - IN_BASE) < TOOL_MM
    other = (0.0, -0.02, -0.1)                # (0.12, 0.0, 0.1) in the base frame
    rig.publish('target_pose', _pose(other))
    assert np.linalg.norm(rig.tip_after(2) - (0.12, 0.0, 0.1)) < TOOL_MM
    path = Path()
    path.header.frame_id = 'camera_link'
    path.poses = [_pose(other, frame_id=''), _pose(IN_CAMERA, frame_id='')]
    rig.publish('target_path', path)
    ros.spin_until(lambda: len(rig.commands) > 2 and np.linalg.norm(
        ARM.fk(list(rig.commands[-1].position))[-1] - IN_BASE) < TOOL_MM, timeout_s=20.0,
        what='the path to end at its last pose, in the base frame')
    ros.destroy(rig.ik)
    assert listener.unregistered


@pytest.mark.ros
@pytest.mark.timeout(60)
def test_fabrik_ik_refuses_an_unknown_frame_naming_the_frames_and_takes_the_latest_transform(
        ros, arm_args, stand_in, capfd):
    rig = _Rig(ros, arm_args)
    [buffer] = tf2_stand_in.BUFFERS
    for seconds, x in ((1.0, -0.5), (2.0, 0.0)):
        buffer.set_transform(_transform('camera_link', (x, 0.0, 0.2), CAMERA_XYZW,
                                        stamp_s=seconds), 'test')
    rig.publish('target_point', _point(IN_CAMERA, frame_id='nowhere'))
    rig.refused(1)          # one at a time: targets are latest-wins
    rig.publish('target_point', _point(IN_CAMERA, stamp_s=9.0))
    rig.refused(2)
    rig.publish('target_point', _point(IN_CAMERA))         # zero stamp: the latest, x = 0.0
    assert np.linalg.norm(rig.tip_after(1) - (0.05, 0.05, 0.12)) < TOOL_MM
    assert len(rig.commands) == 1
    err = capfd.readouterr().err
    assert ("target_point: tf knows no frame 'nowhere'; the frames tf has: "
            'camera_link, base_link') in err
    assert "from 'camera_link' to 'base_link' at the stamp 9.000000000 s" in err


@pytest.mark.ros
@pytest.mark.timeout(60)
def test_without_tf2_ros_a_target_in_another_frame_is_refused_as_before(
        ros, arm_args, monkeypatch, capfd):
    monkeypatch.setitem(sys.modules, 'tf2_ros', None)      # import tf2_ros raises ImportError
    rig = _Rig(ros, arm_args)
    rig.publish('target_point', _point(IN_BASE, frame_id='camera_link'))
    rig.refused(1)
    rig.publish('target_point', _point(IN_BASE, frame_id='base_link'))
    assert np.linalg.norm(rig.tip_after(1) - IN_BASE) < TOOL_MM
    assert len(rig.commands) == 1
    err = capfd.readouterr().err
    assert "tf2_ros is not installed: targets are taken in the arm's base frame 'base_link'" \
        in err
    assert ("target_point: frame_id 'camera_link' is not the arm's base frame "
            "'base_link' (tf2_ros is not installed: send targets in 'base_link')") in err


@pytest.mark.ros
@pytest.mark.timeout(60)
def test_a_target_stamped_after_the_newest_transform_waits_for_it_and_a_newer_one_replaces_it(
        ros, arm_args, stand_in, monkeypatch):
    """As RViz stamps its clicks "now": tf's transform for that time comes a little later."""
    monkeypatch.setattr(frames_module, 'TF_WAIT_S', 30.0)     # the test, not the clock, decides
    rig = _Rig(ros, arm_args)
    [buffer] = tf2_stand_in.BUFFERS
    for seconds, x in ((1.0, 0.0), (2.0, 0.0)):
        buffer.set_transform(_transform('camera_link', (x, 0.0, 0.2), CAMERA_XYZW,
                                        stamp_s=seconds), 'test')
    rig.publish('target_point', _point(IN_CAMERA, stamp_s=3.0))
    ros.spin_until(lambda: rig.ik._tf_wait.waiting, timeout_s=10.0,
                   what='the target to wait for its transform')
    buffer.set_transform(_transform('camera_link', (0.2, 0.0, 0.2), CAMERA_XYZW, stamp_s=4.0),
                         'test')
    # At 3 s the camera is half way from x = 0.0 (2 s) to 0.2 (4 s): where _camera() puts it.
    assert np.linalg.norm(rig.tip_after(1) - IN_BASE) < TOOL_MM
    assert not rig.ik._tf_wait.waiting and rig.ik._stats.rejected == 0

    rig.publish('target_point', _point(IN_CAMERA, stamp_s=5.0))
    ros.spin_until(lambda: rig.ik._tf_wait.waiting, timeout_s=10.0,
                   what='the second target to wait for its transform')
    rig.publish('target_point', _point((0.12, 0.0, 0.1), frame_id='base_link'))
    assert np.linalg.norm(rig.tip_after(2) - (0.12, 0.0, 0.1)) < TOOL_MM
    assert not rig.ik._tf_wait.waiting, 'the newer target replaced the waiting one'


@pytest.mark.ros
@pytest.mark.timeout(60)
def test_fabrik_ik_with_the_real_tf2_ros_moves_to_a_point_in_a_camera_frame(ros, arm_args):
    """Where tf2_ros is installed: /tf_static from a StaticTransformBroadcaster, as a user's."""
    tf2_ros = pytest.importorskip('tf2_ros')
    rig = _Rig(ros, arm_args)
    broadcaster = tf2_ros.StaticTransformBroadcaster(rig.probe)
    broadcaster.sendTransform(_camera())
    rig.publish('target_point', _point(IN_CAMERA, frame_id='kitchen_camera'))
    rig.refused(1)
    ros.spin_until(lambda: len(rig.commands) >= 1, timeout_s=10.0, what='a command',
                   during=lambda: rig.publish('target_point', _point(IN_CAMERA)))
    assert np.linalg.norm(ARM.fk(list(rig.commands[-1].position))[-1] - IN_BASE) < TOOL_MM
