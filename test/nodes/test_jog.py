"""fabrik_ik's jog: twists on jog/twist and JointJog on jog/joints, read back as joint_commands."""

import math
import time

from control_msgs.msg import JointJog
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PoseStamped, TransformStamped, TwistStamped
from nav_msgs.msg import Path
import numpy as np
import pytest
from rclpy.exceptions import ParameterException
from rclpy.time import Duration
from sensor_msgs.msg import JointState

from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes.ik_node import FabrikIkNode
from test.nodes import tf2_stand_in
from test.nodes.conftest import REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

ARM_4DOF = REPO_ROOT / 'config' / 'arm_4dof.yaml'
ARM_6SERVO = REPO_ROOT / 'config' / 'arm_6servo.yaml'
RATE_HZ = 50.0
DT_S = 1.0 / RATE_HZ
SPEED_RAD_S = 1.5          # the default max_speed_rad_s
WARN_EVERY_S = 2.0         # jog_intake's throttle period


class JogRig:
    """fabrik_ik alone and a probe that streams jog commands and records joint_commands."""

    def __init__(self, ros, config, *, extra=()):
        self.ros = ros
        self.arm = load_arm(config)
        args = ['--ros-args', '--params-file', str(config), *ros.ros_args,
                '-p', 'interactive_target:=false', '-p', 'diagnostics_period_s:=0.1', *extra]
        self.ik = ros.add(FabrikIkNode(context=ros.context, cli_args=args))
        self.probe = ros.probe()
        self.commands: list[JointState] = []
        self.probe.create_subscription(JointState, 'joint_commands', self.commands.append, 100)
        self.diagnostics = 0
        self.publishers = {}

    def publisher(self, topic, msg_type):
        if topic not in self.publishers:
            publisher = self.probe.create_publisher(msg_type, topic, 10)
            self.ros.spin_until(lambda: publisher.get_subscription_count() > 0, timeout_s=10.0,
                                what=f'fabrik_ik to subscribe {topic}')
            self.publishers[topic] = publisher
        return self.publishers[topic]

    def now(self):
        return self.probe.get_clock().now()

    def twist(self, linear=(0.0, 0.0, 0.0), angular=(0.0, 0.0, 0.0), *, frame='base_link',
              stamp=None) -> TwistStamped:
        msg = TwistStamped()
        msg.header.frame_id = frame
        msg.header.stamp = (self.now() if stamp is None else stamp).to_msg()
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = linear
        msg.twist.angular.x, msg.twist.angular.y, msg.twist.angular.z = angular
        return msg

    def stream(self, topic, msg_type, make, ticks):
        """Publish ``make()`` at every spin step until ``ticks`` more joint_commands came."""
        publisher = self.publisher(topic, msg_type)
        target = len(self.commands) + ticks
        self.ros.spin_until(lambda: len(self.commands) >= target, timeout_s=30.0,
                            what=f'{ticks} jog ticks', during=lambda: publisher.publish(make()))

    def go_to(self, point):
        msg = PointStamped()
        msg.header.frame_id = 'base_link'
        msg.point.x, msg.point.y, msg.point.z = point
        count = len(self.commands)
        self.publisher('target_point', PointStamped).publish(msg)
        self.ros.spin_until(lambda: len(self.commands) > count, timeout_s=10.0,
                            what='the target solved')

    def tool(self, command) -> np.ndarray:
        return self.arm.fk(list(command.position))[-1]

    def wait_until_stopped(self, timeout_s=10.0):
        jog = self.ik._jog
        self.ros.spin_until(lambda: not jog.active, timeout_s=timeout_s, what='the jog to stop')


def _stopped_stays_stopped(rig):
    """After the jog stopped, the node sends no command while it publishes three diagnostics.

    Read on the node's side: a command sent just before the stop may still be on its way to
    the probe.
    """
    last_s = rig.ik._last_command_s
    heard = []
    rig.probe.create_subscription(DiagnosticArray, '/diagnostics', heard.append, 10)
    rig.ros.spin_until(lambda: len(heard) >= 3, timeout_s=10.0, what='three diagnostics')
    assert rig.ik._last_command_s == last_s


