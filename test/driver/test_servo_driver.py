"""ServoDriver with a fake clock and fake servos: no pty, no DDS (issue 23 shape)."""

from dataclasses import dataclass, field
import math
from pathlib import Path
from typing import Optional

import pytest

from fabrik_ros.driver.arm_state_machine import LogLevel, Phase
from fabrik_ros.driver.aux_axis import PULSE_AUX_SPEED_PER_S
from fabrik_ros.driver.heat_guard import TEMPERATURE_ERROR_C, TEMPERATURE_WARN_C
from fabrik_ros.driver.servo_driver import (
    BUS_START_WAIT_S,
    FinalState,
    ServoDriver,
    SHUTDOWN_SYNC_S,
    START_WAIT_S,
)
from fabrik_ros.driver.servo_output import (
    HealthLevel,
    LinkEvent,
    RebootOrder,
    ServoHealth,
    ServoReport,
)
from fabrik_ros.driver.trajectory import (
    Ending,
    Outcome,
    TrajectoryGoal,
    TrajectoryPoint,
    TrajectorySettings,
)
from fabrik_ros.kinematics import load_arm
from fabrik_ros.servo_io import LinkState, LinkTimeout, Protocol

ARM = load_arm(Path(__file__).parents[2] / 'config' / 'arm_6servo.yaml')
HOME = tuple(float(a) for a in ARM.home)
HOME_MOVE_S, STEP_S, SPEED = 1.0, 0.02, 2.0
GRIPPER_HOME_US = 1500.0
POSE = (0.3, 1.2, -0.8, 0.4, 0.1)


def _units(angles, gripper_us=GRIPPER_HOME_US):
    return [*map(float, ARM.servo_map.to_units(angles).units), gripper_us]


@dataclass
class FakeOutput:
    """Servos that take what they are sent and report what the test says."""

    clock: list
    unit: str = 'us'
    protocol: Protocol = Protocol.NATIVE
    path: str = '/dev/ttyFAKE'
    state: LinkState = LinkState.CONNECTING
    board_name: str = 'fake v1'
    last_error: Optional[BaseException] = None
    events: list = field(default_factory=list)
    sent: list = field(default_factory=list)          # (time, units, move_s)
    attached: list = field(default_factory=list)
    reported: Optional[tuple] = None                   # units in servo order
    is_synced: bool = True
    released: list = field(default_factory=list)
    sync_error: Optional[Exception] = None
    closed: bool = False
    admitted: dict = field(default_factory=dict)     # servo index -> units, rejoined
    judged_silent: Optional[set] = None                # servo indices the link names silent
    reboot_refusal: str = ''
    rebooted: list = field(default_factory=list)       # each reboot(servos) asked
    reboot_order: RebootOrder = RebootOrder(('servo elbow (id 3): overload',))
    temps: tuple = ()                                  # temperatures() [servo order, C]
    limped: list = field(default_factory=list)         # each limp(servo, on) asked

    def start(self):
        pass

    def take_events(self):
        events, self.events = self.events, []
        return events

    def named_silent(self, servo):
        return self.judged_silent if self.judged_silent is None else servo in self.judged_silent

    def take_admitted(self):
        admitted, self.admitted = self.admitted, {}
        return admitted

    def reboot(self, servos=None):
        self.rebooted.append(servos)
        return self.reboot_order

    def connect(self):
        self.state = LinkState.READY
        self.events.append(LinkEvent(LinkState.READY))

    def send(self, units, move_s):
        self.sent.append((self.clock[0], list(units), move_s))

    def attach(self, on):
        self.attached.append(on)

    def report(self, now_s):
        if self.reported is None:
            return None
        return ServoReport(tuple(self.reported), 1.0, now_s)

    def synced(self):
        return self.is_synced

    def release(self, *, detach):
        self.released.append(detach)

    def sync(self, timeout_s):
        if self.sync_error is not None:
            raise self.sync_error

    def close(self):
        self.closed = True
        self.state = LinkState.CLOSED

    def link_values(self):
        return {'port': self.path}

    def health(self):
        return ()

    def temperatures(self):
        return self.temps

    def limp(self, servo, on):
        self.limped.append((servo, on))
        return True


class Rig:
    def __init__(self, busy=lambda: '', **options):
        self.clock = [100.0]
        self.output = FakeOutput(self.clock)
        self.logs = []
        self.driver = ServoDriver(ARM, self.output, speeds_rad_s=[SPEED] * 5,
                                  home_move_s=HOME_MOVE_S, step_s=STEP_S,
                                  clock=lambda: self.clock[0], log=self.logs.append, busy=busy,
                                  **options)

    def advance(self, seconds):
        end = self.clock[0] + seconds
        while self.clock[0] < end - 1e-12:
            self.clock[0] += STEP_S
            self.driver.tick()

    def texts(self):
        return [line.text for line in self.logs]

    def start_at(self, angles):
        """Connect with the servos at ``angles``, hold them, move home, arrive."""
        self.output.reported = _units(angles)
        self.output.connect()
        self.advance(STEP_S)
        self.advance(HOME_MOVE_S + 5 * STEP_S)
        assert self.driver.phase is Phase.RUNNING


