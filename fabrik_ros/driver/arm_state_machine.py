"""The safe start, enable / detach, home and reconnect logic of servo_driver, without ROS.

Every event the driver sees (the board connects or is lost, ``~/enable``, ``~/home``, a joint
command, a control tick) goes into one :class:`ArmStateMachine`, which answers with
:class:`Actions`: what to send to the link, whether to attach or detach the servos, what to
reply to a service call and what to log. The clock is a parameter of every event, so any order
of events can be tested without a board, a thread or a timer.

The rules it keeps:

- Enable / detach is a request that holds across connects and reconnects: detached, the servos
  stay limp whenever the board connects; attached, each connect (and each re-attach) starts
  safely.
- A safe start never jumps: the servos are first held where the board reports them, then move
  from there (home at the first start; to the latest command after a reconnect or a
  re-attach, at the speed limits). A board that reports nothing is sent home over the slow
  home move.
- Commands are latched in every state and followed once the servos are attached; a command
  while detached is held, and said so once.
- The poses are every servo's positions (the joints' angles, then the auxiliary servos'
  positions, see :mod:`.servo_driver`): a gripper is held where it stands like a joint.
- Replies speak of the arm and the board, never of the link's calls.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
import enum
from typing import Optional

from fabrik_ros.driver.motion import Angles, MotionPlanner, Send
from fabrik_ros.monitoring.cause_throttle import CauseThrottle


class Phase(enum.Enum):
    """Where the arm is between the board's link and the servos."""

    OFFLINE = 'offline'      # no board: nothing can be sent
    DETACHED = 'detached'    # board connected, servos limp on request
    READING = 'reading'      # connected and attaching: waiting for the board's position report
    HOLDING = 'holding'      # told to hold the reported pose; waiting for the board to have it
    RUNNING = 'running'      # attached: moving home or following commands


class LogLevel(enum.Enum):
    """Severity of a log line the node prints."""

    INFO = 'info'
    WARN = 'warn'
    ERROR = 'error'     # the driver acted to protect a servo (detached it for overheating)


@dataclass(frozen=True)
class LogLine:
    """One line for the node's log."""

    level: LogLevel
    text: str


@dataclass(frozen=True)
class Reply:
    """The answer to a service call."""

    success: bool
    message: str


@dataclass(frozen=True)
class Actions:
    """What the node does after an event, in this order: send, attach or detach, reply, log.

    :param send: angles [rad] and move time [s] to send to the board
    :param attach: True to make the arm's channels pulse, False to detach every channel
    :param reply: the answer to the service call that caused the event
    :param logs: lines to print
    """

    send: Optional[Send] = None
    attach: Optional[bool] = None
    reply: Optional[Reply] = None
    logs: tuple[LogLine, ...] = ()


NOTHING = Actions()


