"""Servos that protect themselves from heat: warn once, detach the one too hot, re-attach cooled.

A bus servo reports its temperature; pushing on something it cannot move (a gripper closed on
an object, a joint against a stop) heats it within tens of seconds, and past its maximum
temperature register it shuts itself down (STS3215 70 °C) or latches an overheating error that
only a reboot clears (Dynamixel X). The driver acts before that: one WARN line when a servo
first reaches the warning limit (said again only after it cooled below it), and at the error
limit it detaches THAT servo (torque off: it rests and cools, the others keep their torque and
goals), with one ERROR line naming the servo and its temperature.

The way back is the one for every detach: ``~/enable`` false, then true. That re-attaches each
servo detached for heat which has cooled below the warning limit, holding where it stands; one
still at or above the warning limit stays detached (the others attach) and the reply says so.
Kept rather than refused, so one hot gripper does not keep the whole arm limp; the warning
limit rather than the error limit, so a servo re-attached is not detached again moments later.

PWM servos report no temperature: nothing here acts on them.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from fabrik_ros.driver.arm_state_machine import LogLevel, LogLine
from fabrik_ros.driver.servo_output import HealthLevel, ServoHealth

# A servo shuts itself down at its maximum temperature register: 70 °C on the STS3215
# (Feetech's factory value), 72 °C on the XL430 and 80 °C on the XM430 (e-Manual). Warn with
# 15 °C to spare, while there is time to rest the arm; error 5 °C before the lowest shutdown.
TEMPERATURE_WARN_C = 55.0
TEMPERATURE_ERROR_C = 65.0


@dataclass(frozen=True)
class HeatLimits:
    """The temperatures a servo is judged against [°C].

    :param warn_c: at or above: WARN in /diagnostics, one log line
    :param error_c: at or above: ERROR, and the driver detaches the servo
    :raises ValueError: unless ``warn_c`` < ``error_c``
    """

    warn_c: float = TEMPERATURE_WARN_C
    error_c: float = TEMPERATURE_ERROR_C

    def __post_init__(self) -> None:
        if not self.warn_c < self.error_c:
            raise ValueError(f'temperature_warn_c = {self.warn_c!r}, must be below '
                             f'temperature_error_c = {self.error_c!r}')


DEFAULT_HEAT_LIMITS = HeatLimits()


@dataclass(frozen=True)
class HeatActions:
    """What a look at the temperatures calls for: the servos to detach now, the lines to log."""

    detach: tuple[int, ...] = ()
    logs: tuple[LogLine, ...] = ()


class HeatGuard:
    """Decide, from the servos' temperatures, which to warn of, detach and re-attach.

    :param names: each servo as a person reads it, servo order (``'servo gripper (id 6)'``)
    :param limits: the warning and error temperatures
    """

    def __init__(self, names: Sequence[str], limits: HeatLimits = DEFAULT_HEAT_LIMITS) -> None:
        self.names = tuple(names)
        self.limits = limits
        self._warned: set[int] = set()
        self._detached: dict[int, float] = {}     # servo -> the temperature it was detached at

    @property
    def detached(self) -> frozenset[int]:
        """Return the servos (servo order) detached for heat, not yet re-attached."""
        return frozenset(self._detached)

    def check(self, temperatures: Sequence[Optional[float]]) -> HeatActions:
        """Return what the latest temperatures call for [°C, servo order; None: unknown]."""
        detach: list[int] = []
        logs: list[LogLine] = []
        for servo, temperature in enumerate(temperatures):
            if temperature is None:
                continue
            if temperature < self.limits.warn_c:
                self._warned.discard(servo)
                continue
            if servo not in self._warned:
                self._warned.add(servo)
                if temperature < self.limits.error_c:
                    logs.append(LogLine(LogLevel.WARN, self._warning(servo, temperature)))
            if temperature >= self.limits.error_c and servo not in self._detached:
                self._detached[servo] = temperature
                detach.append(servo)
                logs.append(LogLine(LogLevel.ERROR, self._detaching(servo, temperature)))
        return HeatActions(tuple(detach), tuple(logs))

    def release(self, temperatures: Sequence[Optional[float]]) -> tuple[tuple[int, ...], str]:
        """Re-attach the detached servos that cooled below the warning limit (``~/enable``).

        :returns: the servos released, and what the reply adds of those kept ('' if none)
        """
        released, kept = [], []
        for servo in sorted(self._detached):
            temperature = temperatures[servo] if servo < len(temperatures) else None
            if temperature is not None and temperature < self.limits.warn_c:
                del self._detached[servo]
                released.append(servo)
            else:
                shown = 'unknown' if temperature is None else f'{temperature:.0f} C'
                kept.append(f'{self.names[servo]} stays detached for overheating ({shown}, '
                            f'not yet below {self.limits.warn_c:g} C)')
        return tuple(released), '; '.join(kept)

    def health(self, servo: int, health: ServoHealth) -> ServoHealth:
        """Return ``health`` as /diagnostics shows it: ERROR for a servo detached for heat."""
        at = self._detached.get(servo)
        if at is None:
            return health
        message = (f'detached for overheating ({at:.0f} C, error limit '
                   f'{self.limits.error_c:g} C): torque off to let it cool, the other servos '
                   f'hold; once it is below {self.limits.warn_c:g} C call ~/enable false, then '
                   f'true, to re-attach it; now: {health.message}')
        return ServoHealth(health.name, HealthLevel.ERROR, message,
                           {**health.values, 'detached': 'overheating'})

    def _warning(self, servo: int, temperature: float) -> str:
        return (f'{self.names[servo]}: temperature {temperature:.0f} C at or above the '
                f'warning limit {self.limits.warn_c:g} C: let it rest (the driver detaches it '
                f'at {self.limits.error_c:g} C)')

    def _detaching(self, servo: int, temperature: float) -> str:
        return (f'{self.names[servo]}: temperature {temperature:.0f} C at or above the error '
                f'limit {self.limits.error_c:g} C: detached (torque off) to let it cool, the '
                f'other servos keep holding; once it is below {self.limits.warn_c:g} C call '
                f'~/enable false, then true, to re-attach it')
