"""servo_driver under PickNik's topic_based_ros2_control, as its hardware interface talks.

Facts read off topic_based_ros2_control 0.3.0 (src/topic_based_system.cpp):
- its command publisher (``joint_commands_topic``) has ``rclcpp::QoS(1)``: keep last 1,
  reliable, volatile; each ``write()`` cycle it publishes one JointState naming every joint of
  the ``<ros2_control>`` block, positions only for position command interfaces, stamped now,
  whenever the commands differ from the states read by more than
  ``trigger_joint_command_threshold`` (1e-5, summed over the joints);
- its state subscription (``joint_states_topic``) has ``rclcpp::SensorDataQoS()``: keep last 5,
  best effort, volatile; ``read()`` takes the latest message's positions by joint name, and
  its velocities and efforts by the same index where those arrays are not empty.

Here real rclpy endpoints with exactly those QoS profiles, driven the way ``read()`` /
``write()`` drive them, run against a real servo_driver on a simulated board and bus.
"""

import math
import time

import pytest
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    qos_profile_sensor_data,
    QoSProfile,
    ReliabilityPolicy,
)
from sensor_msgs.msg import JointState

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.servo_io import Protocol
from fabrik_ros.tools.moveit_config_robot import SERVO_DRIVER_MAX_SPEED_RAD_S
from test.nodes.conftest import REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(90)]

# topic_based_system.cpp: rclcpp::QoS(1) for commands, rclcpp::SensorDataQoS() for states.
COMMAND_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
STATE_QOS = qos_profile_sensor_data
TRIGGER_THRESHOLD = 1e-5
WRITE_PERIOD_S = 0.01       # a controller_manager update_rate of 100 Hz
ARRIVED_RAD = 0.01
RIGS = [(Protocol.NATIVE, 'arm_6servo.yaml'), (Protocol.FEETECH, 'so101.yaml')]


class TopicBasedSystem:
    """The hardware interface's two endpoints and its read/write rule, in a probe node."""

    def __init__(self, ros, joints):
        self.ros, self.joints = ros, list(joints)
        self.node = ros.probe('topic_based_ros2_control')
        self.publisher = self.node.create_publisher(JointState, 'joint_commands', COMMAND_QOS)
        self.states: list[JointState] = []
        self.node.create_subscription(JointState, 'joint_states', self.states.append,
                                      STATE_QOS)
        self.commands = [0.0] * len(self.joints)
        self.sent = 0
        self._next_write = 0.0

    def read(self) -> list[float]:
        """Return the positions of the latest state, by joint name (read())."""
        latest = self.states[-1]
        by_name = dict(zip(latest.name, latest.position, strict=True))
        return [by_name[name] for name in self.joints]

    def write(self) -> None:
        """Publish every joint's command while the states differ from it (write())."""
        now = time.monotonic()
        if not self.states or now < self._next_write:
            return
        self._next_write = now + WRITE_PERIOD_S
        difference = sum(abs(s - c) for s, c in zip(self.read(), self.commands, strict=True))
        if difference <= TRIGGER_THRESHOLD:
            return
        message = JointState(name=self.joints, position=list(self.commands))
        message.header.stamp = self.node.get_clock().now().to_msg()
        self.publisher.publish(message)
        self.sent += 1

    def reached(self) -> bool:
        return bool(self.states) and all(
            abs(s - c) <= ARRIVED_RAD for s, c in zip(self.read(), self.commands, strict=True))


@pytest.fixture
def rig(ros, tmp_path, request):
    protocol, config = request.param
    board = SimBoard(protocol, channels=6, link_path=str(tmp_path / 'ttyBOARD')).start()
    args = ['--ros-args', '--params-file', str(REPO_ROOT / 'config' / config), *ros.ros_args,
            '-p', f'port:={tmp_path / "ttyBOARD"}', '-p', f'protocol:={protocol.value}',
            '-p', 'home_move_time_s:=0.3']
    driver = ros.add(ServoDriverNode(context=ros.context, cli_args=args))
    arm = load_arm(REPO_ROOT / 'config' / config)
    yield driver, arm
    ros.destroy(driver)
    board.stop()


@pytest.mark.parametrize('rig', RIGS, indirect=True, ids=lambda r: r[0].value)
def test_the_drivers_endpoints_match_the_interfaces_qos(ros, rig):
    """A reliable publisher reaches a best-effort subscription; a reliable one, a reliable."""
    driver, arm = rig
    system = TopicBasedSystem(ros, arm.joint_names)
    ros.spin_until(lambda: system.publisher.get_subscription_count() == 1, timeout_s=10.0,
                   what='servo_driver to match the command publisher')
    ros.spin_until(lambda: system.states, timeout_s=10.0,
                   what='joint_states on the best-effort subscription')
    for info in system.node.get_subscriptions_info_by_topic(f'{ros.namespace}/joint_commands'):
        if info.node_name == 'servo_driver':
            assert info.qos_profile.reliability in (ReliabilityPolicy.RELIABLE,
                                                    ReliabilityPolicy.BEST_EFFORT)
            assert info.qos_profile.durability is DurabilityPolicy.VOLATILE
    state = system.states[-1]
    # read() indexes velocity and effort like position where they are not empty.
    assert len(state.velocity) in (0, len(state.name))
    assert len(state.effort) in (0, len(state.name))
    assert set(arm.joint_names) <= set(state.name)


@pytest.mark.parametrize('rig', RIGS, indirect=True, ids=lambda r: r[0].value)
def test_commands_written_as_the_interface_writes_them_move_the_arm_there(ros, rig):
    """Every joint (and the gripper) commanded at 100 Hz while away; the states follow."""
    driver, arm = rig
    gripper = [servo.name for servo in arm.servo_map.aux]
    system = TopicBasedSystem(ros, [*arm.joint_names, *gripper])
    ros.spin_until(lambda: system.states, timeout_s=10.0, what='joint_states')
    pose = [float(h) for h in arm.home]
    pose[0] += 0.3
    pose[-1] -= 0.2
    grip = [0.7 if arm.servo_map.unit == 'us' else 0.5 for _ in gripper]
    system.commands = [*pose, *grip]
    ros.spin_until(system.reached, timeout_s=20.0, during=system.write,
                   what=lambda: f'the arm at {system.commands}: states {system.read()}')
    assert system.sent > 0
    assert all(math.isfinite(p) for p in system.read())


@pytest.mark.parametrize('rig', RIGS[:1], indirect=True, ids=lambda r: r[0].value)
def test_moveit_configs_speed_default_is_servo_drivers(rig):
    """moveit_config_from_arm's joint_limits use servo_driver's default max_speed_rad_s."""
    driver, arm = rig
    assert list(driver.get_parameter('max_speed_rad_s').value) == [
        SERVO_DRIVER_MAX_SPEED_RAD_S] * len(arm.joints)