def _steps(rig, commands) -> np.ndarray:
    positions = np.array([list(c.position) for c in commands])
    return np.abs(np.diff(positions, axis=0))


def _log_lines(capfd, text) -> list[str]:
    return [line for line in capfd.readouterr().err.splitlines() if text in line]


@pytest.mark.parametrize('config, start, velocity', [
    (ARM_6SERVO, None, (0.0, 0.03, 0.04)),
    (ARM_4DOF, (0.15, 0.05, 0.12), (0.04, 0.0, -0.03)),
])
def test_a_base_frame_twist_moves_the_tool_its_distance_and_direction_then_times_out(
        ros, config, start, velocity):
    rig = JogRig(ros, config)
    if start is not None:
        rig.go_to(start)
    before = len(rig.commands)
    origin = rig.tool(rig.commands[-1]) if rig.commands else rig.arm.fk(rig.arm.home)[-1]
    ticks = 20
    rig.stream('jog/twist', TwistStamped, lambda: rig.twist(velocity), ticks)
    rig.wait_until_stopped()        # the stream ended: within jog.timeout_s
    jogged = rig.commands[before:]
    moved = rig.tool(jogged[-1]) - origin
    asked = np.array(velocity) * DT_S * len(jogged)     # each tick integrates one period
    assert np.linalg.norm(moved - asked) < 1e-3 * np.linalg.norm(asked) + 2e-4, (moved, asked)
    assert all(rig.arm.within_limits(c.position) for c in jogged)
    _stopped_stays_stopped(rig)


def test_a_twist_in_a_tf_frame_moves_the_tool_along_its_direction_in_the_base_frame(
        ros, monkeypatch):
    tf2_stand_in.install(monkeypatch)
    rig = JogRig(ros, ARM_6SERVO)
    camera = TransformStamped()         # a quarter turn about z: camera x is base y
    camera.header.frame_id, camera.child_frame_id = 'base_link', 'camera_link'
    camera.transform.translation.x, camera.transform.translation.z = 0.1, 0.2
    camera.transform.rotation.z = camera.transform.rotation.w = math.sqrt(0.5)
    [buffer] = tf2_stand_in.BUFFERS
    buffer.set_transform_static(camera, 'test')
    origin = rig.arm.fk(rig.arm.home)[-1]
    rig.stream('jog/twist', TwistStamped,
               lambda: rig.twist((0.03, 0.0, -0.02), frame='camera_link'), 20)
    rig.wait_until_stopped()
    moved = rig.tool(rig.commands[-1]) - origin
    asked = np.array([0.0, 0.03, -0.02]) * DT_S * len(rig.commands)
    assert np.linalg.norm(moved - asked) < 1e-3 * np.linalg.norm(asked) + 2e-4, (moved, asked)


def test_a_tool_frame_twist_moves_along_the_tool_axis_and_turns_the_roll(ros):
    rig = JogRig(ros, ARM_6SERVO)
    rig.go_to((0.15, 0.1, 0.15))
    start = rig.commands[-1]
    axis = rig.arm.tool_axis(list(start.position))
    assert abs(axis[1]) > 0.2 and abs(axis[2]) > 0.05, 'the tool frame is not the base frame'
    before = len(rig.commands)
    rig.stream('jog/twist', TwistStamped,
               lambda: rig.twist((0.03, 0.0, 0.0), (0.5, 0.0, 0.0), frame='tool_link'), 20)
    rig.wait_until_stopped()
    jogged = rig.commands[before:]
    moved = rig.tool(jogged[-1]) - rig.tool(start)
    assert np.linalg.norm(moved - axis * 0.03 * DT_S * len(jogged)) < 2e-4, (moved, axis)
    roll = rig.arm.joint_names.index('wrist_roll')
    turned = jogged[-1].position[roll] - start.position[roll]
    assert turned == pytest.approx(0.5 * DT_S * len(jogged), rel=1e-6)
    assert np.allclose(rig.arm.tool_axis(list(jogged[-1].position)), axis, atol=1e-3)


