"""One gripper goal on an auxiliary servo, and the servo's stall protection: pure, clock passed in.

What GripperCommand and ParallelGripperCommand goals mean here (the semantics of ros2_control's
gripper_action_controller and parallel_gripper_controller, decided for hobby servos):

- **Position** in the gripper joint's own unit, the one joint_states publishes it in (PWM:
  the fraction of the pulse range; bus: rad). A goal outside the axis's range, or not
  finite, is refused with a message naming the range: never clamped into something the
  caller did not ask for.
- **Speed**: the auxiliary servos' speed limit (``aux_max_speed``); a ParallelGripperCommand
  velocity lowers it for that goal (never raises it).
- **max_effort** is a fraction of the servo's full torque, applied through its torque-limit
  register for that goal; <= 0 means the full torque, above 1 is the full torque too. The
  reported ``effort`` is in the same unit: the servo's load as a signed fraction of its full
  torque where it reports one (bus servos), 0.0 where it does not (PWM).
- **reached_goal**: the gripper stands within ``goal_tolerance`` of the goal (measured where
  the servo reports its position, else commanded); the goal succeeds.
- **stalled**: the servo stopped short of its target: it moved less than ``stall_motion``
  for ``stall_time_s`` while further than the tolerance from the position last sent to it
  (the driver sends a target step by step at the speed limit: a servo still waiting for
  its steps is not stalled), the time counted between its measurements (reports that pause
  make no stall). The gripper is holding something. The goal ends: succeeded with stalled
  true (``allow_stalling``, the default: a gripper that grasps did what was asked), else
  aborted. Only measured positions can stall.
- A new goal replaces the running one (which ends aborted, 'replaced by a newer goal'); a
  cancel holds the gripper where it stands (as last measured); a detached driver or a lost
  board aborts it (the host says why, :meth:`Gripper.abort`); a joint_commands message that
  moves the gripper elsewhere aborts it too.

Stall protection runs whatever commanded the gripper (a goal or joint_commands): once the
servo stalls, its torque limit drops to ``holding_effort`` (never above the goal's own
max_effort) until a command moves it away from the obstacle (back the way it came) or a new
goal starts; then the limit is the goal's max_effort again (the full torque outside a goal).
The servo keeps its target, so it grips with the holding effort instead of burning at full
torque.
"""

from collections.abc import Hashable
from dataclasses import dataclass
import enum
import math
from typing import Optional

# The share of the axis's range a servo must move within the stall time not to be stalled.
STALL_MOTION_SHARE = 0.01
# Two targets closer than this [the axis's unit] are the same command.
_SAME_TARGET = 1e-9


class Ending(enum.Enum):
    """How a gripper goal ended (the action's terminal state)."""

    SUCCEEDED = 'succeeded'
    ABORTED = 'aborted'
    CANCELED = 'canceled'


@dataclass(frozen=True)
class GripperSettings:
    """The node's gripper parameters.

    :param goal_tolerance: how close to the goal is reached [the axis's unit]
    :param stall_time_s: how long the servo must stand short of its target to be stalled [s]
    :param holding_effort: the torque limit once stalled, a fraction of the full torque
    :param allow_stalling: a stalled goal succeeds (True) or aborts (False)
    """

    goal_tolerance: float = 0.02
    stall_time_s: float = 0.5
    holding_effort: float = 0.3
    allow_stalling: bool = True

    def __post_init__(self) -> None:
        """Refuse values the rules above cannot use, naming the field and the rule."""
        for name, value in (('goal_tolerance', self.goal_tolerance),
                            ('stall_time_s', self.stall_time_s)):
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f'{name} = {value!r}, must be finite and > 0')
        if not 0.0 <= self.holding_effort <= 1.0:
            raise ValueError(f'holding_effort = {self.holding_effort!r}, must be within '
                             '[0.0, 1.0] (a fraction of the full torque)')


@dataclass(frozen=True)
class GripperGoal:
    """What a goal asks: a position, an effort and, optionally, a speed.

    :param position: where the gripper goes [the axis's unit]
    :param max_effort: a fraction of the full torque; <= 0: the full torque
    :param speed: the fastest it may move [unit/s]; None: the auxiliary speed limit
    """

    position: float
    max_effort: float = 0.0
    speed: Optional[float] = None


@dataclass(frozen=True)
class GripperState:
    """A goal's feedback and result fields (see the module docstring for the units)."""

    position: float
    effort: float
    stalled: bool
    reached_goal: bool


