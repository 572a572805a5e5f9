"""The gripper actions with real rclpy ActionClients, against servo_driver and sim_arm.

servo_driver drives an SO-101 on a simulated Feetech bus (a PWM board for the PWM case);
the gripper closes on a simulated object (boardsim's ``place_object``), stalls, and its
Torque_Limit register (read off the simulated servo) drops to the holding effort.
"""

import math
import time

from control_msgs.action import GripperCommand, ParallelGripperCommand
import pytest
from rclpy.action import ActionClient
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.driver.aux_axis import aux_axes
from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.executor import ExecutorKind
from fabrik_ros.nodes.sim_arm_node import SimArmNode
from fabrik_ros.servo_io import Protocol
from fabrik_ros.servo_io.protocols.control_tables import STS3215
from test.nodes.conftest import REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(90)]

SO101 = REPO_ROOT / 'config' / 'so101.yaml'
PWM_ARM = REPO_ROOT / 'config' / 'arm_6servo.yaml'
GRIPPER_ID = 6
AXIS = aux_axes(load_arm(SO101).servo_map)[0]
FAST = ['-p', 'home_move_time_s:=0.3', '-p', 'max_speed_rad_s:=[6.0, 6.0, 6.0, 6.0, 6.0]',
        '-p', 'aux_max_speed:=3.0']
WAIT_S = 20.0
SUCCEEDED, CANCELED, ABORTED = 4, 5, 6       # action_msgs/GoalStatus


class Client:
    """A probe node's ActionClients on the gripper actions of the node under test."""

    def __init__(self, ros, node_name='servo_driver'):
        self.ros = ros
        self.probe = ros.probe()
        prefix = f'{ros.namespace}/gripper_controller'
        self.gripper = ActionClient(self.probe, GripperCommand, f'{prefix}/gripper_cmd')
        self.parallel = ActionClient(self.probe, ParallelGripperCommand,
                                     f'{prefix}/parallel_gripper_cmd')
        self.feedback = []
        self.commands = self.probe.create_publisher(JointState, 'joint_commands', 10)
        self.node_name = node_name

    def send(self, goal, *, parallel=False):
        """Send ``goal``; return its handle once the server answered (accepted or not)."""
        client = self.parallel if parallel else self.gripper
        self.ros.spin_until(client.server_is_ready, timeout_s=WAIT_S, what='the action server')
        future = client.send_goal_async(goal, feedback_callback=self.feedback.append)
        self.ros.spin_until(future.done, timeout_s=WAIT_S, what='the goal response')
        return future.result()

    def result(self, handle):
        future = handle.get_result_async()
        self.ros.spin_until(future.done, timeout_s=WAIT_S, what='the goal result')
        return future.result().status, future.result().result

    def cancel(self, handle):
        future = handle.cancel_goal_async()
        self.ros.spin_until(future.done, timeout_s=WAIT_S, what='the cancel response')

    def command(self, names, positions):
        self.ros.spin_until(lambda: self.commands.get_subscription_count() > 0,
                            timeout_s=WAIT_S, what='joint_commands subscribed')
        self.commands.publish(JointState(name=list(names), position=list(positions)))

    def enable(self, on):
        client = self.probe.create_client(SetBool, f'{self.ros.namespace}/servo_driver/enable')
        self.ros.spin_until(client.service_is_ready, timeout_s=WAIT_S, what='~/enable')
        future = client.call_async(SetBool.Request(data=on))
        self.ros.spin_until(future.done, timeout_s=WAIT_S, what='~/enable to answer')


def gripper_goal(position, max_effort=0.0):
    goal = GripperCommand.Goal()
    goal.command.position, goal.command.max_effort = float(position), float(max_effort)
    return goal


def parallel_goal(position, velocity=None, effort=None, name='gripper'):
    goal = ParallelGripperCommand.Goal()
    goal.command.name = [name] if name else []
    goal.command.position = [float(position)]
    goal.command.velocity = [] if velocity is None else [float(velocity)]
    goal.command.effort = [] if effort is None else [float(effort)]
    return goal