def test_the_safe_start_holds_the_reported_units_then_moves_home_slowly():
    rig = Rig()
    rig.output.reported = _units(POSE, 1700.0)
    rig.output.connect()
    rig.advance(STEP_S)
    (_, held, move_s), = rig.output.sent
    assert held == pytest.approx(_units(POSE, 1700.0)), 'every servo, the gripper too (D5)'
    assert move_s == 0.0
    assert rig.output.attached == [True]
    rig.advance(STEP_S)
    _, home, move_s = rig.output.sent[-1]
    assert home == pytest.approx(_units(HOME)) and move_s >= HOME_MOVE_S
    assert rig.texts() == ['board connected: fake v1',
                           f'board ready: moving home over {move_s:.1f} s from the reported pose']


@pytest.mark.parametrize('start_wait_s', [START_WAIT_S, BUS_START_WAIT_S])
def test_without_a_report_the_start_waits_its_time_then_moves_home_slowly(start_wait_s):
    rig = Rig(start_wait_s=start_wait_s)
    rig.output.connect()
    rig.advance(start_wait_s - 2 * STEP_S)
    assert rig.output.sent == [] and rig.output.attached == [], 'still waiting for a report'
    rig.advance(4 * STEP_S)    # the connect is taken on the first tick, a step after it
    (_, home, move_s), = rig.output.sent
    assert home == pytest.approx(_units(HOME)) and move_s >= HOME_MOVE_S
    assert rig.texts()[-1] == f'board ready: moving home over {move_s:.1f} s from an unknown pose'


def test_a_command_is_stepped_at_the_speed_limit_in_servo_units_on_arrival():
    rig = Rig()
    rig.start_at(HOME)
    before = len(rig.output.sent)
    rig.driver.take_commands(['elbow'], [HOME[2] + 1.0])
    at, units, move_s = rig.output.sent[before]
    assert at == rig.clock[0], 'sent by the command itself, not by the next tick'
    step = SPEED * STEP_S
    expected = list(HOME)
    expected[2] += step
    assert units == pytest.approx(_units(expected))
    assert move_s == pytest.approx(STEP_S)
    rig.advance(1.0 / SPEED + 0.1)
    assert rig.output.sent[-1][1] == pytest.approx(_units((*HOME[:2], HOME[2] + 1.0, *HOME[3:])))


def test_the_driver_rests_only_while_the_servos_follow_and_hold_the_target():
    rig = Rig()
    assert not rig.driver.resting, 'not connected'
    rig.start_at(HOME)
    assert rig.driver.resting
    rig.driver.take_commands(['elbow'], [HOME[2] + 0.5])
    assert not rig.driver.resting, 'a move the speed limit spreads over ticks'
    rig.advance(0.5 / SPEED + 0.1)
    assert rig.driver.resting, 'arrived'
    rig.driver.take_commands(['elbow'], [HOME[2] + 0.5 + 0.1 * SPEED * STEP_S])
    assert rig.driver.resting, 'a command within one step is sent at once'
    rig.driver.enable(False)
    assert not rig.driver.resting, 'detached'


def test_a_servo_that_rejoined_moves_on_from_where_it_holds_to_the_latched_command():
    """A bus servo admitted anew holds where it stood; the command is not repeated."""
    rig = Rig()
    rig.start_at(HOME)
    target = (*HOME[:2], HOME[2] + 1.0, *HOME[3:])
    rig.driver.take_commands(['elbow'], [target[2]])
    rig.advance(1.0 / SPEED + 0.1)
    assert rig.driver.resting and rig.output.sent[-1][1] == pytest.approx(_units(target))
    holds = list(target)
    holds[2] -= 0.6                         # where it stood when it stopped answering
    rig.output.admitted = {2: _units(holds)[2]}
    before = len(rig.output.sent)
    rig.advance(STEP_S)
    _, first, move_s = rig.output.sent[before]
    step = list(holds)
    step[2] += SPEED * STEP_S
    assert first == pytest.approx(_units(step)), 'a step from where it holds, at the limit'
    rig.advance(0.6 / SPEED + 0.1)
    assert rig.output.sent[-1][1] == pytest.approx(_units(target))
    assert rig.driver.resting


