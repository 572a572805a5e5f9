"""gripper_buttons with real Joy messages and a real GripperCommand action server.

A probe node serves ``gripper_controller/gripper_cmd`` (recording every goal) and publishes
Joy messages as joy_node would; a press sends one goal, a hold none, the other button the
other goal. Last, against sim_arm's own gripper action: a press opens its simulated gripper.
"""

import math

from control_msgs.action import GripperCommand
import pytest
from rcl_interfaces.msg import Log
from rclpy.action import ActionServer
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState, Joy

from fabrik_ros.driver.aux_axis import aux_axes
from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes.gripper_buttons_node import GripperButtonsNode
from fabrik_ros.nodes.sim_arm_node import SimArmNode
from test.nodes.conftest import ARM_CONFIG, REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

SO101 = REPO_ROOT / 'config' / 'so101.yaml'
PWM_ARM = REPO_ROOT / 'config' / 'arm_6servo.yaml'
GRIPPER = aux_axes(load_arm(SO101).servo_map)[0]
WAIT_S = 20.0
OPEN, CLOSE = 1, 0          # the node's default buttons (B, A)
_ROSOUT_QOS = QoSProfile(depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class Rig:
    """gripper_buttons, and a probe that serves the gripper action and publishes Joy."""

    def __init__(self, ros, config=SO101, extra=()):
        self.ros = ros
        self.node = ros.add(GripperButtonsNode(context=ros.context, cli_args=[
            '--ros-args', '--params-file', str(config), *ros.ros_args, *extra]))
        self.probe = ros.probe()
        self.goals = []
        self.server = ActionServer(self.probe, GripperCommand, 'gripper_controller/gripper_cmd',
                                   execute_callback=self._execute)
        self.joy = self.probe.create_publisher(Joy, 'joy', 10)
        self.log = []
        name = self.node.get_fully_qualified_name().lstrip('/').replace('/', '.')
        self.probe.create_subscription(
            Log, '/rosout', lambda m: m.name == name and self.log.append(m.msg), _ROSOUT_QOS)
        ros.spin_until(lambda: self.joy.get_subscription_count() > 0, timeout_s=WAIT_S,
                       what='gripper_buttons to subscribe joy')

    def _execute(self, handle):
        self.goals.append(handle.request.command.position)
        handle.succeed()
        result = GripperCommand.Result()
        result.position, result.reached_goal = handle.request.command.position, True
        return result

    def publish(self, *messages, axes=(0.0,) * 8):
        for buttons in messages:
            self.joy.publish(Joy(buttons=list(buttons), axes=list(axes)))

    def wait_goals(self, count):
        self.ros.spin_until(lambda: len(self.goals) >= count, timeout_s=WAIT_S,
                            what=lambda: f'{count} goals (have {self.goals})')

    def wait_log(self, fragment):
        self.ros.spin_until(lambda: any(fragment in line for line in self.log),
                            timeout_s=WAIT_S, what=lambda: f'{fragment!r} in {self.log}')


@pytest.fixture
def make_rig(ros):
    """Return a maker of rigs; gripper_buttons goes first, so no goal is left in flight."""
    rigs = []

    def make(**given):
        rigs.append(Rig(ros, **given))
        return rigs[-1]

    yield make
    for rig in rigs:        # rclpy's EventsExecutor crashes on a removed node's pending goals
        ros.spin_until(lambda goals=rig.node._goals: goals.in_flight == 0, timeout_s=WAIT_S,
                       what='every goal sent to end')
        ros.destroy(rig.node)
        rig.server.destroy()


def _buttons(pressed=(), count=11):
    return [1 if index in pressed else 0 for index in range(count)]


def test_a_press_sends_one_goal_a_hold_none_and_the_other_button_the_other(ros, make_rig):
    rig = make_rig()
    ros.spin_until(rig.node._goals._client.server_is_ready, timeout_s=WAIT_S,
                   what='the action server seen by gripper_buttons')
    rig.publish(_buttons(), *[_buttons({OPEN})] * 5)
    rig.wait_goals(1)
    # Had the held button sent more, they would come before the close goal.
    rig.publish(_buttons(), *[_buttons({CLOSE})] * 5)
    rig.wait_goals(2)
    rig.publish(_buttons({CLOSE, OPEN}), _buttons({OPEN}), _buttons(), _buttons({OPEN}))
    rig.wait_goals(3)
    assert rig.goals == pytest.approx([GRIPPER.high, GRIPPER.low, GRIPPER.high])


def test_malformed_joy_messages_are_dropped_naming_the_topic(ros, make_rig):
    rig = make_rig()
    ros.spin_until(rig.node._goals._client.server_is_ready, timeout_s=WAIT_S,
                   what='the action server seen by gripper_buttons')
    rig.publish(_buttons())
    rig.publish([1])                                    # too few for button 1
    rig.wait_log(f'{ros.namespace}/joy: Joy message dropped: has 1 buttons, needs at least 2')
    rig.publish(_buttons({OPEN}), axes=(0.0, math.nan))
    rig.wait_log(f'{ros.namespace}/joy: Joy message dropped: axes[1] = nan, must be finite')
    rig.publish(_buttons({CLOSE}))                      # the dropped press counted for nothing
    rig.wait_goals(1)
    assert rig.goals == pytest.approx([GRIPPER.low])


def test_the_positions_follow_the_fractions_in_the_gripper_unit(ros, make_rig):
    rig = make_rig(config=PWM_ARM, extra=('-p', 'open_fraction:=0.8', '-p',
                                          'closed_fraction:=0.1', '-p', 'open_button:=3'))
    ros.spin_until(rig.node._goals._client.server_is_ready, timeout_s=WAIT_S,
                   what='the action server seen by gripper_buttons')
    rig.publish(_buttons(), _buttons({3}), _buttons(), _buttons({CLOSE}))
    rig.wait_goals(2)
    assert rig.goals == pytest.approx([0.8, 0.1])


def test_an_arm_without_a_gripper_is_refused_at_start(ros):
    with pytest.raises(ValueError) as refused:
        GripperButtonsNode(context=ros.context, cli_args=[
            '--ros-args', '--params-file', str(ARM_CONFIG), *ros.ros_args])
    assert 'the arm has no gripper' in str(refused.value)


def test_the_same_button_for_both_is_refused(ros):
    with pytest.raises(ValueError) as refused:
        GripperButtonsNode(context=ros.context, cli_args=[
            '--ros-args', '--params-file', str(SO101), *ros.ros_args, '-p', 'open_button:=0'])
    assert 'must be two different button indices' in str(refused.value)


def test_a_press_opens_sim_arms_gripper(ros):
    sim = ros.add(SimArmNode(context=ros.context, cli_args=[
        '--ros-args', '--params-file', str(PWM_ARM), *ros.ros_args, '-p', 'aux_max_speed:=5.0']))
    buttons = ros.add(GripperButtonsNode(context=ros.context, cli_args=[
        '--ros-args', '--params-file', str(PWM_ARM), *ros.ros_args]))
    probe = ros.probe()
    joy = probe.create_publisher(Joy, 'joy', 10)
    states = []
    probe.create_subscription(JointState, 'joint_states', states.append, 10)
    ros.spin_until(lambda: buttons._goals._client.server_is_ready()
                   and joy.get_subscription_count() > 0, timeout_s=WAIT_S,
                   what="sim_arm's gripper action and gripper_buttons' joy")

    def gripper():
        if not states:
            return None
        return dict(zip(states[-1].name, states[-1].position, strict=True))['gripper']

    for pressed in (_buttons(), _buttons({OPEN})):
        joy.publish(Joy(buttons=pressed, axes=[0.0] * 8))
    ros.spin_until(lambda: gripper() is not None and gripper() > 0.99, timeout_s=WAIT_S,
                   what=lambda: f'the gripper open (at {gripper()})')
    assert sim is not None


def test_its_section_of_the_joy_config_reaches_it_in_a_namespace(ros, tmp_path):
    # The launch passes the arm file and config/teleop/joy.yaml; /**/gripper_buttons matches
    # the node under any namespace (the test's own here).
    joy_config = tmp_path / 'joy.yaml'
    joy_config.write_text((REPO_ROOT / 'config' / 'teleop' / 'joy.yaml').read_text(
        encoding='utf-8').replace('open_button: 1 ', 'open_button: 3 '), encoding='utf-8')
    node = ros.add(GripperButtonsNode(context=ros.context, cli_args=[
        '--ros-args', '--params-file', str(SO101), '--params-file', str(joy_config),
        *ros.ros_args]))
    assert node.get_namespace() == ros.namespace
    assert (node.get_parameter('open_button').value,
            node.get_parameter('close_button').value) == (3, 0)
