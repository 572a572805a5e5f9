"""servo_driver runs FollowJointTrajectory goals on a simulated PWM board and a Feetech bus."""

import time

import pytest
from std_srvs.srv import SetBool

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.driver.board_layout import BoardLayout
from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes.driver_node import RESTING_TICK_S, ServoDriverNode
from fabrik_ros.servo_io import Protocol
from test.nodes.conftest import ARM_CONFIG, REPO_ROOT
from test.nodes.trajectory_client import goal, point, trajectory, TrajectoryClient, WAIT_S

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]

PWM_ARM = load_arm(ARM_CONFIG)
PWM_LAYOUT = BoardLayout.of(PWM_ARM)
BUS_CONFIG = REPO_ROOT / 'config' / 'so101.yaml'
BUS_ARM = load_arm(BUS_CONFIG)
BUS_IDS = [1, 2, 3, 4, 5]
SPEED = 3.0
# What a report of the servos' positions may differ by: a PWM board reports whole µs (about
# 0.1 degree here), a bus servo whole counts, and each holds its pose to a count or two.
PULSE_US = 3
COUNTS = 3
# How still a held joint's report stands [rad]: a few µs or counts.
HELD_RAD = 0.02


def _pulses(angles):
    return PWM_LAYOUT.pulse_vector(PWM_ARM.servo_map.to_units(angles))[:len(angles)]


def _counts(angles):
    return [round(float(u)) for u in BUS_ARM.servo_map.to_units(angles).units]


class Rig:
    """servo_driver on a simulated board or bus, and a trajectory client."""

    def __init__(self, ros, tmp_path, protocol):
        self.ros = ros
        self.arm = BUS_ARM if protocol.is_bus else PWM_ARM
        self.names = list(self.arm.joint_names)
        link = str(tmp_path / 'ttySIM')
        self.board = SimBoard(protocol, channels=6, link_path=link).start()
        config = BUS_CONFIG if protocol.is_bus else ARM_CONFIG
        speeds = ', '.join([str(SPEED)] * len(self.names))
        args = ['--ros-args', '--params-file', str(config), *ros.ros_args,
                '-p', f'port:={link}', '-p', f'protocol:={protocol.value}',
                '-p', 'home_move_time_s:=0.2', '-p', f'max_speed_rad_s:=[{speeds}]',
                '-p', 'poll_rate_hz:=20.0']
        self.driver = ros.add(ServoDriverNode(context=ros.context, cli_args=args))
        self.client = TrajectoryClient(ros)
        self.home = list(self.arm.home)
        # Goals are refused during the safe start (the move home): one that stays home, sent
        # until accepted, ends it.
        handle = self.client.send_once_ready(goal(self.names, [point(0.2, self.home)]))
        assert self.client.result(handle)[:2] == ('SUCCEEDED', 0)
        self.client.feedback.clear()
        self.client.logs.clear()
        self.wait_measured(self.home, 'the arm home after the safe start')

    def measured(self):
        """Return where the servos stand: the board's pulses [µs] or the bus's counts."""
        if self.board.protocol.is_bus:
            return [round(p) for p in self.board.firmware.present_positions(time.monotonic())[
                :len(self.names)]]
        return list(self.board.positions()[:len(self.names)])

    def expected(self, angles):
        return _counts(angles) if self.board.protocol.is_bus else _pulses(angles)

    def wait_measured(self, angles, what):
        expected = self.expected(angles)
        slack = COUNTS if self.board.protocol.is_bus else PULSE_US
        self.ros.spin_until(
            lambda: all(abs(m - e) <= slack for m, e in zip(self.measured(), expected,
                                                            strict=True)),
            timeout_s=WAIT_S, what=lambda: f'{what}: at {self.measured()}, not {expected}')

    def away(self, index, angle, t_s):
        """Return a goal that moves joint ``index`` to ``angle`` over ``t_s``, the rest home."""
        target = list(self.home)
        target[index] = angle
        return goal(self.names, [point(t_s, target)])

    def enable(self, on):
        client = self.client.node.create_client(SetBool,
                                                f'{self.ros.namespace}/servo_driver/enable')
        self.ros.spin_until(client.service_is_ready, timeout_s=WAIT_S, what='~/enable')
        future = client.call_async(SetBool.Request(data=on))
        self.ros.spin_until(future.done, timeout_s=WAIT_S, what='~/enable to answer')
        return future.result()

    def wait_moving(self, index, beyond):
        """Wait until joint_states show joint ``index`` past ``beyond`` (the goal runs)."""
        self.ros.spin_until(lambda: (self.client.positions(self.names) or self.home)[index]
                            > beyond, timeout_s=WAIT_S, what='the goal to move the arm')

    def close(self):
        self.client.close()
        if self.driver in self.ros.nodes:
            self.ros.destroy(self.driver)
        self.board.stop()


@pytest.fixture
def make_rig(ros, tmp_path):
    rigs = []

    def make(protocol):
        rig = Rig(ros, tmp_path, protocol)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        rig.close()


PROTOCOLS = [Protocol.NATIVE, Protocol.FEETECH]


