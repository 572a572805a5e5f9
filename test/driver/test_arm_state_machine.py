"""ArmStateMachine over every order of events, against a model of a board (issue 11, item 5)."""

from dataclasses import dataclass
import re
from typing import Optional

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule, RuleBasedStateMachine
import pytest

from fabrik_ros.driver.arm_state_machine import Actions, ArmStateMachine, LogLevel, Phase
from fabrik_ros.driver.motion import MotionPlanner, Send
from fabrik_ros.driver.slew import SlewLimiter

SPEEDS = (1.0, 2.0)
HOME = (0.0, 0.5)
HOME_MOVE_S = 1.0
STEP_S = 0.02
START_WAIT_S = 0.5
EPS = 1e-9
# What a user must never read in a reply: calls, exception names, enum members.
INTERNAL = re.compile(r'\w+\(\)|set_pulses|Error|Exception|Traceback|LinkState|Phase\.')
ANGLE = st.floats(-2.0, 2.0, allow_nan=False)


def _machine() -> ArmStateMachine:
    planner = MotionPlanner(SlewLimiter(SPEEDS), HOME, home_move_s=HOME_MOVE_S, step_s=STEP_S)
    return ArmStateMachine(planner, start_wait_s=START_WAIT_S)


@dataclass
class BoardModel:
    """Servos that move linearly from where they are to the target over the move time."""

    pulsing: bool = False
    start: tuple[float, ...] = HOME
    target: tuple[float, ...] = HOME
    started_s: float = 0.0
    move_s: float = 0.0

    def pose(self, now_s: float) -> tuple[float, ...]:
        if self.move_s <= 0.0 or now_s >= self.started_s + self.move_s:
            return self.target
        k = (now_s - self.started_s) / self.move_s
        return tuple(a + (b - a) * k for a, b in zip(self.start, self.target, strict=True))

    def go(self, now_s: float, send: Send) -> None:
        self.start = self.pose(now_s) if self.pulsing else send.angles_rad
        self.target, self.started_s, self.move_s = send.angles_rad, now_s, send.move_s