def _gripper_speeds_us_s(sent):
    """Return the gripper's speed in each move that changed it [µs/s] (a jump: inf)."""
    return [abs(b[1][5] - a[1][5]) / b[2] if b[2] > 0.0 else math.inf
            for a, b in zip(sent[:-1], sent[1:], strict=True) if b[1][5] != a[1][5]]


def test_a_gripper_command_moves_the_gripper_at_its_speed_limit_the_joints_unchanged():
    rig = Rig()
    rig.start_at(HOME)
    before = len(rig.output.sent)
    rig.driver.take_commands(['gripper'], [0.25])
    _, units, _ = rig.output.sent[before]
    assert units == pytest.approx(_units(HOME, 1500.0 - 1000.0 * PULSE_AUX_SPEED_PER_S * STEP_S))
    rig.advance(0.25 / PULSE_AUX_SPEED_PER_S + 0.1)
    assert rig.output.sent[-1][1] == pytest.approx(_units(HOME, 1250.0))
    speeds = _gripper_speeds_us_s(rig.output.sent[before - 1:])
    assert speeds and max(speeds) <= 1000.0 * PULSE_AUX_SPEED_PER_S + 1e-6


def test_a_re_attach_holds_the_gripper_where_the_hand_left_it_then_moves_it_at_its_limit():
    rig = Rig(aux_speed=0.25)                 # [fraction of the pulse range per s]
    rig.start_at(HOME)
    rig.driver.enable(False)
    rig.output.reported = _units(HOME, 1900.0)         # opened by hand while limp
    rig.driver.enable(True)
    before = len(rig.output.sent)
    rig.advance(0.4 / 0.25 + 0.2)
    moves = rig.output.sent[before:]
    assert moves[0][1] == pytest.approx(_units(HOME, 1900.0)) and moves[0][2] == 0.0
    assert moves[-1][1] == pytest.approx(_units(HOME, 1500.0)), 'back at its command'
    assert max(_gripper_speeds_us_s(moves)) <= 250.0 + 1e-6, 'no snap at the servo speed (D4)'


def test_home_moves_the_gripper_at_its_speed_limit():
    rig = Rig(aux_speed=0.1)
    rig.start_at(HOME)
    rig.driver.take_commands(['gripper'], [1.0])
    rig.advance(0.5 / 0.1 + 0.1)
    assert rig.output.sent[-1][1][5] == 2000.0
    actions = rig.driver.home()
    assert actions.send.move_s >= 0.5 / 0.1 - 1e-9, 'the gripper needs 5 s at 0.1 per s'
    assert rig.output.sent[-1][1] == pytest.approx(_units(HOME, 1500.0))
    rig.driver.set_aux_speed(0.0)
    rig.driver.take_commands(['gripper'], [1.0])
    rig.advance(2 * HOME_MOVE_S)
    assert max(_gripper_speeds_us_s(rig.output.sent[-10:]), default=0.0) <= 500.0 + 1e-6


def test_a_handed_over_command_is_not_taken_again_from_its_published_copy():
    rig = Rig()
    rig.start_at(HOME)
    rig.driver.command(POSE)
    other = (0.0, *POSE[1:])
    rig.driver.take_commands(list(ARM.joint_names), list(other))
    rig.driver.take_commands(list(ARM.joint_names), list(POSE))   # the late copy of POSE
    assert rig.driver.latest_command == other
    with pytest.raises(ValueError) as raised:
        rig.driver.command(POSE[:3])
    assert 'must hold 5 finite values' in str(raised.value)


def test_commands_wait_while_busy_and_say_why_once_a_period():
    rig = Rig(busy=lambda: 'a calibration jog holds the servos')
    rig.start_at(HOME)
    rig.driver.take_commands(['elbow'], [0.0])
    rig.driver.take_commands(['elbow'], [0.1])
    assert rig.driver.latest_command == HOME
    assert rig.texts().count('joint_commands ignored: a calibration jog holds the servos') == 1


def test_joint_states_carry_the_command_the_report_confirms_else_the_report():
    rig = Rig()
    assert rig.driver.feedback() is None, 'nothing sent, nothing known'
    rig.start_at(HOME)
    feedback = rig.driver.feedback()
    assert feedback.names == (*ARM.joint_names, 'gripper')
    assert feedback.positions == pytest.approx((*HOME, 0.5))
    assert feedback.source == 'commanded, confirmed by the board (1 us steps)'
    rig.output.reported = _units(POSE, 1800.0)      # moved by hand, say
    moved = rig.driver.feedback()
    assert moved.positions == pytest.approx((*POSE, 0.8), abs=1e-9)
    assert moved.source == 'board (1 us steps)'
    rig.output.reported = None
    assert rig.driver.feedback().source == 'commanded'


