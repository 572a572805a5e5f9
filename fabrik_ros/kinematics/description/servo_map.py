"""Joint angles to servo units and back, clamped and reported.

A servo is driven in its unit: a pulse width [us] on a PWM board, a count of its encoder on a
bus (count_calibration.py). An arm's servos are all of one unit. This module, the count
calibration and the arm loader are the only places where degrees, microseconds or counts meet
radians. Whatever angles come in (NaN, inf, 1e300), every value that goes out lies within its
servo's range.
"""

from dataclasses import dataclass
import math
from typing import ClassVar, Union

import numpy as np

from fabrik_ros.kinematics.aliases import FloatVector
from fabrik_ros.kinematics.description.count_calibration import CountAuxServo, CountCalibration
from fabrik_ros.kinematics.description.joint import Joint
from fabrik_ros.kinematics.errors import ArmConfigError, TargetError

# Commands go out and reports come back in whole units (µs or counts): a limit that cuts less
# than half a unit off a command changes nothing on the line, so it is rounding, not a clamp
# to report (half a count is 0.04 degrees on a 4096-count turn).
ROUNDING_UNITS = 0.5


@dataclass(frozen=True)
class ServoCalibration:
    """A servo driving one joint: a linear map from angle to pulse width.

    ``angle_at_min_rad`` is the joint angle at ``min_us`` and ``angle_at_max_rad`` the one at
    ``max_us`` (the first may be the larger one for a servo mounted the other way round).
    ``trim_us`` is added to every pulse to correct the horn's mounting offset.
    """

    unit: ClassVar[str] = 'us'

    joint: str
    channel: int
    min_us: float
    max_us: float
    angle_at_min_rad: float
    angle_at_max_rad: float
    trim_us: float = 0.0

    def pulse_us(self, angle_rad: float) -> float:
        """Return the pulse width for a finite angle, clamped into [min_us, max_us].

        >>> cal = ServoCalibration('elbow', 2, 500.0, 2500.0, -math.pi / 2, math.pi / 2)
        >>> cal.pulse_us(0.0), cal.pulse_us(10.0)
        (1500.0, 2500.0)
        """
        return min(max(self.unclamped_us(angle_rad), self.min_us), self.max_us)

    @property
    def low_units(self) -> float:
        """Return the lowest pulse width the servo is driven with [us]."""
        return self.min_us

    @property
    def high_units(self) -> float:
        """Return the highest pulse width the servo is driven with [us]."""
        return self.max_us

    def units(self, angle_rad: float) -> float:
        """Return the pulse width of an angle, clamped (the unit-neutral :meth:`pulse_us`)."""
        return self.pulse_us(angle_rad)

    def unclamped_units(self, angle_rad: float) -> float:
        """Return the pulse width before clamping (the unit-neutral :meth:`unclamped_us`)."""
        return self.unclamped_us(angle_rad)

    def unclamped_us(self, angle_rad: float) -> float:
        """Return the pulse width the calibration line gives, before clamping to the range."""
        fraction = (angle_rad - self.angle_at_min_rad) / (
            self.angle_at_max_rad - self.angle_at_min_rad)
        return self.min_us + fraction * (self.max_us - self.min_us) + self.trim_us

    def angle_rad(self, pulse_us: float) -> float:
        """Return the joint angle a pulse width commands (the inverse of ``pulse_us``).

        >>> cal = ServoCalibration('elbow', 2, 500.0, 2500.0, -math.pi / 2, math.pi / 2)
        >>> round(cal.angle_rad(2000.0), 6)
        0.785398
        """
        fraction = (pulse_us - self.trim_us - self.min_us) / (self.max_us - self.min_us)
        return self.angle_at_min_rad + fraction * (self.angle_at_max_rad - self.angle_at_min_rad)


@dataclass(frozen=True)
class AuxServo:
    """A channel that is not part of the IK chain (a gripper), driven by pulse width."""

    unit: ClassVar[str] = 'us'

    name: str
    channel: int
    min_us: float
    max_us: float
    home_us: float

    def clamp(self, pulse_us: float) -> float:
        """Return ``pulse_us`` limited to the servo range; non-finite gives ``home_us``.

        >>> AuxServo('gripper', 5, 1000.0, 2000.0, 1500.0).clamp(float('nan'))
        1500.0
        """
        if not math.isfinite(pulse_us):
            return self.home_us
        return min(max(pulse_us, self.min_us), self.max_us)


@dataclass(frozen=True)
class ServoCommand:
    """Servo units for the joint servos, in joint (config) order.

    :param units: (n_joints,) servo units (pulse widths [us] or counts), each within its
        servo's range
    :param channels: the board channel (or bus id) of each value
    :param clamped: names of the joints whose angle was not finite, outside the joint limits,
        or outside what the servo's range can express
    """

    units: np.ndarray
    channels: tuple[int, ...]
    clamped: tuple[str, ...]