@pytest.mark.parametrize('protocol', PROTOCOLS, ids=lambda p: p.value)
def test_a_goal_succeeds_with_the_servos_measured_at_its_last_point(make_rig, protocol):
    rig = make_rig(protocol)
    target = [h + d for h, d in zip(rig.home, [0.4, -0.3, 0.5, 0.2, -0.4], strict=False)]
    middle = [(h + t) / 2 for h, t in zip(rig.home, target, strict=True)]
    result = rig.client.run(goal(rig.names, [point(0.6, middle), point(1.2, target)]))
    assert result[:2] == ('SUCCEEDED', 0), result
    rig.wait_measured(target, 'the servos at the last point')
    assert rig.client.feedback, 'no feedback while the goal ran'
    assert list(rig.client.feedback[-1].joint_names) == rig.names


@pytest.mark.parametrize('protocol', PROTOCOLS, ids=lambda p: p.value)
def test_a_goal_faster_than_max_speed_is_refused_naming_the_joint(make_rig, protocol):
    rig = make_rig(protocol)
    assert not rig.client.send(rig.away(0, 1.0, 0.1)).accepted
    rig.ros.spin_until(lambda: rig.client.warnings('refused (INVALID_GOAL)'), timeout_s=WAIT_S,
                       what='the WARN line of the refusal')
    line = rig.client.warnings('refused (INVALID_GOAL)')[0]
    assert rig.names[0] in line and 'max_speed_rad_s' in line, line


@pytest.mark.parametrize('protocol', PROTOCOLS, ids=lambda p: p.value)
def test_a_cancel_holds_the_servos_where_they_are(make_rig, protocol):
    rig = make_rig(protocol)
    handle = rig.client.send(rig.away(0, 1.2, 3.0))
    assert handle.accepted
    rig.wait_moving(0, rig.home[0] + 0.2)
    rig.client.cancel(handle)
    assert rig.client.result(handle)[0] == 'CANCELED'
    before = list(rig.client.states)
    # The hold is where the servos were measured (a report lags the command by a poll).
    rig.ros.spin_until(lambda: len(rig.client.states) > len(before) + 5, timeout_s=WAIT_S,
                       what='joint_states after the cancel')
    held = rig.client.wait_still(rig.names, count=20, tolerance=HELD_RAD)
    assert rig.home[0] + 0.2 - HELD_RAD <= held[0] < 1.1
    assert held[1:] == pytest.approx(rig.home[1:], abs=HELD_RAD)


def test_a_servo_that_cannot_keep_up_violates_the_path_tolerance(make_rig):
    rig = make_rig(Protocol.FEETECH)
    # A hand (or a load) holds the elbow back: it still moves, at a crawl.
    rig.board.firmware.servo(BUS_IDS[2]).max_speed_counts_per_s = 20.0
    handle = rig.client.send(rig.away(2, rig.home[2] + 1.0, 1.0))
    assert handle.accepted
    status, code, message = rig.client.result(handle)
    assert (status, code) == ('ABORTED', -4), (status, code, message)
    assert rig.names[2] in message and 'measured' in message, message


def test_an_unplugged_bus_aborts_the_goal_with_a_message(make_rig):
    rig = make_rig(Protocol.FEETECH)
    handle = rig.client.send(rig.away(0, 1.2, 3.0))
    assert handle.accepted
    rig.wait_moving(0, rig.home[0] + 0.1)
    rig.board.unplug()
    status, _, message = rig.client.result(handle)
    assert status == 'ABORTED' and message, (status, message)


def test_an_unplugged_board_aborts_the_goal_with_a_message(make_rig):
    rig = make_rig(Protocol.NATIVE)
    handle = rig.client.send(rig.away(0, 1.2, 3.0))
    assert handle.accepted
    rig.wait_moving(0, rig.home[0] + 0.1)
    rig.board.unplug()
    status, _, message = rig.client.result(handle)
    assert status == 'ABORTED' and message, (status, message)


@pytest.mark.parametrize('protocol', PROTOCOLS, ids=lambda p: p.value)
def test_disabling_the_driver_aborts_the_goal(make_rig, protocol):
    rig = make_rig(protocol)
    handle = rig.client.send(rig.away(0, 1.2, 3.0))
    assert handle.accepted
    rig.wait_moving(0, rig.home[0] + 0.1)
    assert rig.enable(False).success
    status, _, message = rig.client.result(handle)
    assert status == 'ABORTED' and message, (status, message)
    assert not rig.client.send(rig.away(0, 0.0, 3.0)).accepted, 'a detached arm took a goal'


@pytest.mark.parametrize('protocol', PROTOCOLS, ids=lambda p: p.value)
def test_the_topic_moves_the_servos_to_its_last_point(make_rig, protocol):
    rig = make_rig(protocol)
    target = [h + d for h, d in zip(rig.home, [-0.3, 0.2, -0.4, 0.3, 0.2], strict=False)]
    rig.client.publish(trajectory(rig.names, [point(1.0, target)]))
    rig.wait_measured(target, 'the servos at the published trajectory')


def test_the_control_tick_runs_at_its_rate_as_soon_as_a_goal_starts(make_rig):
    rig = make_rig(Protocol.NATIVE)

    def tick_s():
        return rig.driver._control_timer.timer_period_ns * 1e-9
    rig.ros.spin_until(lambda: tick_s() == pytest.approx(RESTING_TICK_S), timeout_s=WAIT_S,
                       what='the resting tick')
    handle = rig.client.send(rig.away(0, 0.5, 1.0))
    assert handle.accepted
    assert tick_s() == pytest.approx(1.0 / 50.0), 'the goal waited for a resting tick'
    assert rig.client.result(handle)[:2] == ('SUCCEEDED', 0)