def test_joint_states_follow_the_servos_that_report_while_one_is_silent():
    rig = Rig()
    rig.start_at(HOME)
    reported = _units(POSE, 1800.0)      # moved by hand while limp, say
    reported[3] = None                   # wrist_pitch's servo stopped answering
    rig.output.reported = tuple(reported)
    feedback = rig.driver.feedback()
    expected = (*POSE[:3], HOME[3], POSE[4], 0.8)    # the silent joint keeps its command
    assert feedback.positions == pytest.approx(expected, abs=1e-9), feedback.source
    assert feedback.source == "board (1 us steps); commanded for ['wrist_pitch'] (no report)"
    rig.output.reported = tuple(_units(HOME)[:3] + [None] + _units(HOME)[4:])
    assert rig.driver.feedback().source == ("commanded, confirmed by the board (1 us steps); "
                                            "commanded for ['wrist_pitch'] (no report)")


def test_before_anything_is_sent_a_silent_servo_is_left_out_of_joint_states():
    rig = Rig()
    rig.driver.enable(False)
    reported = _units(POSE, 1800.0)
    reported[3] = None
    rig.output.reported = tuple(reported)
    rig.output.connect()
    rig.advance(STEP_S)
    feedback = rig.driver.feedback()
    assert feedback.names == ('base_yaw', 'shoulder', 'elbow', 'wrist_roll', 'gripper')
    assert feedback.positions == pytest.approx((*POSE[:3], POSE[4], 0.8), abs=1e-9)
    assert feedback.source == ("board (1 us steps); ['wrist_pitch'] left out (no report, "
                               'nothing sent)')


def test_servo_positions_are_the_raw_units_reported_by_servo_name():
    rig = Rig()
    assert rig.driver.servo_positions() == ((), ())
    rig.output.reported = (1500.0, None, 1200.0, 1500.0, 1500.0, 1250.0)
    names, units = rig.driver.servo_positions()
    assert names == ('base_yaw', 'elbow', 'wrist_pitch', 'wrist_roll', 'gripper')
    assert units == (1500.0, 1200.0, 1500.0, 1500.0, 1250.0)


def test_shutdown_home_ticks_the_move_through_on_the_clock_then_holds():
    rig = Rig()
    rig.start_at(HOME)
    rig.driver.take_commands(list(ARM.joint_names), list(POSE))
    rig.advance(3.0)
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        rig.clock[0] += seconds

    started = rig.clock[0]
    rig.driver.stop(FinalState.HOME, sleep=sleep)
    home_move = next(s for s in rig.output.sent if s[0] == started)
    assert home_move[1] == pytest.approx(_units(HOME)) and home_move[2] >= HOME_MOVE_S
    assert rig.clock[0] >= started + home_move[2], 'ticked through the whole move'
    assert set(slept) == {STEP_S}
    assert rig.output.released == [False] and rig.output.closed
    assert f'on_shutdown home: moving home over {home_move[2]:.1f} s' in rig.texts()


@pytest.mark.parametrize('final, detach', [(FinalState.HOLD, False), (FinalState.DETACH, True)])
def test_shutdown_holds_or_detaches_and_says_when_it_cannot_confirm(final, detach):
    rig = Rig()
    rig.start_at(HOME)
    rig.output.sync_error = LinkTimeout(f'/dev/ttyFAKE: not in sync within {SHUTDOWN_SYNC_S} s')
    rig.driver.stop(final, sleep=lambda s: pytest.fail('no move to wait for'))
    assert rig.output.released == [detach] and rig.output.closed
    assert rig.logs[-1].level is LogLevel.WARN
    assert rig.texts()[-1] == (f'on_shutdown {final.value} not confirmed: /dev/ttyFAKE: not '
                               f'in sync within {SHUTDOWN_SYNC_S} s')


def test_shutdown_home_without_a_board_says_the_servos_stay_as_they_were():
    rig = Rig()
    rig.driver.stop(FinalState.HOME, sleep=lambda s: pytest.fail('no move without a board'))
    assert rig.texts() == ['on_shutdown home: no board connected (connecting), the servos stay '
                           'as the board left them']


def test_the_board_status_says_connected_detached_or_why_not():
    rig = Rig()
    waiting = rig.driver.status()
    assert waiting.level is HealthLevel.ERROR
    assert waiting.message == 'board not connected (connecting): waiting'
    rig.start_at(HOME)
    rig.driver.enable(False)
    detached = rig.driver.status()
    assert detached.level is HealthLevel.OK and detached.message == 'connected, servos detached'
    assert detached.values['port'] == '/dev/ttyFAKE' and detached.values['enabled'] is False