@dataclass(frozen=True)
class GripperEnd:
    """A goal that ended: how, its last state, and why (for the log)."""

    goal_id: Hashable
    ending: Ending
    state: GripperState
    message: str


def effort_fraction(max_effort: float) -> Optional[float]:
    """Return the torque limit a goal's ``max_effort`` asks for (None: the full torque).

    >>> effort_fraction(0.0), effort_fraction(0.25), effort_fraction(7.0)
    (None, 0.25, None)
    """
    if not max_effort > 0.0 or max_effort >= 1.0:
        return None
    return float(max_effort)


@dataclass
class _Running:
    goal_id: Hashable
    goal: GripperGoal
    effort: Optional[float]


class Gripper:
    """One gripper's goal and stall protection (see the module docstring).

    Host-neutral: servo_driver and sim_arm each hold one and call :meth:`update` from their
    tick with where the gripper stands, then apply :attr:`target`, :attr:`speed` and
    :attr:`torque_limit`.

    :param name: the auxiliary servo's name (for messages)
    :param low: the lowest position [the axis's unit]
    :param high: the highest position
    :param unit: what the unit is, for messages (``'rad'``, ``'fraction of min_us ...'``)
    :param settings: the node's parameters
    """

    def __init__(self, name: str, low: float, high: float, *, unit: str,
                 settings: GripperSettings) -> None:
        self.name, self.low, self.high, self.unit = name, float(low), float(high), unit
        self.settings = settings
        self.stall_motion = STALL_MOTION_SHARE * (self.high - self.low)
        self.target: Optional[float] = None       # a position to command, once (take_target)
        self.speed: Optional[float] = None        # the running goal's speed limit
        self.torque_limit: Optional[float] = None  # the wished limit (None: full)
        self._running: Optional[_Running] = None
        self._ends: list[GripperEnd] = []
        self._state = GripperState(self.low, 0.0, False, False)
        self._commanded: Optional[float] = None    # the gripper's target as last seen
        self._anchor: tuple[float, float] = (math.nan, 0.0)   # (position, since [s])
        self._pushing = 0                          # stalled: +1 / -1 toward the obstacle
        self._stall_at = 0.0
        self._goal_effort: Optional[float] = None  # the limit outside the stall

    # -- goals --------------------------------------------------------------------------------

    def check(self, goal: GripperGoal) -> Optional[str]:
        """Return why ``goal`` cannot be taken, None when it can."""
        values = (('position', goal.position), ('max_effort', goal.max_effort))
        for field_name, value in values:
            if not math.isfinite(value):
                return f'{self.name}: {field_name} = {value!r}, must be finite'
        if not self.low <= goal.position <= self.high:
            return (f'{self.name}: position {goal.position:g} outside its range '
                    f'[{self.low:g}, {self.high:g}] ({self.unit})')
        if goal.speed is not None and not (math.isfinite(goal.speed) and goal.speed >= 0.0):
            return f'{self.name}: velocity = {goal.speed!r}, must be finite and >= 0'
        return None

    def start(self, goal_id: Hashable, goal: GripperGoal, *, now_s: float) -> Optional[str]:
        """Start ``goal``, ending a running one (aborted); return why not, None when started."""
        refusal = self.check(goal)
        if refusal is not None:
            return refusal
        self._end(Ending.ABORTED, 'replaced by a newer goal')
        effort = effort_fraction(goal.max_effort)
        self._running = _Running(goal_id, goal, effort)
        self._goal_effort = effort
        self._release()
        self.target = goal.position
        self.speed = goal.speed or None
        self._anchor = (math.nan, now_s)
        self._state = GripperState(self._state.position, self._state.effort, False, False)
        return None

    def cancel(self, goal_id: Hashable, *, position: float) -> bool:
        """Cancel the goal ``goal_id`` if it runs: hold where the gripper stands [unit]."""
        running = self._running
        if running is None or running.goal_id != goal_id:
            return False
        self.target = min(max(position, self.low), self.high)
        state = self._state
        self._state = GripperState(self.target, state.effort, state.stalled, False)
        self._end(Ending.CANCELED, f'canceled: holding at {self.target:g}')
        return True

    def abort(self, message: str) -> None:
        """End the running goal, if any, as aborted with ``message`` (the driver said why)."""
        self._end(Ending.ABORTED, message)

    @property
    def active_goal(self) -> Optional[Hashable]:
        """Return the running goal's id, None when none runs."""
        return None if self._running is None else self._running.goal_id

    def take_target(self) -> Optional[float]:
        """Return the position to command now (once), None when nothing new is to be sent."""
        target, self.target = self.target, None
        return target

    def take_ends(self) -> list[GripperEnd]:
        """Return the goals that ended since the last call, oldest first."""
        ends, self._ends = self._ends, []
        return ends

    def feedback(self) -> Optional[tuple[Hashable, GripperState]]:
        """Return the running goal's id and state, None when none runs."""
        running = self._running
        return None if running is None else (running.goal_id, self._state)

    @property
    def stalled(self) -> bool:
        """Return True while the stall protection holds the servo at the holding effort."""
        return self._pushing != 0

    # -- the tick -----------------------------------------------------------------------------

    def update(self, now_s: float, *, commanded: float, sent: float, position: float,
               measured: bool, effort: Optional[float],
               measured_at_s: Optional[float] = None) -> None:
        """Take where the gripper is, detect a stall, end the goal when it is done.

        :param commanded: the gripper's target as the driver holds it [unit]
        :param sent: the position last sent to the servo, on its speed-limited way to the
            target (the servo cannot be short of a target it was not yet sent)
        :param position: where it stands: measured (``measured``), else commanded
        :param effort: its load, a signed fraction of its full torque; None: not reported
        :param measured_at_s: when ``position`` was measured [s] (None: now); the stall time
            counts between measurements, so reports that pause never make a stall
        """
        self._follow_command(now_s, commanded)
        self._watch_motion(now_s if measured_at_s is None else measured_at_s, commanded, sent,
                           position, measured)
        self._state = GripperState(position, 0.0 if effort is None else effort,
                                   self.stalled, False)
        running = self._running
        if running is None or self.target is not None:
            return      # a target not yet sent: the goal has not begun to move
        goal = running.goal
        if abs(commanded - goal.position) > _SAME_TARGET:
            self._end(Ending.ABORTED, f'{self.name} commanded to {commanded:g} by '
                                      'joint_commands')
        elif abs(position - goal.position) <= self.settings.goal_tolerance:
            self._state = GripperState(position, self._state.effort, False, True)
            self._end(Ending.SUCCEEDED, f'reached {position:g}')
        elif self.stalled:
            allowed = self.settings.allow_stalling
            self._end(Ending.SUCCEEDED if allowed else Ending.ABORTED,
                      f'stalled at {position:g} short of {goal.position:g}: holding '
                      f'something (torque limit {self._limit_note()})')

    def _follow_command(self, now_s: float, commanded: float) -> None:
        """Note a new target; one away from the obstacle ends the stall protection."""
        previous = self._commanded
        self._commanded = commanded
        if previous is None or abs(commanded - previous) <= _SAME_TARGET:
            return
        self._anchor = (math.nan, now_s)
        if self._running is not None:
            return      # the goal's own target (start() set its limit), or one ending it
        if self._pushing and (commanded - self._stall_at) * self._pushing >= 0:
            return      # further into the obstacle: keep the holding effort
        self._goal_effort = None        # a command outside a goal: the full torque
        self._release()

    def _watch_motion(self, at_s: float, commanded: float, sent: float, position: float,
                      measured: bool) -> None:
        """Stall when the servo stands short of what it was sent for the stall time.

        The time counts from the last moment it moved (more than ``stall_motion``) or stood
        where it was sent: a servo that follows its steps is never stalled. Nor is one whose
        steps still come back from beyond it, away from what stopped it (a gripper opened
        after a stall: the steps unwind from the target it was squeezing toward).
        """
        short = sent - position
        anchor, since = self._anchor
        coming_back = short * (commanded - position) < 0.0
        if (math.isnan(anchor) or abs(position - anchor) > self.stall_motion
                or abs(short) <= self.settings.goal_tolerance or coming_back):
            self._anchor = (position, at_s)
            return
        if self._pushing or not measured or at_s - since < self.settings.stall_time_s:
            return
        self._pushing = 1 if short > 0 else -1
        self._stall_at = position
        hold = self.settings.holding_effort
        goal = self._goal_effort
        self.torque_limit = hold if goal is None else min(hold, goal)

    def _release(self) -> None:
        self._pushing = 0
        self.torque_limit = self._goal_effort

    def _limit_note(self) -> str:
        limit = self.torque_limit
        return 'full' if limit is None else f'{limit:.0%} of full'

    def _end(self, ending: Ending, message: str) -> None:
        running = self._running
        if running is None:
            return
        self._running = None
        self.speed = None
        self._ends.append(GripperEnd(running.goal_id, ending, self._state, message))
