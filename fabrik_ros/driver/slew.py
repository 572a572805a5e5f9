"""Move joint angles toward their targets no faster than a per-joint speed."""

from collections.abc import Sequence
from dataclasses import dataclass
import math


@dataclass(frozen=True)
class SlewLimiter:
    """Rate-limit joint motion, the way a hobby servo (or a careful driver) moves.

    Each joint moves straight toward its target by at most ``speed * dt`` per step, so a
    commanded jump becomes a ramp and no joint ever exceeds its speed. A joint whose speed is
    ``math.inf`` takes its target at once.

    >>> SlewLimiter((1.0, 2.0)).step((0.0, 0.0), (0.5, -0.5), 0.1)
    (0.1, -0.2)
    """

    speeds_rad_s: tuple[float, ...]

    def __post_init__(self) -> None:
        for index, speed in enumerate(self.speeds_rad_s):
            if not speed > 0.0:
                raise ValueError(f'speeds_rad_s[{index}] = {speed!r}, must be > 0.0')

    def step(self, current: Sequence[float], target: Sequence[float],
             dt_s: float) -> tuple[float, ...]:
        """Return the angles one step of ``dt_s`` seconds later.

        :param current: joint angles now [rad]
        :param target: joint angles to move toward [rad]
        :param dt_s: step length [s], >= 0
        :raises ValueError: if the lengths differ from the number of speeds
        """
        if not len(current) == len(target) == len(self.speeds_rad_s):
            raise ValueError(f'current has {len(current)} angles and target {len(target)}, '
                             f'must both have {len(self.speeds_rad_s)}')
        return tuple(_toward(now, goal, speed * max(dt_s, 0.0))
                     for now, goal, speed in zip(current, target, self.speeds_rad_s, strict=True))

    def duration_s(self, current: Sequence[float], target: Sequence[float]) -> float:
        """Return how long the slowest joint needs from ``current`` to ``target`` [s]."""
        pairs = zip(current, target, self.speeds_rad_s, strict=True)
        return max((abs(goal - now) / speed for now, goal, speed in pairs), default=0.0)


def _toward(now: float, goal: float, max_step: float) -> float:
    delta = goal - now
    if abs(delta) <= max_step:
        return goal
    return now + math.copysign(max_step, delta)