# -- trajectories (FollowJointTrajectory goals) ---------------------------------------------------

@dataclass
class FollowingOutput(FakeOutput):
    """Servos that report where they were last sent, but for a joint the test holds back."""

    stuck: Optional[int] = None          # this servo reports ``stuck_us`` whatever it is sent
    stuck_us: float = 0.0
    offset: Optional[int] = None         # this servo reports ``offset_us`` off what it is sent
    offset_us: float = 0.0
    silent: Optional[int] = None         # this servo reports nothing

    def report(self, now_s):
        if not self.sent:
            return super().report(now_s)
        units = list(self.sent[-1][1])
        if self.stuck is not None:
            units[self.stuck] = self.stuck_us
        if self.offset is not None:
            units[self.offset] += self.offset_us
        if self.silent is not None:
            units[self.silent] = None
        return ServoReport(tuple(units), 1.0, now_s)


class TrajectoryRig(Rig):
    def __init__(self, output=None, **options):
        self.clock = [100.0]
        self.output = output or FollowingOutput(self.clock)
        self.output.clock = self.clock
        self.logs = []
        self.driver = ServoDriver(ARM, self.output, speeds_rad_s=[SPEED] * 5,
                                  home_move_s=HOME_MOVE_S, step_s=STEP_S,
                                  clock=lambda: self.clock[0], log=self.logs.append, **options)
        self.start_at(HOME)

    def goal(self, *points, **options):
        return TrajectoryGoal(tuple(ARM.joint_names), tuple(points), **options)

    def run(self, seconds):
        """Tick for ``seconds`` or until the goal ends; return the ends."""
        end = self.clock[0] + seconds
        ends = []
        while self.clock[0] < end - 1e-12 and not ends:
            self.clock[0] += STEP_S
            self.driver.tick()
            ends = self.driver.take_trajectory_ends()
        return ends


def _angles(units):
    return [cal.angle_rad(u) for cal, u in zip(ARM.servo_map.calibrations, units, strict=False)]


def _joint_speeds(sent):
    """Return each joint's speed in each move after the first [rad/s]."""
    speeds = []
    for (_, before, _), (_, after, move_s) in zip(sent[:-1], sent[1:], strict=True):
        moved = [abs(b - a) for a, b in zip(_angles(before), _angles(after), strict=True)]
        speeds.append([m / move_s if move_s > 0.0 else (0.0 if m == 0.0 else math.inf)
                       for m in moved])
    return speeds


# Elbow at 1.93 rad/s over the first segment: just under the 2.0 rad/s limit.
FAST = (TrajectoryPoint(0.4, (*HOME[:2], HOME[2] + 0.77, *HOME[3:])),
        TrajectoryPoint(1.4, POSE))


def test_a_trajectory_is_followed_never_above_the_speed_limit_and_succeeds_at_its_end():
    rig = TrajectoryRig()
    before = len(rig.output.sent)
    assert rig.driver.start_trajectory('a', rig.goal(*FAST)) is None
    assert not rig.driver.resting, 'a trajectory runs'
    (end,) = rig.run(3.0)
    assert (end.goal_id, end.ending, end.code) == ('a', Ending.SUCCEEDED, Outcome.SUCCESSFUL)
    sent = rig.output.sent[before - 1:]
    fastest = max(max(speeds) for speeds in _joint_speeds(sent))
    assert 1.5 < fastest <= SPEED + 1e-6, 'close to the limit, never above it'
    assert _angles(sent[-1][1]) == pytest.approx(POSE, abs=1e-9), 'at the last point'
    assert rig.clock[0] - 100.0 < HOME_MOVE_S + 6 * STEP_S + 1.4 + 0.2, 'on time'
    rig.advance(0.1)
    assert rig.driver.resting
    later = rig.goal(TrajectoryPoint(0.5, POSE), start_s=rig.clock[0] + 1.0)
    assert rig.driver.start_trajectory('b', later) is None
    rig.advance(0.5)
    assert rig.driver.planner.settled and not rig.driver.resting, 'waits for its start'


def test_a_trajectory_faster_than_a_servo_is_refused_naming_the_joint_and_its_speed():
    rig = TrajectoryRig()
    goal = rig.goal(TrajectoryPoint(0.3, (*HOME[:2], HOME[2] + 0.77, *HOME[3:])))
    refusal = rig.driver.check_trajectory(goal)
    assert refusal.code is Outcome.INVALID_GOAL
    assert refusal.message.startswith('elbow would need 2.567 rad/s')
    assert 'its limit is 2.000 rad/s' in refusal.message
    assert rig.driver.start_trajectory('a', goal) == refusal
    rig.driver.set_speeds([3.0] * 5)
    assert rig.driver.check_trajectory(goal) is None, 'the new speed limit applies'


