"""An auxiliary servo (a gripper) as joint_commands and joint_states see it: a position.

An auxiliary servo is outside the IK chain. On a PWM board it has a pulse range but no angle
calibration, so its position is the fraction of that range (0.0 at ``min_us``, 1.0 at
``max_us``); a bus servo is calibrated like a joint, so its position is an angle [rad]. Either
way the driver and sim_arm read and clamp it through one :class:`AuxAxis`.

servo_driver moves an auxiliary servo no faster than a speed in that unit per second
(``aux_max_speed``), as it moves the joints at ``max_speed_rad_s``; without one it uses the
axis's :attr:`AuxAxis.default_speed`, gentle for a gripper: a whole stroke in about 2 s, where
the servo's own speed (an STS3215 at about 6 rad/s) would snap it shut.
"""

from dataclasses import dataclass
import math
from typing import Protocol

from fabrik_ros.driver.board_layout import aux_position, aux_pulse_us
from fabrik_ros.kinematics import AuxServo, CountAuxServo, ServoMap

# The whole pulse range in 2 s: a hobby gripper's stroke (about 90 degrees) at 45 deg/s.
PULSE_AUX_SPEED_PER_S = 0.5
# 1 rad/s: the SO-101 gripper's stroke (about 100 degrees) in under 2 s.
COUNT_AUX_SPEED_RAD_S = 1.0


class AuxAxis(Protocol):
    """The position range of an auxiliary servo and its map to servo units."""

    @property
    def name(self) -> str:
        """Return the servo's name in the arm file (``aux_servos.<name>``)."""

    @property
    def low(self) -> float:
        """Return the lowest position, in the axis's unit."""

    @property
    def high(self) -> float:
        """Return the highest position, in the axis's unit."""

    @property
    def home(self) -> float:
        """Return the position the servo starts at, in the axis's unit."""

    @property
    def default_speed(self) -> float:
        """Return the speed limit without ``aux_max_speed`` [the axis's unit per s]."""

    @property
    def range_note(self) -> str:
        """Return what the range stands for, for a warning (``'min_us 1000 .. max_us 2000'``)."""

    def units(self, position: float) -> float:
        """Return the servo units for a position within [low, high] [µs or counts]."""

    def position(self, units: float) -> float:
        """Return the position of a servo's units (the inverse of :meth:`units`)."""


@dataclass(frozen=True)
class PulseAux:
    """A PWM auxiliary servo: position 0.0 at ``min_us``, 1.0 at ``max_us``.

    >>> axis = PulseAux(AuxServo('gripper', 5, 1000.0, 2000.0, 1600.0))
    >>> axis.home, axis.units(0.25), axis.position(1250.0)
    (0.6, 1250, 0.25)
    """

    servo: AuxServo
    low: float = 0.0
    high: float = 1.0
    default_speed: float = PULSE_AUX_SPEED_PER_S

    @property
    def name(self) -> str:
        """Return the servo's name in the arm file."""
        return self.servo.name

    @property
    def home(self) -> float:
        """Return the fraction of the pulse range the servo starts at."""
        return aux_position(self.servo, self.servo.home_us)

    @property
    def range_note(self) -> str:
        """Return the pulse range the fraction spans."""
        return f'fraction of min_us {self.servo.min_us} .. max_us {self.servo.max_us}'

    def units(self, position: float) -> float:
        """Return the whole-µs pulse of a fraction (clamped into the pulse range)."""
        return aux_pulse_us(self.servo, position)[0]

    def position(self, units: float) -> float:
        """Return the fraction of a pulse [µs]."""
        return aux_position(self.servo, units)


@dataclass(frozen=True)
class CountAux:
    """A bus auxiliary servo: calibrated like a joint, its position an angle [rad].

    >>> axis = CountAux(CountAuxServo('gripper', 6, 2048.0, 1, -0.5, 1.5, 0.0))
    >>> axis.units(math.pi / 4), axis.position(2560.0), axis.range_note
    (2560.0, 0.7853981633974483, 'rad, min_deg -28.6 .. max_deg 85.9')
    """

    servo: CountAuxServo
    default_speed: float = COUNT_AUX_SPEED_RAD_S

    @property
    def name(self) -> str:
        """Return the servo's name in the arm file."""
        return self.servo.name

    @property
    def low(self) -> float:
        """Return the lowest position [rad]."""
        return self.servo.min_rad

    @property
    def high(self) -> float:
        """Return the highest position [rad]."""
        return self.servo.max_rad

    @property
    def home(self) -> float:
        """Return the position the servo starts at [rad]."""
        return self.servo.home_rad

    @property
    def range_note(self) -> str:
        """Return the unit and the range as the arm file gives it."""
        return (f'rad, min_deg {math.degrees(self.low):.1f} .. max_deg '
                f'{math.degrees(self.high):.1f}')

    def units(self, position: float) -> float:
        """Return the count of a position [rad] (clamped into the servo's range)."""
        return self.servo.units(position)

    def position(self, units: float) -> float:
        """Return the position [rad] of a count."""
        return self.servo.angle_rad(units)


def aux_axes(servo_map: ServoMap) -> tuple[AuxAxis, ...]:
    """Return the auxiliary servos of the arm as axes, in arm-file order."""
    return tuple(PulseAux(servo) if isinstance(servo, AuxServo) else CountAux(servo)
                 for servo in servo_map.aux)
