"""Every node survives every message field at every extreme, under every option set.

Each node runs under every combination of its boolean and choice parameters and gets every
numeric field of every message it subscribes to at every extreme of the field's type. The
messages go straight to each subscription's callback, as the executor would hand them
over, so thousands of them take seconds; timers then run on the state they left. After all of
them a good target (or command) must still be served, no command may leave the joint limits,
and no pulse may leave the servo calibration.
"""

import itertools
import math

from builtin_interfaces.msg import Duration
from control_msgs.msg import JointJog
from geometry_msgs.msg import PointStamped, PoseStamped, TwistStamped
from nav_msgs.msg import Path
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.nodes.sim_arm_node import SimArmNode
from fabrik_ros.servo_io import PWM_PROTOCOLS
from test.reliability.message_fields import mutations
from test.reliability.results import record
from test.reliability.rig import joint_state
from test.reliability.scenarios import pulses_outside_calibration

pytestmark = [pytest.mark.ros]

REACHABLE = (0.15, 0.05, 0.12)
IK_OPTIONS = list(itertools.product(['false', 'true'], ['false', 'true'], ['false', 'true'],
                                    ['any', 'up', 'down']))
DRIVER_OPTIONS = list(itertools.product(PWM_PROTOCOLS, ['hold', 'detach'],
                                        ['hold', 'detach', 'home']))


def _baseline(msg_type, arm):
    """Return a good message of ``msg_type`` with every array the node reads filled."""
    if msg_type is JointState:
        zeros = [0.0] * len(arm.joint_names)
        return JointState(name=list(arm.joint_names), position=list(arm.home),
                          velocity=zeros, effort=list(zeros))
    if msg_type is JointTrajectory:       # a trajectory that stays home for a second
        zeros = [0.0] * len(arm.joint_names)
        return JointTrajectory(joint_names=list(arm.joint_names), points=[JointTrajectoryPoint(
            positions=list(arm.home), velocities=zeros, accelerations=list(zeros),
            time_from_start=Duration(sec=1))])
    if msg_type is TwistStamped:          # a slow jog in the base frame, stamped now (zero)
        twist = TwistStamped()
        twist.header.frame_id = arm.base_frame
        twist.twist.linear.z, twist.twist.angular.y = 0.01, 0.1
        return twist
    if msg_type is JointJog:
        return JointJog(joint_names=list(arm.joint_names),
                        velocities=[0.1] * len(arm.joint_names))
    pose = PoseStamped()
    pose.header.frame_id = arm.base_frame
    pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = REACHABLE
    pose.pose.orientation.w = 1.0
    if msg_type is PoseStamped:
        return pose
    if msg_type is Path:
        return Path(header=pose.header, poses=[pose])
    point = PointStamped(header=pose.header)
    point.point.x, point.point.y, point.point.z = REACHABLE
    return point


def _deliver(subscription, msg) -> None:
    """Hand ``msg`` to the subscription's callback as rclpy would: serialized if it is raw.

    fabrik_ik takes target_point, /clicked_point and target_path raw (as bytes).
    """
    subscription.callback(serialize_message(msg) if subscription.raw else msg)


def _feed_every_extreme(ros, node, arm) -> int:
    """Hand every mutation of every subscribed message to its callback; return the count."""
    count = 0
    for subscription in list(node.subscriptions):
        for _, msg in mutations(_baseline(subscription.msg_type, arm)):
            _deliver(subscription, msg)
            count += 1
    for _ in range(10):   # the timers (path steps, control ticks) run on what was left
        ros.executor.spin_once(timeout_sec=0.01)
    return count


def _outside_limits(arm, commands) -> list[tuple[float, ...]]:
    return [c for c in commands if not (all(math.isfinite(a) for a in c)
                                        and arm.within_limits(list(c)))]