def test_a_stuck_servo_aborts_the_goal_on_the_path_tolerance_and_the_arm_holds_there():
    rig = TrajectoryRig()
    rig.output.stuck, rig.output.stuck_us = 2, _units(HOME)[2]
    rig.driver.start_trajectory('a', rig.goal(*FAST))
    (end,) = rig.run(3.0)
    assert (end.ending, end.code) == (Ending.ABORTED, Outcome.PATH_TOLERANCE_VIOLATED)
    assert 'elbow desired' in end.message and 'measured -1.5708 rad' in end.message
    assert rig.driver.latest_command[2] == pytest.approx(HOME[2], abs=1e-6), 'held there'
    rig.advance(0.5)
    assert _angles(rig.output.sent[-1][1])[2] == pytest.approx(HOME[2], abs=1e-6)


def test_a_servo_short_of_the_goal_ends_goal_tolerance_violated():
    rig = TrajectoryRig(trajectory_settings=TrajectorySettings(goal_time_tolerance_s=0.3))
    rig.output.offset, rig.output.offset_us = 2, 40.0     # about 0.1 rad off: within the path
    rig.driver.start_trajectory('a', rig.goal(*FAST))
    (end,) = rig.run(5.0)
    assert (end.ending, end.code) == (Ending.ABORTED, Outcome.GOAL_TOLERANCE_VIOLATED)
    assert 'elbow desired -0.8000 rad, measured' in end.message


def test_feedback_carries_the_measured_positions_else_the_command():
    rig = TrajectoryRig()
    rig.output.offset, rig.output.offset_us = 0, 20.0
    rig.driver.start_trajectory('a', rig.goal(*FAST))
    rig.run(0.2)
    goal_id, feedback = rig.driver.trajectory_feedback()
    commanded = _angles(rig.output.sent[-1][1])
    assert goal_id == 'a' and feedback.actual[1:] == pytest.approx(commanded[1:])
    assert feedback.actual[0] == pytest.approx(ARM.servo_map.calibrations[0].angle_rad(
        rig.output.sent[-1][1][0] + 20.0))
    rig.output.silent = 3                  # a board that does not report every joint
    _, feedback = rig.driver.trajectory_feedback()
    assert feedback.actual == pytest.approx(rig.driver.planner.sent[:5])


def test_a_servo_that_falls_silent_aborts_the_goal():
    rig = TrajectoryRig()
    rig.driver.start_trajectory('a', rig.goal(*FAST))
    rig.run(0.1)
    rig.output.silent = 3
    (end,) = rig.run(2.0)
    assert end.ending is Ending.ABORTED and end.code is Outcome.INVALID_GOAL
    assert end.message.startswith('servos silent (detached, unplugged or unpowered?): '
                                  'wrist_pitch (0.5')


def test_a_late_report_the_link_does_not_call_silence_leaves_the_goal_running():
    """A loaded host delays the reads; the bus still hears the servo: no abort."""
    rig = TrajectoryRig()
    rig.driver.start_trajectory('a', rig.goal(*FAST))
    rig.run(0.1)
    rig.output.silent = 3
    rig.output.judged_silent = set()
    assert rig.run(1.0) == [], 'still running'
    rig.output.judged_silent = {3}
    (end,) = rig.run(0.1)
    assert end.message.startswith('servos silent (detached, unplugged or unpowered?): '
                                  'wrist_pitch (1.')


def test_a_cancel_holds_where_the_arm_is():
    rig = TrajectoryRig()
    rig.driver.start_trajectory('a', rig.goal(*FAST))
    rig.run(0.2)
    assert not rig.driver.cancel_trajectory('b')
    where = _angles(rig.output.report(rig.clock[0]).units)
    assert rig.driver.cancel_trajectory('a')
    (end,) = rig.driver.take_trajectory_ends()
    assert (end.ending, end.message) == (Ending.CANCELED, 'canceled: holding where the arm is')
    assert rig.driver.latest_command == pytest.approx(where, abs=1e-9)
    rig.advance(0.5)
    assert _angles(rig.output.sent[-1][1]) == pytest.approx(where, abs=1e-9)
    assert rig.driver.resting


def test_a_new_goal_replaces_the_running_one():
    rig = TrajectoryRig()
    rig.driver.start_trajectory('a', rig.goal(*FAST))
    rig.run(0.2)
    assert rig.driver.start_trajectory('b', rig.goal(TrajectoryPoint(1.0, HOME))) is None
    (end,) = rig.driver.take_trajectory_ends()
    assert (end.goal_id, end.ending, end.message) == ('a', Ending.ABORTED,
                                                      'replaced by a newer goal')
    (end,) = rig.run(3.0)
    assert (end.goal_id, end.ending) == ('b', Ending.SUCCEEDED)