class DriverMachine(RuleBasedStateMachine):
    """Drive the state machine with every event in any order; the board model checks it."""

    @initialize(reports=st.booleans(), pulsing=st.booleans(), pose=st.tuples(ANGLE, ANGLE))
    def set_up(self, reports, pulsing, pose):
        self.now = 0.0
        self.reports = reports                 # the board reports the pose of pulsing servos
        self.board = BoardModel(pulsing=pulsing, start=pose, target=pose)
        self.link_up = False
        self.arm = _machine()
        self.wanted = HOME                     # where the arm must end up once it can move
        self.unknown_start = False             # the last tick had no report to start from
        self.last_send: Optional[Send] = None  # last send since the board stopped pulsing
        self.held_logs = 0                     # "command held" lines in this detached spell
        self.promise: Optional[str] = None     # what the last ~/enable true said would happen

    # -- events ------------------------------------------------------------------------------

    @rule()
    def restart(self):
        """Start a new driver process: fresh machine, new link; the board keeps its state."""
        self.arm, self.link_up, self.held_logs = _machine(), False, 0
        self.wanted, self.promise = HOME, None

    @rule()
    def connect(self):
        if not self.link_up:
            self.link_up = True
            self._apply(self.arm.connect(self.now, 'sim board'))

    @rule(reset=st.booleans(), reason=st.sampled_from(['no such device', 'board silent']))
    def lose(self, reset, reason):
        self.link_up = False
        if reset:
            self.board.pulsing = False
        self._apply(self.arm.lose(self.now, reason))

    @rule(on=st.booleans())
    def enable(self, on):
        if on:
            self.held_logs = 0
        actions = self._apply(self.arm.enable(self.now, on))
        assert actions.reply.success
        message = actions.reply.message
        if not on:
            self.promise = None
        elif 'then moving home slowly' in message:
            self.promise = 'home'
        elif 'then moving on to the latest command' in message:
            self.promise = 'latest'
        else:
            assert message == 'servos already attached', message

    @rule()
    def home(self):
        can_move = self.arm.enabled and self.link_up
        actions = self._apply(self.arm.home(self.now))
        assert actions.reply.success is can_move, actions.reply
        if can_move:
            self.wanted = HOME

    @rule(angles=st.tuples(ANGLE, ANGLE))
    def command(self, angles):
        actions = self._apply(self.arm.command(self.now, angles))
        self.wanted = angles
        held = [line for line in actions.logs if 'command held' in line.text]
        self.held_logs += len(held)
        if not self.arm.enabled:
            assert self.held_logs == 1, 'a command while detached is said to be held, once'

    @rule(dt=st.sampled_from([0.0, 0.005, STEP_S, 0.1, 0.4, 1.5]), synced=st.booleans())
    def tick(self, dt, synced):
        self.now += dt
        self._tick(synced)

    @rule()
    def settle(self):
        """With the board up and the servos wanted, the arm attaches and reaches the target."""
        if not (self.link_up and self.arm.enabled):
            return
        for _ in range(int((START_WAIT_S + HOME_MOVE_S + 10.0) / STEP_S)):
            self.now += STEP_S
            self._tick(True)
            if self.arm.phase is Phase.RUNNING and self._arrived():
                break
        assert self.arm.phase is Phase.RUNNING and self.board.pulsing
        assert self._arrived(), (self.board.pose(self.now), self.wanted)

    def _arrived(self) -> bool:
        pose = self.board.pose(self.now)
        return all(abs(a - b) <= 1e-9 for a, b in zip(pose, self.wanted, strict=True))

    # -- the board's side ----------------------------------------------------------------------

    def _tick(self, synced: bool) -> None:
        reported = None
        if self.link_up and self.reports and self.board.pulsing:
            reported = self.board.pose(self.now)
        self.unknown_start = reported is None
        self._apply(self.arm.tick(self.now, reported, synced=synced))

    def _apply(self, actions: Actions) -> Actions:
        if actions.reply is not None:
            assert not INTERNAL.search(actions.reply.message), actions.reply.message
        assert all(line.level in LogLevel for line in actions.logs)
        if actions.send is not None or actions.attach is not None:
            assert self.link_up, f'{actions} without a board'
        self._check_promise(actions)
        if actions.send is not None:
            assert self.arm.enabled, f'{actions.send} while detached'
            self._check_no_jump(actions.send)
            self.board.go(self.now, actions.send)
            self.last_send = actions.send
        if actions.attach is True:
            assert self.arm.enabled
            if not self.board.pulsing:
                self._check_attach_from_limp()
            self.board.pulsing = True
        elif actions.attach is False:
            self.board.pulsing = False
        return actions

    def _check_promise(self, actions: Actions) -> None:
        """Check that the move ending an attach is the one ~/enable promised (issue 24.6)."""
        moves = [line.text for line in actions.logs
                 if line.text.startswith(('board ready:', 'servos attached:'))]
        if self.promise is None or not moves:
            return
        send = actions.send
        slow_home = send is not None and send.angles_rad == HOME and send.move_s >= HOME_MOVE_S
        if self.promise == 'home' or self.unknown_start:
            # Promised home, or promised the latest command with home first if no pose.
            assert slow_home, (self.promise, moves, send)
        else:
            assert 'moving on from the reported pose' in moves[0], (self.promise, moves)
        self.promise = None

    def _check_no_jump(self, send: Send) -> None:
        if not self.board.pulsing:
            return
        if self.unknown_start and send.angles_rad == HOME and send.move_s >= HOME_MOVE_S:
            return   # nothing reported: the slow move home is the best that can be done
        board = self.board
        if send.angles_rad == board.target and abs(
                self.now + send.move_s - (board.started_s + board.move_s)) <= EPS:
            return   # the same target at the same arrival: the move the board makes goes on
        pose = self.board.pose(self.now)
        for now, goal, speed in zip(pose, send.angles_rad, SPEEDS, strict=True):
            assert abs(goal - now) <= speed * send.move_s + EPS, (pose, send)

    def _check_attach_from_limp(self) -> None:
        send = self.last_send
        assert send is not None, 'attached without a target'
        assert send.angles_rad == HOME and send.move_s >= HOME_MOVE_S, (
            f'limp servos attached at {send}, not on the slow move home')

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def never_pulses_while_detached(self):
        if getattr(self, 'link_up', False) and not self.arm.enabled:
            assert not self.board.pulsing

    @invariant()
    def the_phase_follows_the_link(self):
        if hasattr(self, 'arm'):
            assert self.arm.connected is self.link_up


TestDriverMachine = DriverMachine.TestCase
TestDriverMachine.settings = settings(max_examples=1000, stateful_step_count=40, deadline=None)


# -- the scenarios of issue 11, item 5, one by one ----------------------------------------------

def _run_to_running(arm: ArmStateMachine, now: float, reported) -> float:
    for _ in range(100):
        now += STEP_S
        arm.tick(now, reported, synced=True)
        if arm.phase is Phase.RUNNING:
            return now
    raise AssertionError(f'still {arm.phase} at {now} s')


