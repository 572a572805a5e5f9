"""Joint angles to servo units (pulse widths) and back, clamped and reported.

This module and the arm loader are the only places where degrees or microseconds meet radians.
Whatever angles come in (NaN, inf, 1e300), every pulse that goes out lies within its servo's
configured range.
"""

from dataclasses import dataclass
import math

import numpy as np

from fabrik_ros.kinematics.aliases import FloatVector
from fabrik_ros.kinematics.description.joint import Joint
from fabrik_ros.kinematics.errors import TargetError


@dataclass(frozen=True)
class ServoCalibration:
    """A servo driving one joint: a linear map from angle to pulse width.

    ``angle_at_min_rad`` is the joint angle at ``min_us`` and ``angle_at_max_rad`` the one at
    ``max_us`` (the first may be the larger one for a servo mounted the other way round).
    ``trim_us`` is added to every pulse to correct the horn's mounting offset.
    """

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

    :param units: (n_joints,) servo units (pulse widths [us]), each within its servo's range
    :param channels: the board channel of each value
    :param clamped: names of the joints whose angle was not finite, outside the joint limits,
        or outside what the servo's range can express
    """

    units: np.ndarray
    channels: tuple[int, ...]
    clamped: tuple[str, ...]


@dataclass(frozen=True)
class ServoMap:
    """Calibrations for every joint (config order) plus the auxiliary channels."""

    joints: tuple[Joint, ...]
    calibrations: tuple[ServoCalibration, ...]
    aux: tuple[AuxServo, ...] = ()

    @property
    def unit(self) -> str:
        """Return the unit the servos are driven in: ``'us'`` (pulse width)."""
        return 'us'

    def to_units(self, angles_rad: FloatVector) -> ServoCommand:
        """Return the servo units for joint angles [rad] and the joints that were clamped.

        A NaN angle commands the joint's home angle; infinities go to the nearer limit.

        :raises TargetError: if the number of angles differs from the number of joints
        """
        values = _as_flat(angles_rad, len(self.joints), 'angles_rad')
        pulses = np.empty(len(self.joints))
        clamped = []
        for index, (joint, cal) in enumerate(zip(self.joints, self.calibrations, strict=True)):
            angle = float(values[index])
            safe = joint.home_rad if math.isnan(angle) else joint.clamp(angle)
            pulses[index] = cal.pulse_us(safe)
            if safe != angle or not _within(cal.unclamped_us(safe), cal.min_us, cal.max_us):
                clamped.append(joint.name)
        return ServoCommand(pulses, tuple(c.channel for c in self.calibrations), tuple(clamped))

    def to_angles(self, units: FloatVector) -> np.ndarray:
        """Return the joint angles [rad] that servo units command (for position feedback).

        :raises TargetError: if a value is not finite or the count differs from the joints
        """
        values = _as_flat(units, len(self.joints), 'units')
        if not np.all(np.isfinite(values)):
            raise TargetError(f'units = {values.tolist()!r}, every value must be finite')
        pairs = zip(self.calibrations, values, strict=True)
        return np.array([cal.angle_rad(float(pulse)) for cal, pulse in pairs])


def _as_flat(values: FloatVector, count: int, name: str) -> np.ndarray:
    """Return ``values`` as a float array of ``count`` entries or raise TargetError."""
    array = np.asarray(values, dtype=float).reshape(-1)
    if array.shape != (count,):
        raise TargetError(f'{name} has {array.size} values, need {count} (one per joint)')
    return array


def _within(pulse_us: float, low_us: float, high_us: float) -> bool:
    """Return True when a pulse is in range, allowing for rounding of the calibration line."""
    return low_us - 1e-6 <= pulse_us <= high_us + 1e-6