def _disable(rig):
    rig.driver.enable(False)


def _unplug(rig):
    rig.output.events.append(LinkEvent(LinkState.DISCONNECTED, LinkTimeout('/dev/ttyFAKE: '
                                                                           'no answer')))
    rig.driver.tick()


def _joint_commands(rig):
    rig.driver.take_commands(['elbow'], [0.0])


def _home(rig):
    rig.driver.home()


@pytest.mark.parametrize('event, message', [
    (_disable, 'servos detached (~/enable false): call ~/enable with true, then send the '
               'trajectory again'),
    (_unplug, 'board lost: /dev/ttyFAKE: no answer'),
    (_joint_commands, 'replaced by a joint_commands message'),
    (_home, 'replaced by ~/home (moving home)'),
])
def test_disable_a_lost_board_joint_commands_and_home_abort_the_goal(event, message):
    rig = TrajectoryRig()
    rig.driver.start_trajectory('a', rig.goal(*FAST))
    rig.run(0.2)
    event(rig)
    (end,) = rig.driver.take_trajectory_ends()
    assert (end.ending, end.code, end.message) == (Ending.ABORTED, Outcome.INVALID_GOAL, message)
    assert rig.driver.trajectory_feedback() is None


def test_a_joint_command_after_the_abort_is_followed_not_the_hold():
    rig = TrajectoryRig()
    rig.driver.start_trajectory('a', rig.goal(*FAST))
    rig.run(0.2)
    rig.driver.take_commands(['elbow'], [0.0])
    rig.advance(2.0)
    assert rig.driver.latest_command[2] == 0.0
    assert _angles(rig.output.sent[-1][1])[2] == pytest.approx(0.0, abs=1e-9)


def test_a_trajectory_is_refused_while_the_arm_cannot_follow_it():
    rig = Rig()
    goal = TrajectoryGoal(tuple(ARM.joint_names), (TrajectoryPoint(1.0, HOME),))
    assert rig.driver.check_trajectory(goal).message.startswith('board not connected')
    rig.output.reported = _units(POSE)
    rig.output.connect()
    rig.advance(2 * STEP_S)
    refusal = rig.driver.start_trajectory('a', goal)
    assert refusal.code is Outcome.INVALID_GOAL
    assert refusal.message.startswith('the arm is moving home (')
    rig.advance(HOME_MOVE_S + 0.1)
    rig.driver.enable(False)
    assert rig.driver.check_trajectory(goal).message.startswith('servos detached')
    rig.driver.enable(True)
    assert rig.driver.check_trajectory(goal).message.startswith('servos attaching')


def test_a_sample_that_is_not_finite_is_never_sent_and_ends_the_goal(monkeypatch):
    # The goal check refuses such curves; this is the driver's own guard behind it.
    rig = TrajectoryRig()
    assert rig.driver.start_trajectory('a', rig.goal(*FAST)) is None
    rig.run(0.2)
    before = len(rig.output.sent)
    executor = rig.driver._trajectory
    monkeypatch.setattr(executor, 'desired', lambda _now: (math.nan, *HOME[1:]))
    (end,) = rig.run(1.0)
    assert (end.ending, end.code) == (Ending.ABORTED, Outcome.INVALID_GOAL)
    assert 'not finite' in end.message
    assert all(math.isfinite(u) for _, units, _ in rig.output.sent[before:] for u in units)


def test_a_reboot_asks_the_default_servos_and_the_reply_names_those_rebooted():
    rig = Rig()
    rig.start_at(HOME)
    reply = rig.driver.reboot()
    assert reply.success, reply.message
    assert rig.output.rebooted == [None], 'the default set: those in error, else all'
    assert reply.message.startswith('rebooted servo elbow (id 3): overload; ')
    assert 'latest command at the speed limits' in reply.message
    assert rig.texts()[-1] == '~/reboot: rebooted servo elbow (id 3): overload', 'logged once'


@pytest.mark.parametrize('case', ['no reboot', 'detached', 'not connected', 'none answers'])
def test_a_reboot_is_refused_with_the_reason(case):
    rig = Rig()
    expected = {'no reboot': 'PWM servos have no reboot', 'detached': '~/enable with true',
                'not connected': 'board not connected', 'none answers': 'no servo answers'}
    if case != 'not connected':
        rig.start_at(HOME)
    if case == 'no reboot':
        rig.output.reboot_refusal = 'PWM servos have no reboot'
    elif case == 'detached':
        rig.driver.enable(False)
    elif case == 'none answers':
        rig.output.reboot_order = RebootOrder(refusal='no servo answers on the bus')
    reply = rig.driver.reboot()
    assert not reply.success
    assert expected[case] in reply.message
    assert rig.output.rebooted == ([None] if case == 'none answers' else [])


