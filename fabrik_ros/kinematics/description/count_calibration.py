"""Bus servos calibrated in counts: joint positions to encoder counts and back, clamped.

A bus servo (Feetech STS, Dynamixel X) is driven by a goal position in counts of its encoder,
``counts_per_turn`` of them per turn, read back the same way. Its calibration is a line:
``count = zero_count + direction * position * counts_per_turn / 2 pi``. The counts a servo may
be sent are the joint's limits through that line; the loader refuses a calibration whose
range leaves the encoder's ``0 .. counts_per_turn - 1`` (it would cross the seam where 4095 wraps
to 0, and a goal past the seam runs the long way round), naming the homing offset that moves
the seam out of the way. ``homing_offset`` is the register value the counts were read with;
the driver writes it where the servo holds another.

Whatever positions come in (NaN, inf, 1e300), every count that goes out lies within the range.
"""

from dataclasses import dataclass
import math
from typing import ClassVar, Optional

from fabrik_ros.kinematics.elementwise import TURN

DEFAULT_COUNTS_PER_TURN = 4096


def count_of(zero_count: float, direction: int, counts_per_turn: int,
             position_rad: float) -> float:
    """Return the count of a joint position on the calibration line, unclamped.

    >>> count_of(2048.0, -1, 4096, math.pi / 2)
    1024.0
    """
    return zero_count + direction * position_rad * counts_per_turn / TURN


def position_of(zero_count: float, direction: int, counts_per_turn: int, count: float) -> float:
    """Return the joint position [rad] of a count (the inverse of :func:`count_of`).

    >>> round(position_of(2048.0, 1, 4096, 3072.0), 6)
    1.570796
    """
    return (count - zero_count) * direction * TURN / counts_per_turn


def clamp_count(count: float, low: float, high: float) -> float:
    """Return ``count`` within [low, high]; NaN gives the middle of the range.

    >>> clamp_count(float('inf'), 100.0, 200.0), clamp_count(float('nan'), 100.0, 200.0)
    (200.0, 150.0)
    """
    if math.isnan(count):
        return 0.5 * (low + high)
    return min(max(count, low), high)


def wrapped_offset(offset: int, counts_per_turn: int) -> int:
    """Return a homing offset moved by whole turns into [-turn/2, turn/2).

    A turn more or less shifts no count modulo the turn, and keeps the value within a
    register's reach (the STS3215's is +-2047).

    >>> wrapped_offset(3000, 4096), wrapped_offset(-2048, 4096)
    (-1096, -2048)
    """
    half = counts_per_turn // 2
    return (offset + half) % counts_per_turn - half


def shifted_offset(offset: int, shift: int, sign: int, counts_per_turn: int) -> int:
    """Return the homing offset that raises every count the servo reports by ``shift``.

    :param sign: how the maker's register moves Present_Position: +1 where Present = Actual +
        Homing_Offset (Dynamixel), -1 where Present = Actual - Homing_Offset (Feetech); as
        LeRobot's motor bus code states them (dynamixel.py and feetech.py,
        ``_get_half_turn_homings``)

    >>> shifted_offset(100, -1452, -1, 4096), shifted_offset(100, -1452, 1, 4096)
    (1552, -1352)
    """
    return wrapped_offset(offset + sign * shift, counts_per_turn)


@dataclass(frozen=True)
class CountCalibration:
    """A bus servo driving one joint, in counts of its encoder.

    :param joint: the joint's name (its servo section is ``servos.<joint>``)
    :param channel: the servo's bus id (named like a board channel so layouts index by it)
    :param zero_count: the count at joint position 0
    :param direction: 1 where the count rises with the joint position, -1 against
    :param min_rad: the joint's lower limit (a position) [rad]
    :param max_rad: the joint's upper limit [rad]
    :param counts_per_turn: counts in one turn of the encoder
    :param homing_offset: the homing-offset register value the counts were read with, None
        to leave the servo's as it is

    >>> cal = CountCalibration('elbow', 3, 2048.0, 1, -math.pi / 2, math.pi / 2)
    >>> cal.units(0.0), cal.units(10.0), cal.low_units, cal.high_units
    (2048.0, 3072.0, 1024.0, 3072.0)
    """

    unit: ClassVar[str] = 'count'

    joint: str
    channel: int
    zero_count: float
    direction: int
    min_rad: float
    max_rad: float
    counts_per_turn: int = DEFAULT_COUNTS_PER_TURN
    homing_offset: Optional[int] = None

    @property
    def low_units(self) -> float:
        """Return the lowest count the joint's limits allow."""
        return min(self.unclamped_units(self.min_rad), self.unclamped_units(self.max_rad))

    @property
    def high_units(self) -> float:
        """Return the highest count the joint's limits allow."""
        return max(self.unclamped_units(self.min_rad), self.unclamped_units(self.max_rad))

    def units(self, angle_rad: float) -> float:
        """Return the count of a joint position, clamped into [low_units, high_units]."""
        return clamp_count(self.unclamped_units(angle_rad), self.low_units, self.high_units)

    def unclamped_units(self, angle_rad: float) -> float:
        """Return the count the calibration line gives, before clamping to the range."""
        return count_of(self.zero_count, self.direction, self.counts_per_turn, angle_rad)

    def angle_rad(self, units: float) -> float:
        """Return the joint position [rad] of a count (the inverse of :meth:`units`)."""
        return position_of(self.zero_count, self.direction, self.counts_per_turn, units)


@dataclass(frozen=True)
class CountAuxServo:
    """A bus servo outside the IK chain (a gripper), calibrated like a joint; positions [rad].

    >>> grip = CountAuxServo('gripper', 6, 2048.0, 1, -0.5, 1.5, 0.0)
    >>> grip.units(float('nan')) == grip.home_units == 2048.0, grip.units(9.0) == grip.high_units
    (True, True)
    """

    unit: ClassVar[str] = 'count'

    name: str
    channel: int
    zero_count: float
    direction: int
    min_rad: float
    max_rad: float
    home_rad: float
    counts_per_turn: int = DEFAULT_COUNTS_PER_TURN
    homing_offset: Optional[int] = None

    @property
    def low_units(self) -> float:
        """Return the lowest count the servo's position range allows."""
        return min(self._count(self.min_rad), self._count(self.max_rad))

    @property
    def high_units(self) -> float:
        """Return the highest count the servo's position range allows."""
        return max(self._count(self.min_rad), self._count(self.max_rad))

    @property
    def home_units(self) -> float:
        """Return the count the servo starts at (its home position)."""
        return self._count(self.home_rad)

    def units(self, position_rad: float) -> float:
        """Return the count of a position, clamped into the range; NaN gives the home count."""
        if math.isnan(position_rad):
            return self.home_units
        return clamp_count(self._count(position_rad), self.low_units, self.high_units)

    def angle_rad(self, units: float) -> float:
        """Return the position [rad] of a count."""
        return position_of(self.zero_count, self.direction, self.counts_per_turn, units)

    def _count(self, position_rad: float) -> float:
        return count_of(self.zero_count, self.direction, self.counts_per_turn, position_rad)