def test_at_the_workspace_edge_the_tool_slides_within_the_speed_limits_and_says_so_once(
        ros, capfd):
    rig = JogRig(ros, ARM_4DOF, extra=['-p', 'jog.max_linear_m_s:=0.5'])
    rig.go_to((0.22, 0.0, 0.12))
    before = len(rig.commands) - 1
    started = time.monotonic()
    rig.stream('jog/twist', TwistStamped, lambda: rig.twist((0.5, 0.0, 0.0)), 100)
    rig.wait_until_stopped()
    elapsed_s = time.monotonic() - started
    jogged = rig.commands[before:]
    steps = _steps(rig, jogged)
    assert steps.max() <= SPEED_RAD_S * DT_S + 1e-9, 'a joint exceeded its speed limit'
    tools = np.array([rig.tool(c) for c in jogged])
    reach = np.linalg.norm(tools - [0.0, 0.0, rig.arm.shoulder_height_m], axis=1)
    longest = sum(link.length_m for link in rig.arm.links)
    assert tools[-1][0] > 0.2 and reach.max() <= longest + 1e-6
    assert np.linalg.norm(np.diff(tools, axis=0), axis=1).max() <= 0.5 * DT_S + 1e-6, 'a jump'
    lines = _log_lines(capfd, 'edge of its reach')
    assert lines and '/jog/twist' in lines[0]
    # Once per throttle period (a loaded machine stretches the run over several).
    assert len(lines) <= math.ceil(elapsed_s / WARN_EVERY_S) + 1, (len(lines), elapsed_s)


def test_a_target_ends_a_jog(ros):
    rig = JogRig(ros, ARM_6SERVO, extra=['-p', 'jog.timeout_s:=5.0'])
    rig.stream('jog/twist', TwistStamped, lambda: rig.twist((0.0, 0.0, 0.02)), 3)
    assert rig.ik._jog.active
    target = (0.15, 0.0, 0.15)
    count = len(rig.commands)
    rig.go_to(target)
    # The command go_to saw may be a jog tick still on its way: wait for the target's own.
    rig.ros.spin_until(lambda: any(np.linalg.norm(rig.tool(c) - target) < 1e-3
                                   for c in rig.commands[count:]),
                       timeout_s=10.0, what='the target solved')
    assert not rig.ik._jog.active
    _stopped_stays_stopped(rig)     # no tick after it (jog.timeout_s is 5 s)


def test_a_jog_ends_a_path_being_followed(ros):
    rig = JogRig(ros, ARM_6SERVO, extra=['-p', 'path_speed_m_s:=0.01'])
    path = Path()
    path.header.frame_id = 'base_link'
    for xyz in ((0.2, 0.0, 0.2), (0.15, 0.1, 0.1)):
        pose = PoseStamped()
        pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = xyz
        path.poses.append(pose)
    rig.publisher('target_path', Path).publish(path)
    rig.ros.spin_until(lambda: len(rig.commands) >= 3, timeout_s=10.0, what='the path followed')
    assert rig.ik._path_active
    before = len(rig.commands)
    rig.stream('jog/twist', TwistStamped, lambda: rig.twist((0.0, 0.0, 0.03)), 5)
    assert not rig.ik._path_active
    rig.wait_until_stopped()
    jogged = rig.commands[before:]
    assert rig.tool(jogged[-1])[2] > rig.tool(jogged[0])[2], 'the jog moves it up'


def test_a_zero_twist_stops_the_jog_at_once_as_teleop_twist_joy_sends_on_release(ros):
    rig = JogRig(ros, ARM_6SERVO, extra=['-p', 'jog.timeout_s:=10.0'])
    rig.stream('jog/twist', TwistStamped, lambda: rig.twist((0.0, 0.0, 0.03)), 3)
    assert rig.ik._jog.active
    rig.publisher('jog/twist', TwistStamped).publish(rig.twist())
    rig.wait_until_stopped(timeout_s=5.0)       # not the 10 s jog.timeout_s
    _stopped_stays_stopped(rig)