def test_servos_without_a_reboot_say_so_before_saying_they_are_detached():
    rig = Rig()
    rig.output.reboot_refusal = 'Feetech STS servos have no reboot instruction'
    rig.driver.enable(False)
    reply = rig.driver.reboot()
    assert not reply.success and reply.message == rig.output.reboot_refusal


def _hot(rig, servo, temperature_c):
    """Let servo ``servo`` (servo order) report ``temperature_c``, the others 40 C."""
    rig.output.temps = tuple(temperature_c if i == servo else 40.0 for i in range(6))


def test_an_overheating_servo_is_detached_once_alone_and_the_others_are_still_commanded():
    rig = Rig()
    rig.start_at(HOME)
    _hot(rig, 2, TEMPERATURE_WARN_C + 1.0)
    rig.advance(0.5)
    warnings = [line for line in rig.logs if 'temperature' in line.text]
    assert [line.level for line in warnings] == [LogLevel.WARN], 'one line at the warning limit'
    assert rig.output.limped == []
    _hot(rig, 2, TEMPERATURE_ERROR_C + 1.0)
    rig.advance(0.5)
    assert rig.output.limped == [(2, True)]
    errors = [line for line in rig.logs if line.level is LogLevel.ERROR]
    assert len(errors) == 1
    assert errors[0].text.startswith('servo elbow (id 2): temperature 66 C at or above the error '
                                     'limit 65 C: detached (torque off)')
    assert '~/enable false, then true' in errors[0].text
    assert rig.driver.detached_for_heat == {2}
    assert rig.driver.enabled and rig.output.attached == [True], 'the others keep their torque'
    rig.advance(2.0)
    assert rig.output.limped == [(2, True)], 'detached once'
    assert [line.level for line in rig.logs if 'temperature' in line.text] == [
        LogLevel.WARN, LogLevel.ERROR], 'each said once'
    before = len(rig.output.sent)
    rig.driver.take_commands(['base_yaw'], [HOME[0] + 0.2])
    rig.advance(0.5)
    assert len(rig.output.sent) > before, 'the others are still commanded'
    assert rig.output.sent[-1][1][0] == pytest.approx(_units((HOME[0] + 0.2, *HOME[1:]))[0])


def test_re_enabling_re_attaches_a_cooled_servo_and_keeps_a_hot_one_detached():
    rig = Rig()
    rig.start_at(HOME)
    _hot(rig, 2, TEMPERATURE_ERROR_C + 1.0)
    rig.advance(0.5)
    reply = rig.driver.enable(True)
    assert 'servo elbow (id 2) detached for overheating: call ~/enable false, then true' \
        in reply.message
    rig.driver.enable(False)
    _hot(rig, 2, TEMPERATURE_WARN_C + 2.0)
    reply = rig.driver.enable(True)
    assert reply.success
    assert 'servo elbow (id 2) stays detached for overheating (57 C, not yet below 55 C)' \
        in reply.message
    assert rig.output.limped == [(2, True)] and rig.driver.detached_for_heat == {2}
    rig.driver.enable(False)
    _hot(rig, 2, TEMPERATURE_WARN_C - 5.0)
    reply = rig.driver.enable(True)
    assert 'overheating' not in reply.message
    assert rig.output.limped == [(2, True), (2, False)]
    assert rig.driver.detached_for_heat == frozenset()
    assert rig.output.attached[-1] is False, 'released before the attach that holds all'


def test_a_servo_detached_for_heat_is_an_error_in_its_diagnostic_status():
    rig = Rig()
    rig.start_at(HOME)
    health = tuple(ServoHealth(f'servo {n}', HealthLevel.OK, 'ok', {}) for n in 'abcdef')
    rig.output.health = lambda: health
    _hot(rig, 5, TEMPERATURE_ERROR_C + 3.0)
    rig.advance(0.5)
    statuses = rig.driver.servo_health()
    assert [s.level for s in statuses] == [HealthLevel.OK] * 5 + [HealthLevel.ERROR]
    assert statuses[5].message.startswith('detached for overheating (68 C, error limit 65 C)')
    assert 'call ~/enable false, then true' in statuses[5].message
    assert statuses[5].values['detached'] == 'overheating'


def test_pwm_servos_report_no_temperature_and_nothing_is_detached():
    rig = Rig()
    rig.start_at(HOME)
    rig.advance(1.0)
    assert rig.output.limped == [] and rig.driver.detached_for_heat == frozenset()