class ArmStateMachine:
    """Decide, event by event, what servo_driver sends, replies and logs.

    >>> from fabrik_ros.driver.slew import SlewLimiter
    >>> planner = MotionPlanner(SlewLimiter((1.0,)), (0.0,), home_move_s=2.0, step_s=0.02)
    >>> arm = ArmStateMachine(planner)
    >>> arm.enable(0.0, True).reply.message[:65]
    'servos will attach once the board connects: held where the board '
    >>> arm.connect(1.0, 'board v1').logs[0].text
    'board connected: board v1'
    >>> arm.tick(1.1, (0.5,), synced=False)
    Actions(send=Send(angles_rad=(0.5,), move_s=0.0), attach=True, reply=None, logs=())
    >>> arm.tick(1.2, (0.5,), synced=True).send
    Send(angles_rad=(0.0,), move_s=2.0)

    :param planner: the speed-limited motion toward the latest command
    :param start_wait_s: after connecting, the longest wait for a position report [s]
    :param warn_every_s: how often one cause of link trouble is logged again [s]
    """

    def __init__(self, planner: MotionPlanner, *, start_wait_s: float = 0.5,
                 warn_every_s: float = 10.0) -> None:
        self._planner = planner
        self._start_wait_s = start_wait_s
        self._now_s = 0.0
        self._throttle = CauseThrottle(warn_every_s, clock=lambda: self._now_s)
        self.phase = Phase.OFFLINE
        self.enabled = True
        self._reading_since = 0.0
        self._held: Optional[Angles] = None
        self._ever_connected = False
        self._lost_at: Optional[float] = None
        self._told_held = False

    @property
    def connected(self) -> bool:
        """Return True while the board is connected."""
        return self.phase is not Phase.OFFLINE

    @property
    def attached(self) -> bool:
        """Return True once the servos were told to pulse (and until detached or lost)."""
        return self.phase in (Phase.HOLDING, Phase.RUNNING)

    # -- link events -------------------------------------------------------------------------

    def connect(self, now_s: float, board: str) -> Actions:
        """Note that the board answered; attach safely on later ticks, or keep it detached.

        :param board: what the board said it is, for the log
        """
        self._now_s = now_s
        if self.connected:
            return NOTHING
        text = f'board connected: {board}'
        if self._lost_at is not None:
            text = f'board back after {now_s - self._lost_at:.1f} s: {board}'
        self._ever_connected, self._lost_at = True, None
        logs = (LogLine(LogLevel.INFO, text),)
        if not self.enabled:
            self.phase = Phase.DETACHED
            return Actions(attach=False, logs=logs + (
                LogLine(LogLevel.INFO, 'servos kept detached, as asked'),))
        self._begin_reading(now_s)
        return Actions(logs=logs)

    def lose(self, now_s: float, reason: str, *, cause: Optional[Hashable] = None) -> Actions:
        """Note that the link is down or could not come up, because of ``reason``.

        Logged once per ``cause`` (default: the reason itself) every ``warn_every_s``.
        """
        self._now_s = now_s
        self._planner.pause(now_s)
        was_connected = self.connected
        self.phase = Phase.OFFLINE
        if was_connected:
            self._lost_at = now_s
            text = f'board lost: {reason}; reconnecting (the arm resumes without a jump)'
        elif self._ever_connected:
            text = f'board still lost: {reason}; retrying'
        else:
            text = f'board not reachable: {reason}; retrying until it answers'
        if not self._throttle.allow(reason if cause is None else cause):
            return NOTHING
        return Actions(logs=(LogLine(LogLevel.WARN, text),))

    # -- requests ------------------------------------------------------------------------------

    def enable(self, now_s: float, on: bool) -> Actions:
        """Attach (``on``) or detach the servos, now if the board is connected, else on connect."""
        self._now_s = now_s
        if not on:
            return self._disable(now_s)
        was_enabled, self.enabled = self.enabled, True
        self._told_held = False
        if not self.connected:
            board = 'is back' if self._ever_connected else 'connects'
            return _reply(True, f'servos will attach once the board {board}: '
                          f'{self._attach_plan()}')
        if was_enabled and self.phase is not Phase.DETACHED:
            return _reply(True, 'servos already attached')
        self._begin_reading(now_s)
        return _reply(True, f'servos attaching: {self._attach_plan()}')

    def _attach_plan(self) -> str:
        """Say what attaching will do: what :meth:`_move_from` does after the read."""
        if not self._planner.started:
            return ('held where the board reports them, then moving home slowly (over at least '
                    f'{self._planner.home_move_s:.1f} s)')
        return ('held where the board reports them, then moving on to the latest command at '
                'the speed limits (if the board reports no pose: home slowly first)')

    def _disable(self, now_s: float) -> Actions:
        self.enabled = False
        if not self.connected:
            return _reply(True, 'servos will stay detached when the board connects')
        self._planner.pause(now_s)
        self.phase = Phase.DETACHED
        return Actions(attach=False, reply=Reply(True, 'servos detached (limp)'))

    def home(self, now_s: float) -> Actions:
        """Move home slowly, or refuse with the reason if the servos cannot move now."""
        self._now_s = now_s
        if not self.enabled:
            return _reply(False, 'servos detached: call ~/enable with true first (the arm '
                          'then starts without a jump)')
        if not self.connected:
            return _reply(False, 'board not connected; the arm moves home by itself once it is')
        if self.phase is not Phase.RUNNING:
            self._planner.command(self._planner.home_rad)
            return _reply(True, 'servos attaching: the arm moves home once it is held')
        send = self._planner.go_home(now_s)
        return Actions(send=send, reply=Reply(True, f'moving home over {send.move_s:.1f} s'))

    def command(self, now_s: float, angles_rad: Sequence[float]) -> Actions:
        """Make ``angles_rad`` the pose to move to; step toward it now if the servos follow."""
        self._now_s = now_s
        self._planner.command(angles_rad)
        if self.phase is Phase.RUNNING:
            return Actions(send=self._planner.step(now_s))
        return self._held_if_detached()

    def _held_if_detached(self) -> Actions:
        if self.enabled or self._told_held:
            return NOTHING
        self._told_held = True
        return Actions(logs=(LogLine(LogLevel.INFO, 'servos detached: command held (call '
                                     '~/enable with true to follow it)'),))

    # -- time ------------------------------------------------------------------------------------

    def tick(self, now_s: float, reported: Optional[Sequence[float]], *,
             synced: bool) -> Actions:
        """Advance on a control tick.

        :param reported: the joint angles the board reported since it connected [rad], or
            None if it has not
        :param synced: whether the board has everything sent so far (acknowledged, or written
            for protocols without acknowledgements)
        """
        self._now_s = now_s
        if self.phase is Phase.RUNNING:
            return Actions(send=self._planner.step(now_s))
        if self.phase is Phase.READING:
            return self._read(now_s, reported)
        if self.phase is Phase.HOLDING and synced:
            return self._move_from(now_s, self._held)
        if self.phase in (Phase.OFFLINE, Phase.DETACHED):
            self._planner.pause(now_s)
        return NOTHING

    def _begin_reading(self, now_s: float) -> None:
        self.phase = Phase.READING
        self._reading_since = now_s

    def _read(self, now_s: float, reported: Optional[Sequence[float]]) -> Actions:
        """Hold the reported pose, or after ``start_wait_s`` without one, go home slowly."""
        if reported is not None:
            # SSC-32U and Maestro ignore a move time for a servo they have no position for
            # and would jump: hold where the board is first, move once it has that.
            self._held = tuple(float(a) for a in reported)
            self.phase = Phase.HOLDING
            return Actions(send=Send(self._held, 0.0), attach=True)
        if now_s - self._reading_since < self._start_wait_s:
            return NOTHING
        actions = self._move_from(now_s, None)
        return Actions(send=actions.send, attach=True, logs=actions.logs)

    def _move_from(self, now_s: float, current: Optional[Angles]) -> Actions:
        self.phase = Phase.RUNNING
        planner = self._planner
        if current is not None and planner.started:
            planner.resume(now_s, current)
            return Actions(send=planner.step(now_s), logs=(LogLine(
                LogLevel.INFO, 'servos attached: moving on from the reported pose to the '
                'latest command at the speed limits'),))
        started = planner.started
        send = planner.start(now_s, current)
        if started:
            # Re-attached or reconnected, and the board reports no pose to move on from.
            text = (f'servos attached: the board reports no pose, so the arm moves home slowly '
                    f'over {send.move_s:.1f} s from wherever it stands, then on to the latest '
                    'command')
        else:
            pose = 'the reported' if current is not None else 'an unknown'
            text = f'board ready: moving home over {send.move_s:.1f} s from {pose} pose'
        return Actions(send=send, logs=(LogLine(LogLevel.INFO, text),))


def _reply(success: bool, message: str) -> Actions:
    return Actions(reply=Reply(success, message))
