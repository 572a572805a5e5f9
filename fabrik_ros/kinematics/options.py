"""Solver options: tolerance, iteration cap, stall threshold and bend preference."""

from dataclasses import dataclass
import enum
import math
from typing import TypeGuard

from fabrik_ros.kinematics.errors import SolverOptionsError


class Bend(enum.Enum):
    """Which side of the base-to-tool line the inner joints of a planar arm should take.

    ``ANY`` keeps whatever side the seed (or, without one, the home pose) leads to, so a tracked
    target never makes the elbow flip. ``UP`` and ``DOWN`` mirror a solution to the asked side
    whenever the mirrored pose is within the joint limits.
    """

    ANY = 'any'
    UP = 'up'
    DOWN = 'down'


@dataclass(frozen=True)
class SolverOptions:
    """Stopping rules of the FABRIK iterations.

    :param tolerance_m: a solve is reached when the tool point is this close to the target [m]
    :param max_iterations: cap on forward+backward pass pairs per attempt
    :param min_improvement_m: two iterations in a row that each improve the best residual by
        less than this end the attempt as stalled [m]; 0.0 stops only when nothing improves
    :param bend: default bend preference for arms (see :class:`Bend`)

    >>> SolverOptions(tolerance_m=0.001).max_iterations
    30
    """

    tolerance_m: float = 1e-4
    max_iterations: int = 30
    min_improvement_m: float = 1e-7
    bend: Bend = Bend.ANY

    def __post_init__(self) -> None:
        """Reject values that would make the solver loop forever or never stop."""
        _check_positive_finite('tolerance_m', self.tolerance_m)
        if isinstance(self.max_iterations, bool) or not isinstance(self.max_iterations, int):
            raise SolverOptionsError('max_iterations', self.max_iterations, 'must be an int')
        if not 1 <= self.max_iterations <= 10_000:
            raise SolverOptionsError('max_iterations', self.max_iterations,
                                     'must be within [1, 10000]')
        value = self.min_improvement_m
        if not _is_real(value) or not math.isfinite(value) or value < 0.0:
            raise SolverOptionsError('min_improvement_m', value, 'must be a finite float >= 0.0')
        if not isinstance(self.bend, Bend):
            raise SolverOptionsError('bend', self.bend,
                                     f'must be one of {[b.value for b in Bend]}')


def _is_real(value: object) -> TypeGuard[float]:
    """Return True for an int or float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_positive_finite(name: str, value: object) -> None:
    """Raise SolverOptionsError unless ``value`` is a finite number > 0."""
    if not _is_real(value) or not math.isfinite(value) or value <= 0.0:
        raise SolverOptionsError(name, value, 'must be a finite float > 0.0')
