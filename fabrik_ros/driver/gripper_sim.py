"""sim_arm's gripper: goals on its simulated auxiliary servo, which never stalls.

sim_arm moves every servo at its speed toward its target and has no servo to measure: the
gripper's position is the simulated one, taken as commanded (``measured`` false), so a goal
always reaches its position, and ``stalled`` is never true. max_effort has no torque limit to
set here; effort is reported as 0.0.
"""

from collections.abc import Callable, Hashable
from typing import Optional

from fabrik_ros.driver.aux_axis import AuxAxis
from fabrik_ros.driver.gripper import (
    Gripper,
    GripperEnd,
    GripperGoal,
    GripperSettings,
    GripperState,
)


class SimGripper:
    """Run gripper goals on sim_arm's simulated gripper servo.

    :param axis: the gripper's auxiliary servo
    :param settings: the gripper parameters (only ``goal_tolerance`` matters: no stall)
    :param clock: monotonic time [s]
    :param read: returns the gripper's target and its simulated position [unit]
    :param command: makes a position the gripper's target [unit]
    :param set_speed: lowers the gripper's speed [unit/s]; None: its usual speed
    """

    def __init__(self, axis: AuxAxis, *, settings: GripperSettings,
                 clock: Callable[[], float], read: Callable[[], tuple[float, float]],
                 command: Callable[[float], None],
                 set_speed: Callable[[Optional[float]], None]) -> None:
        self._name = axis.name
        self._clock, self._read, self._command, self._set_speed = clock, read, command, set_speed
        self.gripper = Gripper(axis.name, axis.low, axis.high, unit=axis.range_note,
                               settings=settings)
        self._speed_sent: Optional[float] = None

    @property
    def name(self) -> str:
        """Return the gripper servo's name."""
        return self._name

    def refusal(self, goal: GripperGoal) -> Optional[str]:
        """Return why ``goal`` cannot start, None when it can."""
        return self.gripper.check(goal)

    def start(self, goal_id: Hashable, goal: GripperGoal) -> Optional[str]:
        """Start ``goal`` (replacing a running one); return why not, None when started."""
        refusal = self.gripper.start(goal_id, goal, now_s=self._clock())
        self._apply()
        return refusal

    def cancel(self, goal_id: Hashable) -> bool:
        """Cancel goal ``goal_id`` if it runs: the gripper holds where it stands."""
        _, position = self._read()
        done = self.gripper.cancel(goal_id, position=position)
        self._apply()
        return done

    def tick(self) -> None:
        """Feed the simulated position to the gripper's rules and apply what they decide."""
        commanded, position = self._read()
        self.gripper.update(self._clock(), commanded=commanded, sent=position,
                            position=position, measured=False, effort=None)
        self._apply()

    def feedback(self) -> Optional[tuple[Hashable, GripperState]]:
        """Return the running goal's id and state, None when none runs."""
        return self.gripper.feedback()

    def take_ends(self) -> list[GripperEnd]:
        """Return the goals that ended since the last call."""
        return self.gripper.take_ends()

    @property
    def busy(self) -> bool:
        """Return True while a goal runs or the gripper moves."""
        commanded, position = self._read()
        return self.gripper.active_goal is not None or commanded != position

    def _apply(self) -> None:
        target = self.gripper.take_target()
        if self.gripper.speed != self._speed_sent:
            self._speed_sent = self.gripper.speed
            self._set_speed(self.gripper.speed)
        if target is not None:
            self._command(target)
