"""Jog one servo by raw pulse width, for calibration: guarded, speed-limited, undoable.

Pure (no rclpy): the servo driver's ``~/jog_us`` topic feeds it (nodes/servo_jog.py).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math

from fabrik_ros.kinematics import ServoCalibration

# The pulse range every hobby servo accepts; a jog never leaves it unless the user widens it.
DEFAULT_GUARD_US = (500.0, 2500.0)


class JogError(ValueError):
    """A jog request that breaks a rule; the message names the key, the value and the rule."""


@dataclass(frozen=True)
class JogGuard:
    """The pulse widths a calibration jog may reach [µs], whatever the calibration says."""

    min_us: float = DEFAULT_GUARD_US[0]
    max_us: float = DEFAULT_GUARD_US[1]

    def __post_init__(self) -> None:
        if not (math.isfinite(self.min_us) and math.isfinite(self.max_us)
                and 0.0 < self.min_us < self.max_us):
            raise JogError(f'jog_guard_us = [{self.min_us!r}, {self.max_us!r}], must be two '
                           'finite pulse widths with 0.0 < min < max')

    @classmethod
    def of(cls, bounds_us: Sequence[float]) -> 'JogGuard':
        """Return the guard ``[min, max]`` [µs] as a parameter gives it.

        :raises JogError: unless there are exactly two bounds with 0.0 < min < max
        """
        if len(bounds_us) != 2:
            raise JogError(f'jog_guard_us = {list(bounds_us)!r}, must be two pulse widths '
                           '[min, max] with 0.0 < min < max')
        return cls(float(bounds_us[0]), float(bounds_us[1]))

    def within(self, low_us: int, high_us: int) -> 'JogGuard':
        """Return the guard, checked to lie inside what the board protocol can express.

        :raises JogError: if it reaches outside ``[low_us, high_us]``
        """
        if self.min_us < low_us or self.max_us > high_us:
            raise JogError(f'jog_guard_us = [{self.min_us}, {self.max_us}], must lie within '
                           f'the protocol pulse range [{low_us}, {high_us}]')
        return self


@dataclass(frozen=True)
class JogMove:
    """One jog step to send: a whole-µs pulse on one channel over ``move_s`` seconds.

    ``angle_rad`` is the joint angle that pulse means on the current calibration line
    (unclamped), so motion planned after the jog starts where the servo really is.
    """

    joint: str
    channel: int
    pulse_us: int
    move_s: float
    angle_rad: float


class PulseJog:
    """Turn ``(joint, pulse)`` requests into guarded moves no faster than the joint's speed.

    The speed limit [rad/s] becomes a pulse rate through the joint's calibration slope, so a
    jog moves a servo no faster than joint commands would. The first jog of a joint starts from
    the pulse the caller says it holds; later ones from the last jogged pulse.

    >>> cal = ServoCalibration('elbow', 2, 500.0, 2500.0, -math.pi / 2, math.pi / 2)
    >>> jog = PulseJog({'elbow': cal}, JogGuard(), min_move_s=0.02)
    >>> move = jog.move('elbow', 2000.0, speed_rad_s=1.0, start_us=1500.0)
    >>> move.pulse_us, round(move.move_s, 3)
    (2000, 0.785)
    """

    def __init__(self, calibrations: Mapping[str, ServoCalibration], guard: JogGuard, *,
                 min_move_s: float) -> None:
        """Jog the servos of ``calibrations`` (by joint name) inside ``guard``.

        :param min_move_s: the shortest move sent [s], the control period
        """
        self._calibrations = dict(calibrations)
        self.guard = guard
        self._min_move_s = min_move_s
        self._held_us: dict[str, float] = {}

    @property
    def active(self) -> bool:
        """Return True once a joint has been jogged and until :meth:`finish`."""
        return bool(self._held_us)

    def move(self, joint: str, pulse_us: float, *, speed_rad_s: float,
             start_us: float) -> JogMove:
        """Return the move of ``joint`` to ``pulse_us``.

        :param speed_rad_s: the joint's speed limit [rad/s]
        :param start_us: the pulse the joint holds now, if it has not been jogged yet [µs]
        :raises JogError: for an unknown joint or a pulse outside the guard
        """
        calibration = self.calibration(joint)
        guard = self.guard
        if not (math.isfinite(pulse_us) and guard.min_us <= pulse_us <= guard.max_us):
            raise JogError(f'jog_us.{joint} = {pulse_us!r}, must be within the jog guard '
                           f'[{guard.min_us}, {guard.max_us}] µs (parameter jog_guard_us)')
        pulse = round(pulse_us)
        start = self._held_us.get(joint, start_us)
        move_s = max(abs(pulse - start) / _pulse_rate_us_s(calibration, speed_rad_s),
                     self._min_move_s)
        self._held_us[joint] = float(pulse)
        return JogMove(joint, calibration.channel, pulse, move_s,
                       calibration.angle_rad(float(pulse)))

    def calibration(self, joint: str) -> ServoCalibration:
        """Return the calibration of ``joint``.

        :raises JogError: if the arm has no such joint
        """
        calibration = self._calibrations.get(joint)
        if calibration is None:
            raise JogError(f'jog_us joint {joint!r} is not one of the arm joints '
                           f'{sorted(self._calibrations)}')
        return calibration

    def widened_limits(self, limits_us: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
        """Return board limits with each jogged channel opened up to the guard as well."""
        channels = {self._calibrations[j].channel for j in self._held_us}
        low, high = math.ceil(self.guard.min_us), math.floor(self.guard.max_us)
        return tuple((min(lo, low), max(hi, high)) if ch in channels else (lo, hi)
                     for ch, (lo, hi) in enumerate(limits_us))

    def finish(self) -> tuple[str, ...]:
        """End the jog session and return the joints it had moved."""
        joints = tuple(self._held_us)
        self._held_us.clear()
        return joints


def _pulse_rate_us_s(calibration: ServoCalibration, speed_rad_s: float) -> float:
    """Return the pulse rate [µs/s] that moves the joint at ``speed_rad_s``."""
    span_rad = abs(calibration.angle_at_max_rad - calibration.angle_at_min_rad)
    return speed_rad_s * (calibration.max_us - calibration.min_us) / span_rad