class BusGripper:
    """servo_driver on six simulated STS3215 (the SO-101), the gripper on id 6."""

    def __init__(self, ros, link, *extra):
        self.ros = ros
        self.board = SimBoard(Protocol.FEETECH, channels=6, link_path=link).start()
        args = ['--ros-args', '--params-file', str(SO101), *ros.ros_args, '-p', f'port:={link}',
                '-p', 'protocol:=feetech', *FAST, *extra]
        self.driver = ros.add(ServoDriverNode(context=ros.context, cli_args=args))
        self.client = Client(ros)
        ros.spin_until(lambda: self.driver._core.resting, timeout_s=WAIT_S,
                       what='the safe start to end')

    def servo(self):
        return self.board.firmware.servo(GRIPPER_ID)

    def torque_limit(self):
        with self.board.firmware.lock:
            return self.servo().register(STS3215.torque_limit)

    def present_rad(self):
        with self.board.firmware.lock:
            return AXIS.position(self.servo().present(time.monotonic()))

    def place_object(self, rad):
        self.board.firmware.place_object(GRIPPER_ID, AXIS.units(rad), time.monotonic())

    def wait_limit(self, value):
        self.ros.spin_until(lambda: self.torque_limit() == value, timeout_s=WAIT_S,
                            what=lambda: f'Torque_Limit {value}, holds {self.torque_limit()}')


@pytest.fixture
def bus(ros, tmp_path):
    rigs = []

    def make(*extra):
        rig = BusGripper(ros, str(tmp_path / f'ttyBUS{len(rigs)}'), *extra)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        if rig.driver in ros.nodes:
            ros.destroy(rig.driver)
        rig.board.stop()


def test_an_open_goal_is_reached_with_feedback_on_the_way(bus):
    rig = bus()
    handle = rig.client.send(gripper_goal(1.2))
    assert handle.accepted
    status, result = rig.client.result(handle)
    assert status == SUCCEEDED
    assert result.reached_goal and not result.stalled
    assert abs(result.position - 1.2) <= 0.02
    assert abs(rig.present_rad() - 1.2) <= 0.02
    assert rig.client.feedback and not rig.client.feedback[-1].feedback.stalled
    assert rig.torque_limit() == 1000


def test_closing_on_an_object_stalls_and_the_torque_limit_drops_to_the_holding_effort(bus):
    rig = bus()
    rig.place_object(0.5)
    handle = rig.client.send(gripper_goal(1.2))
    status, result = rig.client.result(handle)
    assert status == SUCCEEDED
    assert result.stalled and not result.reached_goal
    assert abs(result.position - 0.5) <= 0.02
    rig.wait_limit(300)                       # gripper_holding_effort 0.3 of 1000
    assert abs(rig.present_rad() - 0.5) <= 0.01
    rig.client.command(['gripper'], [0.0])    # away from the object: full torque again
    rig.wait_limit(1000)


def test_max_effort_is_the_torque_limit_of_its_goal_and_the_hold_never_above_it(bus):
    rig = bus('-p', 'gripper_holding_effort:=0.4')
    rig.place_object(0.6)
    handle = rig.client.send(gripper_goal(1.2, max_effort=0.25))
    rig.wait_limit(250)
    status, result = rig.client.result(handle)
    assert status == SUCCEEDED and result.stalled
    assert rig.torque_limit() == 250          # min(holding 0.4, the goal's 0.25)


def test_without_allow_stalling_a_stalled_goal_aborts(bus):
    rig = bus('-p', 'gripper_allow_stalling:=false')
    rig.place_object(0.5)
    status, result = rig.client.result(rig.client.send(gripper_goal(1.2)))
    assert status == ABORTED and result.stalled
    rig.wait_limit(300)


def test_a_stall_under_joint_commands_lowers_the_torque_limit_too(bus):
    rig = bus()
    rig.place_object(0.5)
    rig.client.command(['gripper'], [1.2])
    rig.wait_limit(300)


def test_a_new_goal_replaces_the_running_one(bus):
    rig = bus()
    first = rig.client.send(parallel_goal(1.5, velocity=0.2), parallel=True)
    assert first.accepted
    second = rig.client.send(gripper_goal(0.1))
    assert rig.client.result(first)[0] == ABORTED
    status, result = rig.client.result(second)
    assert status == SUCCEEDED and result.reached_goal


def test_a_cancel_holds_the_gripper_where_it_stands(bus):
    rig = bus()
    handle = rig.client.send(parallel_goal(1.5, velocity=0.3), parallel=True)
    rig.ros.spin_until(lambda: rig.present_rad() > 0.2, timeout_s=WAIT_S,
                       what='the gripper to move')
    rig.client.cancel(handle)
    status, result = rig.client.result(handle)
    assert status == CANCELED
    held = result.state.position[0]          # as last measured (a report behind the servo)
    target = rig.driver._core.planner.target[-1]
    assert 0.1 < held < 1.0 and abs(target - held) <= 0.05
    rig.ros.spin_until(lambda: abs(rig.present_rad() - target) <= 0.005, timeout_s=WAIT_S,
                       what=lambda: f'the gripper at {target}, stands at {rig.present_rad()}')


