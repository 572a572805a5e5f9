"""A :class:`~fabrik_ros.driver.gripper.Gripper` on servo_driver's auxiliary servo: pure glue.

:class:`GripperDrive` reads where the gripper servo stands (its report, where the servo
gives one; else what was sent), feeds the gripper's rules, and carries their decisions to the
driver (the target, through the driver's own command intake, so clamps, speed limits and the
busy check apply as to joint_commands; a goal's speed) and to the servos (the torque limit,
written only when it changes). A detached driver (``~/enable`` false) or a board that is not
connected aborts the goal and refuses new ones.
"""

from collections.abc import Callable, Hashable
import math
from typing import Optional

from fabrik_ros.driver.arm_state_machine import LogLevel, LogLine, Phase
from fabrik_ros.driver.aux_axis import aux_axes, AuxAxis
from fabrik_ros.driver.gripper import (
    Gripper,
    GripperEnd,
    GripperGoal,
    GripperSettings,
    GripperState,
)
from fabrik_ros.driver.servo_driver import ServoDriver, SILENT_SERVO_ABORT_S
from fabrik_ros.driver.servo_output import ServoOutput
from fabrik_ros.kinematics import Arm

NO_GRIPPER = 'none'


class AmbiguousGripperError(ValueError):
    """``gripper_servo`` is '' and the arm has several auxiliary servos: which one is meant."""


def gripper_axis(arm: Arm, servo: str) -> Optional[AuxAxis]:
    """Return the auxiliary servo the ``gripper_servo`` parameter names (None: ``'none'``).

    ``''`` names the arm file's only auxiliary servo; an arm without one has no gripper.

    :raises ValueError: with the rule broken (the caller names the parameter and value) when
        it names no auxiliary servo; AmbiguousGripperError when it is '' and the arm has several
    """
    axes = aux_axes(arm.servo_map)
    names = [axis.name for axis in axes]
    if servo == NO_GRIPPER or (servo == '' and not axes):
        return None
    if servo == '':
        if len(axes) > 1:
            raise AmbiguousGripperError(f'the arm has {len(axes)} auxiliary servos '
                                   f'({", ".join(names)}): name one (or none)')
        return axes[0]
    for axis in axes:
        if axis.name == servo:
            return axis
    known = ', '.join(names) or 'it has none'
    raise ValueError(f'must name an auxiliary servo of the arm ({known}), or be empty or '
                     f'{NO_GRIPPER}')