@pytest.mark.timeout(170)
def test_fabrik_ik_survives_every_field_extreme_under_every_option(ros, config):
    arm = load_arm(config)
    tried = 0
    for use_orientation, follow_rviz, interactive, bend in IK_OPTIONS:
        commands = []
        node = ros.add(FabrikIkNode(
            context=ros.context, command_sink=commands.append,
            cli_args=['--ros-args', '--params-file', str(config), *ros.ros_args,
                      '-p', f'use_pose_orientation:={use_orientation}',
                      '-p', f'follow_rviz_tools:={follow_rviz}',
                      '-p', f'interactive_target:={interactive}', '-p', f'solver.bend:={bend}']))
        tried += _feed_every_extreme(ros, node, arm)
        assert _outside_limits(arm, commands) == []
        target = [s for s in node.subscriptions if s.msg_type is PointStamped][0]
        _deliver(target, _baseline(PointStamped, arm))
        tip = arm.fk(list(commands[-1]))[-1]
        assert math.dist(tip, REACHABLE) < 1e-3, 'a good target after the bad ones is solved'
        ros.destroy(node)
    record('every option: fabrik_ik', {'option sets': len(IK_OPTIONS), 'messages': tried})


@pytest.mark.timeout(170)
def test_sim_arm_keeps_every_joint_state_within_the_limits_under_every_field_extreme(
        ros, config):
    """After each mutation, sim_arm slews until it rests: no joint_states leaves the limits.

    Fast joints (100 rad/s, 200 Hz: 0.5 rad a step) reach any clamped target within a few
    steps, and an unclamped one (1e308 rad) within one step outside the limits.
    """
    arm = load_arm(config)
    node = ros.add(SimArmNode(context=ros.context, cli_args=[
        '--ros-args', '--params-file', str(config), *ros.ros_args,
        '-p', 'servo_speed_rad_s:=100.0', '-p', 'rate_hz:=200.0']))
    states: list[JointState] = []
    probe = ros.probe()
    probe.create_subscription(JointState, 'joint_states', states.append, 100)
    ros.spin_until(lambda: states, timeout_s=10.0, what='the first joint_states')
    commands = next(s for s in node.subscriptions if s.topic_name.endswith('/joint_commands'))
    tried = 0
    for description, msg in mutations(_baseline(JointState, arm)):
        since_ns = node.get_clock().now().nanoseconds
        commands.callback(msg)
        assert _outside_limits(arm, _rest(ros, arm, states, since_ns, description)) == [], \
            description
        tried += 1
    record('every option: sim_arm', {'messages': tried})


def _rest(ros, arm, states: list[JointState], since_ns: int,
          description: str) -> list[tuple[float, ...]]:
    """Spin until the states stamped from ``since_ns`` on rest or leave the limits; return them."""
    def positions() -> list[tuple[float, ...]]:
        return [tuple(s.position) for s in states
                if s.header.stamp.sec * 1_000_000_000 + s.header.stamp.nanosec >= since_ns]

    ros.spin_until(lambda: _outside_limits(arm, positions()) or _rests(positions()),
                   timeout_s=10.0, what=f'sim_arm to rest after {description}')
    return positions()


def _rests(positions: list[tuple[float, ...]]) -> bool:
    """Return True once two joint_states in a row are equal."""
    return any(a == b for a, b in zip(positions, positions[1:], strict=False))


@pytest.mark.timeout(170)
def test_servo_driver_survives_every_field_extreme_under_every_option(make_rig):
    tried = 0
    for protocol, watchdog, on_shutdown in DRIVER_OPTIONS:
        rig = make_rig(protocol, extra=('-p', f'board_timeout_action:={watchdog}',
                                        '-p', f'on_shutdown:={on_shutdown}'))
        rig.wait_board_at(rig.arm.home, 'the driver to home the arm')
        tried += _feed_every_extreme(rig.ros, rig.driver, rig.arm)
        good = tuple(h + 0.1 for h in rig.arm.home)
        rig.commands.publish(joint_state(rig.arm.joint_names, good))
        rig.wait_board_at(good, 'a good command after the bad ones')
        assert pulses_outside_calibration(rig) == []
        rig.stop_driver()
        rig.board.stop()
    record('every option: servo_driver', {'option sets': len(DRIVER_OPTIONS),
                                         'messages': tried})