Calibration = Union[ServoCalibration, CountCalibration]
AnyAuxServo = Union[AuxServo, CountAuxServo]


@dataclass(frozen=True)
class ServoMap:
    """Calibrations for every joint (config order) plus the auxiliary servos, all of one unit.

    :raises ValueError: if the servos mix units (the loader names the key first)
    """

    joints: tuple[Joint, ...]
    calibrations: tuple[Calibration, ...]
    aux: tuple[AnyAuxServo, ...] = ()

    def __post_init__(self) -> None:
        """Refuse servos of more than one unit."""
        units = {servo.unit for servo in (*self.calibrations, *self.aux)}
        if len(units) > 1:
            raise ValueError(f'servo units {sorted(units)}: an arm is all-pulse or all-count')

    @property
    def unit(self) -> str:
        """Return the unit the servos are driven in: ``'us'`` (pulse width) or ``'count'``."""
        return self.calibrations[0].unit if self.calibrations else ServoCalibration.unit

    def pulse_servos(self) -> tuple[tuple[ServoCalibration, ...], tuple[AuxServo, ...]]:
        """Return the joints' and the auxiliary servos' pulse calibrations (a PWM board's).

        :raises ArmConfigError: if the servos are calibrated in counts
        """
        joints = tuple(c for c in self.calibrations if isinstance(c, ServoCalibration))
        aux = tuple(a for a in self.aux if isinstance(a, AuxServo))
        if len(joints) != len(self.calibrations) or len(aux) != len(self.aux):
            raise ArmConfigError('servos', self.unit, 'are bus servos calibrated in counts; a '
                                 'PWM board needs pulse widths (channel, min_us, max_us)')
        return joints, aux

    def count_servos(self) -> tuple[tuple[CountCalibration, ...], tuple[CountAuxServo, ...]]:
        """Return the joints' and the auxiliary servos' count calibrations (a bus's).

        :raises ArmConfigError: if the servos are calibrated in pulse widths
        """
        joints = tuple(c for c in self.calibrations if isinstance(c, CountCalibration))
        aux = tuple(a for a in self.aux if isinstance(a, CountAuxServo))
        if len(joints) != len(self.calibrations) or len(aux) != len(self.aux):
            raise ArmConfigError('servos', self.unit, 'are calibrated in pulse widths; bus '
                                 'servos need counts (id, zero_count, direction)')
        return joints, aux

    def to_units(self, angles_rad: FloatVector) -> ServoCommand:
        """Return the servo units for joint angles [rad] and the joints that were clamped.

        A NaN angle commands the joint's home angle; infinities go to the nearer limit.

        :raises TargetError: if the number of angles differs from the number of joints
        """
        values = _as_flat(angles_rad, len(self.joints), 'angles_rad')
        units = np.empty(len(self.joints))
        clamped = []
        for index, (joint, cal) in enumerate(zip(self.joints, self.calibrations, strict=True)):
            angle = float(values[index])
            safe = joint.home_rad if math.isnan(angle) else joint.clamp(angle)
            units[index] = cal.units(safe)
            if math.isnan(angle) or _cut(cal, angle, safe):
                clamped.append(joint.name)
        return ServoCommand(units, tuple(c.channel for c in self.calibrations), tuple(clamped))

    def to_angles(self, units: FloatVector) -> np.ndarray:
        """Return the joint angles [rad] that servo units command (for position feedback).

        :raises TargetError: if a value is not finite or the count differs from the joints
        """
        values = _as_flat(units, len(self.joints), 'units')
        if not np.all(np.isfinite(values)):
            raise TargetError(f'units = {values.tolist()!r}, every value must be finite')
        pairs = zip(self.calibrations, values, strict=True)
        return np.array([cal.angle_rad(float(value)) for cal, value in pairs])


def _as_flat(values: FloatVector, count: int, name: str) -> np.ndarray:
    """Return ``values`` as a float array of ``count`` entries or raise TargetError."""
    array = np.asarray(values, dtype=float).reshape(-1)
    if array.shape != (count,):
        raise TargetError(f'{name} has {array.size} values, need {count} (one per joint)')
    return array


def _cut(cal: Calibration, angle_rad: float, safe_rad: float) -> bool:
    """Return True when the limits cut more than rounding off the units ``angle_rad`` asks.

    The joint limits (``safe_rad`` is the angle clamped to them), then the servo's range,
    may cut a command; a cut of up to :data:`ROUNDING_UNITS` is none: an IK result lands an
    ulp past a limit it was clamped to in another frame (1.6580600000006758 rad against the
    SO-101 wrist_flex limit), and a servo sent to its range edge reports the whole unit the
    line rounded the edge to.
    """
    asked = cal.unclamped_units(angle_rad)
    within = cal.unclamped_units(safe_rad)
    return (abs(asked - within) > ROUNDING_UNITS
            or not cal.low_units - ROUNDING_UNITS <= within <= cal.high_units + ROUNDING_UNITS)