class GripperDrive:
    """Run gripper goals and the stall protection on servo_driver's gripper servo.

    :param driver: the driver core (its command intake, motion and state)
    :param output: the servos (reports, loads, torque limits)
    :param arm: the arm (the servo order)
    :param axis: the gripper's auxiliary servo (:func:`gripper_axis`)
    :param settings: the gripper parameters
    :param clock: the driver's monotonic clock [s]
    :param log: where lines to log go
    :param after_command: called after the gripper was commanded (the node paces its control
        tick: the move starts at the control rate)
    """

    def __init__(self, driver: ServoDriver, output: ServoOutput, arm: Arm, axis: AuxAxis, *,
                 settings: GripperSettings, clock: Callable[[], float],
                 log: Callable[[LogLine], None],
                 after_command: Callable[[], None] = lambda: None) -> None:
        self._driver, self._output, self._axis = driver, output, axis
        self._clock, self._log, self._after_command = clock, log, after_command
        axes = [a.name for a in aux_axes(arm.servo_map)]
        self._aux_index = axes.index(axis.name)
        self._index = len(arm.joints) + self._aux_index
        self.gripper = Gripper(axis.name, axis.low, axis.high, unit=axis.range_note,
                               settings=settings)
        self._limit_sent: Optional[float] = None
        self._speed_sent: Optional[float] = None
        self._said_no_limit = False
        # When the servo last reported where it stands (None: it never did, a PWM servo
        # without feedback, judged by its command) [s].
        self._heard_s: Optional[float] = None

    @property
    def name(self) -> str:
        """Return the gripper servo's name."""
        return self._axis.name

    def set_settings(self, settings: GripperSettings) -> None:
        """Use new gripper parameters from the next tick on."""
        self.gripper.settings = settings

    def refusal(self, goal: GripperGoal) -> Optional[str]:
        """Return why ``goal`` cannot start now, None when it can."""
        state = self._not_running()
        return state if state else self.gripper.check(goal)

    def start(self, goal_id: Hashable, goal: GripperGoal) -> Optional[str]:
        """Start ``goal`` (replacing a running one); return why not, None when started."""
        refusal = self.refusal(goal)
        if refusal is not None:
            return refusal
        self.gripper.start(goal_id, goal, now_s=self._clock())
        self._apply()
        return None

    def cancel(self, goal_id: Hashable) -> bool:
        """Cancel goal ``goal_id`` if it runs: the gripper holds where it stands."""
        position, _ = self._where(self._clock())
        done = self.gripper.cancel(goal_id, position=position)
        self._apply()
        return done

    def tick(self) -> None:
        """Feed where the gripper stands to its rules and carry out what they decide."""
        now = self._clock()
        reason = self._not_running()
        if reason:
            # Limp or offline, the servo goes where a hand puts it: that is no stall.
            self.gripper.abort(reason)
            self._apply()
            if self._heard_s is not None:
                self._heard_s = now     # its silence counts from the board's return
            return
        position, measured_at = self._where(now)
        if measured_at is not None:
            self._heard_s = now
        elif self._heard_s is not None:
            # A servo that reports (a bus servo) is judged by its reports only: its command
            # would say a jaw stopped by an object reached its goal. A report late on a loaded
            # machine waits; a servo silent for long, as its link judges, ends the goal.
            quiet_s = now - self._heard_s
            if (quiet_s > SILENT_SERVO_ABORT_S and self.gripper.active_goal is not None
                    and self._output.named_silent(self._index) is not False):
                self.gripper.abort(f'{self.name} servo silent for {quiet_s:.1f} s (detached, '
                                   'unplugged or unpowered?)')
                self._apply()
            return
        planner = self._driver.planner
        sent = planner.sent if planner.sent is not None else planner.target
        # The load is only said in a goal's feedback and result: not read otherwise.
        running = self.gripper.active_goal is not None
        effort = self._output.effort(self._index, now) if running else None
        self.gripper.update(now, commanded=planner.target[self._index], sent=sent[self._index],
                            position=position, measured=measured_at is not None,
                            effort=effort, measured_at_s=measured_at)
        self._apply()

    def feedback(self) -> Optional[tuple[Hashable, GripperState]]:
        """Return the running goal's id and state, None when none runs."""
        return self.gripper.feedback()

    def take_ends(self) -> list[GripperEnd]:
        """Return the goals that ended since the last call."""
        return self.gripper.take_ends()

    @property
    def busy(self) -> bool:
        """Return True while a goal runs or the gripper moves: the tick has work to do."""
        planner = self._driver.planner
        return self.gripper.active_goal is not None or not planner.settled

    def _not_running(self) -> str:
        driver = self._driver
        if not driver.enabled:
            return 'the servos are detached (~/enable false)'
        if driver.phase is not Phase.RUNNING:
            return f'the servos are {driver.phase.value}: the board is not connected or ready'
        if self._index in driver.detached_for_heat:
            return (f'the {self.name} servo is detached for overheating (let it cool, then '
                    '~/enable false and true)')
        return ''

    def _where(self, now_s: float) -> tuple[float, Optional[float]]:
        """Return where the gripper stands and when that was measured (None: commanded)."""
        report = self._output.report(now_s)
        if report is not None:
            units = report.units[self._index]
            if units is not None and math.isfinite(units):
                return self._axis.position(units), report.stamp_s
        sent = self._driver.planner.sent
        base = sent if sent is not None else self._driver.planner.target
        return base[self._index], None

    def _apply(self) -> None:
        gripper = self.gripper
        target = gripper.take_target()
        if gripper.speed != self._speed_sent:
            self._speed_sent = gripper.speed
            self._driver.set_aux_speed_of(self.name, gripper.speed)
        if target is not None:
            self._driver.take_commands([self.name], [target])
            self._after_command()
        limit = gripper.torque_limit
        if limit == self._limit_sent:
            return
        self._limit_sent = limit
        if self._output.torque_limit(self._index, limit):
            how = 'full' if limit is None else f'{limit:.0%} of full'
            level = LogLevel.WARN if gripper.stalled else LogLevel.INFO
            why = ' (stalled: holding what it grips)' if gripper.stalled else ''
            self._log(LogLine(level, f'{self.name}: torque limit {how}{why}'))
        elif limit is not None and not self._said_no_limit:
            self._said_no_limit = True
            self._log(LogLine(LogLevel.INFO, f'{self.name}: max_effort does not apply, the '
                                             'servo has no torque limit (PWM); said once'))
