"""Joints and links of a yaw + pitch (+ roll) servo arm."""

from dataclasses import dataclass
import enum
import math


class JointKind(enum.Enum):
    """How a joint moves the arm.

    ``YAW`` turns everything about the base z axis (first joint only). ``PITCH`` is a hinge
    about a horizontal axis; its angle is measured from the previous pitch link (from the
    horizontal for the first one), positive turning the arm up when it points along +x.
    ``ROLL`` turns the tool about its own axis and does not move the tool point.
    """

    YAW = 'yaw'
    PITCH = 'pitch'
    ROLL = 'roll'


@dataclass(frozen=True)
class Joint:
    """One actuated joint: its kind, limits and home angle [rad]."""

    name: str
    kind: JointKind
    min_rad: float
    max_rad: float
    home_rad: float

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