def test_a_parallel_goal_is_reached_at_its_velocity(bus):
    rig = bus()
    status, result = rig.client.result(rig.client.send(parallel_goal(0.8, velocity=2.0),
                                                       parallel=True))
    assert status == SUCCEEDED and result.reached_goal
    assert result.state.name == ['gripper'] and abs(result.state.position[0] - 0.8) <= 0.02


def test_an_unplugged_bus_aborts_the_goal(bus):
    rig = bus()
    handle = rig.client.send(parallel_goal(1.5, velocity=0.2), parallel=True)
    rig.ros.spin_until(lambda: rig.present_rad() > 0.05, timeout_s=WAIT_S,
                       what='the gripper to move')
    rig.board.unplug()
    assert rig.client.result(handle)[0] == ABORTED


def test_a_detached_driver_aborts_the_goal_and_refuses_new_ones(bus):
    rig = bus()
    handle = rig.client.send(parallel_goal(1.5, velocity=0.2), parallel=True)
    rig.client.enable(False)
    assert rig.client.result(handle)[0] == ABORTED
    assert not rig.client.send(gripper_goal(0.5)).accepted


@pytest.mark.parametrize('goal, parallel', [
    (gripper_goal(2.0), False), (gripper_goal(math.nan), False),
    (parallel_goal(0.5, name='wrist_roll'), True), (parallel_goal(-1.0), True),
    (parallel_goal(0.5, velocity=math.nan), True), (parallel_goal(0.5, effort=-math.inf), True),
    (gripper_goal(0.5, max_effort=math.inf), False),
], ids=['beyond-range', 'nan', 'other-joint', 'parallel-beyond-range', 'nan-velocity',
        'infinite-effort', 'infinite-max-effort'])
def test_a_goal_outside_the_range_or_for_another_joint_is_refused(bus, goal, parallel):
    rig = bus()
    assert not rig.client.send(goal, parallel=parallel).accepted
    assert rig.torque_limit() == 1000


def test_a_parallel_goal_with_two_positions_is_refused(bus):
    rig = bus()
    goal = parallel_goal(0.5)
    goal.command.position = [0.5, 0.6]
    assert not rig.client.send(goal, parallel=True).accepted
    assert rig.torque_limit() == 1000


def test_a_pwm_gripper_reaches_its_goal_and_takes_max_effort_without_a_limit(ros, tmp_path):
    link = str(tmp_path / 'ttyPWM')
    board = SimBoard(Protocol.NATIVE, channels=6, link_path=link).start()
    try:
        args = ['--ros-args', '--params-file', str(PWM_ARM), *ros.ros_args, '-p',
                f'port:={link}', '-p', 'home_move_time_s:=0.3']
        driver = ros.add(ServoDriverNode(context=ros.context, cli_args=args))
        client = Client(ros)
        ros.spin_until(lambda: driver._core.resting, timeout_s=WAIT_S, what='the safe start')
        status, result = client.result(client.send(gripper_goal(0.8, max_effort=0.5)))
        assert status == SUCCEEDED and result.reached_goal
        assert abs(result.position - 0.8) <= 0.02
        assert board.wait_until(lambda b: b.pulses()[5] == 1800, WAIT_S)
        ros.destroy(driver)
    finally:
        board.stop()


@pytest.mark.parametrize('kind', [ExecutorKind.SINGLE, ExecutorKind.EVENTS],
                         ids=lambda k: k.value)
def test_sim_arm_serves_both_actions_and_its_gripper_never_stalls(kind):
    from test.nodes.ros_harness import RosHarness
    ros = RosHarness(kind)
    try:
        args = ['--ros-args', '--params-file', str(SO101), *ros.ros_args]
        ros.add(SimArmNode(context=ros.context, cli_args=args))
        client = Client(ros, 'sim_arm')
        status, result = client.result(client.send(gripper_goal(1.0)))
        assert status == SUCCEEDED and result.reached_goal and not result.stalled
        status, result = client.result(client.send(parallel_goal(0.2, velocity=2.0),
                                                   parallel=True))
        assert status == SUCCEEDED and abs(result.state.position[0] - 0.2) <= 0.02
        assert not client.send(gripper_goal(3.0)).accepted
    finally:
        ros.close()