def test_enable_before_the_first_connection_is_kept_and_the_arm_homes_on_connect():
    arm = _machine()
    off = arm.enable(0.0, False)
    assert off.reply.success and off.send is None and off.attach is None
    on = arm.enable(0.1, True)
    assert on.reply.success and 'once the board connects' in on.reply.message
    arm.connect(1.0, 'sim board')
    now = _run_to_running(arm, 1.0, None)
    assert arm.attached
    assert arm.home(now).reply.success


def test_a_detached_request_holds_across_a_reconnect_and_home_is_refused_with_the_reason():
    arm = _machine()
    arm.enable(0.0, False)
    connected = arm.connect(1.0, 'sim board')
    assert connected.attach is False
    home = arm.home(1.1)
    assert not home.reply.success and 'detached' in home.reply.message
    arm.lose(2.0, 'unplugged')
    assert arm.connect(3.0, 'sim board').attach is False


def test_a_command_while_detached_is_held_logged_once_and_followed_after_attaching():
    arm = _machine()
    arm.connect(0.0, 'sim board')
    now = _run_to_running(arm, 0.0, HOME)
    arm.enable(now, False)
    first = arm.command(now, (0.2, 0.4))
    second = arm.command(now, (0.3, 0.4))
    assert [line.text for line in first.logs] == [
        'servos detached: command held (call ~/enable with true to follow it)']
    assert second == Actions()
    arm.enable(now, True)
    hold = arm.tick(now + STEP_S, (0.05, 0.5), synced=False)
    assert hold.send == Send((0.05, 0.5), 0.0) and hold.attach is True
    moved = arm.tick(now + 2 * STEP_S, (0.05, 0.5), synced=True)
    assert moved.send.angles_rad[0] == pytest.approx(0.05 + SPEEDS[0] * STEP_S)


def test_enable_while_unplugged_says_the_arm_moves_on_and_it_does():
    """Issue 24.6: after a loss, the reply promises what the reconnect then does."""
    arm = _machine()
    arm.connect(0.0, 'sim board')
    now = _run_to_running(arm, 0.0, HOME)
    arm.command(now, (0.3, 0.2))
    arm.lose(now, 'unplugged')
    reply = arm.enable(now, True).reply.message
    assert reply.startswith('servos will attach once the board is back: ')
    assert 'then moving on to the latest command at the speed limits' in reply
    arm.connect(now + 1.0, 'sim board')
    logs = []
    for k in range(1, 10):
        logs += [line.text for line in arm.tick(now + 1.0 + k * STEP_S, (0.1, 0.4),
                                                 synced=True).logs]
    assert logs == ['servos attached: moving on from the reported pose to the latest command '
                    'at the speed limits']


def test_enable_after_a_detach_without_a_reported_pose_says_so_not_the_boot_line():
    """Issue 24.6: a re-attach with no pose reported is not "board ready ... unknown pose"."""
    arm = _machine()
    arm.connect(0.0, 'sim board')
    now = _run_to_running(arm, 0.0, HOME)
    arm.enable(now, False)
    reply = arm.enable(now, True).reply.message
    assert reply.startswith('servos attaching: held where the board reports them, then moving '
                            'on to the latest command'), reply
    logs = []
    for k in range(1, 40):
        logs += [line.text for line in arm.tick(now + k * STEP_S, None, synced=True).logs]
    assert logs == [f'servos attached: the board reports no pose, so the arm moves home slowly '
                    f'over {HOME_MOVE_S:.1f} s from wherever it stands, then on to the latest '
                    'command']


def test_a_lost_board_is_logged_per_cause_with_the_retry_and_its_return_with_the_time():
    arm = _machine()
    lines = [arm.lose(t, 'no such device').logs for t in (0.0, 1.0, 11.0)]
    assert [len(logs) for logs in lines] == [1, 0, 1]
    assert lines[0][0].level is LogLevel.WARN
    assert lines[0][0].text == 'board not reachable: no such device; retrying until it answers'
    assert arm.lose(12.0, 'permission denied').logs, 'a new cause is not throttled'
    assert arm.connect(13.0, 'v1').logs[0].text == 'board connected: v1'
    lost = arm.lose(20.0, 'board silent').logs[0]
    assert lost.level is LogLevel.WARN and 'reconnecting' in lost.text
    assert arm.connect(22.5, 'v1').logs[0].text == 'board back after 2.5 s: v1'