def test_speed_limits_of_the_wrong_size_stop_the_node_naming_the_joints(ros):
    args = ['--ros-args', '--params-file', str(ARM_4DOF), *ros.ros_args,
            '-p', 'interactive_target:=false', '-p', 'max_speed_rad_s:=[1.0, 1.0]']
    with pytest.raises(ParameterException, match=r'must hold 4 values \(one per joint: '
                                                 r'base_yaw, shoulder, elbow, wrist\)'):
        FabrikIkNode(context=ros.context, cli_args=args)


def _negative_stamp(msg):
    msg.header.stamp.sec = -5
    return msg


def _joint_jog(names, velocities, displacements=()) -> JointJog:
    msg = JointJog()
    msg.joint_names = list(names)
    msg.velocities = [float(v) for v in velocities]
    msg.displacements = [float(v) for v in displacements]
    return msg


def test_joint_jog_moves_the_named_joints_at_most_at_their_speed_limit(ros):
    rig = JogRig(ros, ARM_6SERVO)
    before = len(rig.commands)
    rig.stream('jog/joints', JointJog, lambda: _joint_jog(['elbow', 'wrist_roll'], [0.5, -6.0]),
               10)
    rig.wait_until_stopped()
    jogged = rig.commands[before:]
    names = rig.arm.joint_names
    home = rig.arm.home
    last = np.array(jogged[-1].position)
    # wrist_roll asked 4x its limit: both scaled by 1/4, the elbow at 0.125 rad/s
    scale = SPEED_RAD_S / 6.0
    elbow, roll = names.index('elbow'), names.index('wrist_roll')
    assert last[elbow] - home[elbow] == pytest.approx(0.5 * scale * DT_S * len(jogged))
    assert last[roll] - home[roll] == pytest.approx(-SPEED_RAD_S * DT_S * len(jogged))
    others = [i for i in range(len(names)) if i not in (elbow, roll)]
    assert np.allclose(last[others], home[others])


@pytest.mark.parametrize('topic, make, said', [
    ('jog/twist', lambda rig: rig.twist((math.nan, 0.0, 0.0)), 'is not finite'),
    ('jog/twist', lambda rig: rig.twist((0.0, 1e9, 0.0)), 'exceeds 1000'),
    ('jog/twist', lambda rig: rig.twist((0.0, 0.0, 0.1), stamp=rig.now() - Duration(seconds=1)),
     's old, older than jog.timeout_s'),
    ('jog/twist', lambda rig: rig.twist((0.0, 0.0, 0.1), stamp=rig.now() + Duration(seconds=5)),
     'in the future'),
    ('jog/twist', lambda rig: _negative_stamp(rig.twist((0.0, 0.0, 0.1))), 'is not a time'),
    ('jog/twist', lambda rig: rig.twist((0.0, 0.0, 0.1), frame='camera'),
     "frame_id 'camera' is not the arm's base frame"),
    ('jog/joints', lambda rig: _joint_jog(['elbo'], [0.1]), "'elbo': did you mean 'elbow'?"),
    ('jog/joints', lambda rig: _joint_jog(['elbow', 'shoulder'], [0.1]),
     '2 joint_names but 1 velocities'),
    ('jog/joints', lambda rig: _joint_jog(['elbow'], [math.inf]), 'is not finite'),
    ('jog/joints', lambda rig: _joint_jog(['elbow'], [], [0.1]), 'takes velocities'),
])
def test_bad_jog_commands_are_dropped_with_a_warning_naming_the_topic_and_nothing_moves(
        ros, capfd, topic, make, said):
    rig = JogRig(ros, ARM_6SERVO)
    msg_type = TwistStamped if topic == 'jog/twist' else JointJog
    publisher = rig.publisher(topic, msg_type)

    def warned():
        found = _log_lines(capfd, said)
        warned.lines += found
        return bool(warned.lines)
    warned.lines = []
    rig.ros.spin_until(warned, timeout_s=10.0, what=f'a warning saying {said!r}',
                       during=lambda: publisher.publish(make(rig)))
    assert f'/{topic}' in warned.lines[0] and 'jog dropped' in warned.lines[0]
    assert not rig.ik._jog.active
    assert rig.commands == []
