"""Joints and links of a yaw + pitch (+ roll) servo arm."""

from dataclasses import dataclass
import enum
from functools import cached_property
import math

import numpy as np

from fabrik_ros.kinematics.elementwise import TURN


class JointKind(enum.Enum):
    """How a joint moves the arm.

    ``YAW`` turns everything about the base z axis (first joint only). ``PITCH`` is a hinge
    about a horizontal axis; its angle is measured from the previous pitch link (from the
    horizontal for the first one), positive turning the arm up when it points along +x.
    ``ROLL`` turns the tool about its own axis; it moves the tool point only when the tool
    sits off that axis. These are the joints' geometric angles; a joint's position (what the
    arm file, the topics and a vendor URDF speak) maps onto them through its zero and direction.
    """

    YAW = 'yaw'
    PITCH = 'pitch'
    ROLL = 'roll'


@dataclass(frozen=True)
class Joint:
    """One actuated joint: its kind, limits and home position, zero and direction [rad].

    ``geometric = zero_rad + direction * position``: a vendor URDF's joint turns about its own
    axis from its own zero, which rarely are the solver's (the SO-101's shoulder reads 0 with
    its upper arm 76 degrees up). The limits and home are positions.
    """

    name: str
    kind: JointKind
    min_rad: float
    max_rad: float
    home_rad: float
    zero_rad: float = 0.0
    direction: int = 1

    def geometric(self, position_rad: float) -> float:
        """Return the solver's angle [rad] of a joint position.

        >>> Joint('lift', JointKind.PITCH, -2.0, 2.0, 0.0, zero_rad=1.0, direction=-1).geometric(
        ...     0.5)
        0.5
        """
        return self.zero_rad + self.direction * position_rad

    def position(self, geometric_rad: float) -> float:
        """Return the joint position [rad] of a geometric angle, within the limits.

        A geometric angle is known only up to whole turns (the solver turns directions): it
        is taken into the range by whole turns, or to the nearer limit if no turn lands there.

        >>> lift = Joint('lift', JointKind.PITCH, 0.0, 1.0, 0.0, zero_rad=3.0)
        >>> lift.position(3.5 - 2 * math.pi)
        0.5
        """
        low, high = self._geometric_range
        turned = low + (geometric_rad - low) % TURN
        if turned > high:
            turned = high if turned - high <= low + TURN - turned else low
        return min(max((turned - self.zero_rad) * self.direction, self.min_rad), self.max_rad)

    def positions(self, geometric_rad: np.ndarray) -> np.ndarray:
        """Return :meth:`position` of each of an array of geometric angles."""
        low, high = self._geometric_range
        turned = low + (geometric_rad - low) % TURN
        nearer_high = turned - high <= low + TURN - turned
        turned = np.where(turned > high, np.where(nearer_high, high, low), turned)
        return np.clip((turned - self.zero_rad) * self.direction, self.min_rad, self.max_rad)

    @cached_property
    def _geometric_range(self) -> tuple[float, float]:
        low, high = self.geometric(self.min_rad), self.geometric(self.max_rad)
        return (low, high) if low <= high else (high, low)

    def geometric_view(self) -> 'Joint':
        """Return this joint as the solver sees it: limits and home as geometric angles."""
        low, high = sorted((self.geometric(self.min_rad), self.geometric(self.max_rad)))
        return Joint(self.name, self.kind, low, high, self.geometric(self.home_rad))

    def clamp(self, angle_rad: float) -> float:
        """Return ``angle_rad`` limited to [min_rad, max_rad].

        >>> Joint('elbow', JointKind.PITCH, -1.0, 1.0, 0.0).clamp(2.5)
        1.0
        """
        return min(max(angle_rad, self.min_rad), self.max_rad)

    @property
    def centre_rad(self) -> float:
        """Return the middle of the joint range [rad]."""
        return 0.5 * (self.min_rad + self.max_rad)

    def contains(self, angle_rad: float, *, slack_rad: float = 1e-9) -> bool:
        """Return True when ``angle_rad`` is within the limits (with a rounding slack)."""
        return (math.isfinite(angle_rad)
                and self.min_rad - slack_rad <= angle_rad <= self.max_rad + slack_rad)


@dataclass(frozen=True)
class Link:
    """The rigid link a pitch joint moves, out to the next pitch joint or to the tool point."""

    joint: str
    length_m: float
