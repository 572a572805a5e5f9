"""Constrained FABRIK (Aristidou & Lasenby 2011) for general 2D and 3D chains.

One iteration is a forward pass (tip pinned on the target, bones placed inward) and a backward
pass (root pinned on the base, bones placed outward). Each joint's constraint is applied as its
bone is placed, in both passes, so the pose left by a backward pass is always within limits.

The passes take one pose or, for planar chains, numpy arrays holding one pose per target (each
point an array with a row per target): the batch solver runs these very functions.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
import math
from typing import Any, TypeVar

import numpy as np

from fabrik_ros.kinematics.elementwise import pick, Scalar, unit_or
from fabrik_ros.kinematics.errors import TargetError
from fabrik_ros.kinematics.options import SolverOptions
from fabrik_ros.kinematics.single.chain import Chain
from fabrik_ros.kinematics.single.results import ChainSolution, StopReason
from fabrik_ros.kinematics.vec3 import Vec3

P = TypeVar('P', complex, Vec3)
Q = TypeVar('Q', complex, Vec3, np.ndarray)
"""A point of one pose, or (planar chains) an array of points, one per target."""
STALLS = 2

def forward_pass(chain: Chain[Any], points: Sequence[Q], target: Q,
                 tip_direction: Q | None) -> list[Q]:
    """Pin the tip on the target and place each joint inward along its old bone (stage 1).

    Joint i+1's range is applied in reverse as bone i is placed, the outer bone being known.
    With a ``tip_direction`` the last bone is laid along it instead of toward the old joint.
    """
    count = len(chain.lengths)
    placed = list(points)
    placed[count] = target
    outer = tip_direction
    for i in range(count - 1, -1, -1):
        if i == count - 1 and tip_direction is not None:
            direction = tip_direction
        else:
            old = points[i + 1] - points[i]
            direction = unit_or(placed[i + 1] - points[i], unit_or(old, chain.base_direction))
            if outer is not None and i < count - 1:
                direction = chain.constraints[i + 1].limit_reverse(direction, outer)
        placed[i] = placed[i + 1] - direction * chain.lengths[i]
        outer = direction
    return placed


def backward_pass(chain: Chain[Any], points: Sequence[Q],
                  tip_direction: Q | None) -> tuple[list[Q], list[Q]]:
    """Pin the root on the base and place each joint outward within its range (stage 2).

    :return: the new joint positions and the bone directions, base bone first
    """
    count = len(chain.lengths)
    placed = [chain.base]
    directions = []
    previous = chain.base_direction
    for i in range(count):
        if i == count - 1 and tip_direction is not None:
            wanted = tip_direction
        else:
            wanted = unit_or(points[i + 1] - placed[i], previous)
        direction = chain.constraints[i].limit(wanted, previous)
        placed.append(placed[i] + direction * chain.lengths[i])
        directions.append(direction)
        previous = direction
    return placed, directions


def check_finite(name: str, value: complex | Vec3) -> None:
    """Raise TargetError unless every component of ``value`` is finite."""
    parts = (value.real, value.imag) if isinstance(value, complex) else tuple(value)
    if not all(math.isfinite(x) for x in parts):
        raise TargetError(f'{name} = {parts!r}, every component must be finite')


@dataclass
class BestPose:
    """The best pose seen during one solve (kept, since constrained passes can overshoot).

    ``stalls`` counts the pass pairs in a row that did not improve enough (see :func:`progress`).
    """

    points: list[Any]
    directions: list[Any]
    error_m: float
    stalls: int = field(default=0)


@dataclass(frozen=True)
class FabrikSolver:
    """Solve general chains with FABRIK under :class:`SolverOptions`.

    >>> chain = Chain.planar([1.0, 1.0])
    >>> solution = FabrikSolver().solve(chain, 1 + 1j)
    >>> solution.reached, solution.error_m < 1e-4
    (True, True)
    """

    options: SolverOptions = SolverOptions()

    def solve(self, chain: Chain[P], target: P, *, start: Sequence[P] | None = None,
              tip_direction: P | None = None) -> ChainSolution[P]:
        """Move the chain's tip to ``target`` from the ``start`` pose (see below if None).

        One attempt, from one start. Constrained FABRIK can settle in a local minimum, so a
        caller that must reach tries several starts (``solve_planar_chain`` does for planar
        chains). Without a ``start`` the chain begins gently curled (:meth:`Chain.curled`).

        :param target: wanted tip position [m], same type as the chain's points
        :param start: joint positions to warm-start from (a seed pose); settled onto the base
            and into the limits by one backward pass before iterating
        :param tip_direction: unit direction the last bone must point along, or None
        :raises TargetError: if the target or the tip direction is not finite
        """
        check_finite('target', target)
        if tip_direction is not None:
            check_finite('tip_direction', tip_direction)
            tip_direction = unit_or(tip_direction, chain.base_direction)
        if chain.unconstrained and tip_direction is None:
            stretch = target - chain.base
            if abs(stretch) >= chain.total_length:
                return self._stretched(chain, target, unit_or(stretch, chain.base_direction))
        initial = list(chain.curled() if start is None else start)
        return self._iterate(chain, target, initial, tip_direction)

    def _stretched(self, chain: Chain[P], target: P, direction: P) -> ChainSolution[P]:
        """Answer an out-of-reach target of a free chain: straight toward it, not reached."""
        points = chain.stretched(direction)
        error = abs(points[-1] - target)
        reached = error <= self.options.tolerance_m
        reason = StopReason.REACHED if reached else StopReason.UNREACHABLE
        return ChainSolution(points, (direction,) * len(chain.lengths), reached, error, 0,
                             reason)

    def _iterate(self, chain: Chain[P], target: P, points: list[P],
                 tip_direction: P | None) -> ChainSolution[P]:
        """Run pass pairs until reached, stalled or capped; return the best pose seen."""
        options = self.options
        points, directions = backward_pass(chain, points, tip_direction)
        best = BestPose(points, directions, abs(points[-1] - target))
        iterations, reason = iterate_from(chain, target, points, best, options,
                                          tip_direction=tip_direction, iterations=0,
                                          cap=options.max_iterations)
        if best.error_m <= options.tolerance_m:
            reason = StopReason.REACHED
        return ChainSolution(tuple(best.points), tuple(best.directions),
                             best.error_m <= options.tolerance_m, best.error_m, iterations,
                             reason)


def iterate_from(chain: Chain[Any], target: Q, points: list[Q], best: BestPose,
                 options: SolverOptions, *, tip_direction: Q | None, iterations: int,
                 cap: int) -> tuple[int, StopReason]:
    """Run pass pairs from ``points`` until reached, stalled or ``cap``; update ``best``.

    The loop of every FABRIK attempt; the batch solver also finishes its last few rows with it.

    :param iterations: pass pairs already spent on this attempt
    :return: the pass pairs spent in all, and CAP or STALLED (REACHED is the caller's to tell)
    """
    while best.error_m > options.tolerance_m and iterations < cap:
        iterations += 1
        points = forward_pass(chain, points, target, tip_direction)
        points, directions = backward_pass(chain, points, tip_direction)
        if _record(best, points, directions, abs(points[-1] - target), options):
            return iterations, StopReason.STALLED
    return iterations, StopReason.CAP


def _record(best: BestPose, points: list[Any], directions: list[Any], error_m: float,
            options: SolverOptions) -> bool:
    """Keep the pose if it is the best so far; return True when the solve has stalled."""
    improved, best.stalls = progress(best.error_m, error_m, best.stalls,
                                     options.min_improvement_m)
    if improved:
        best.points, best.directions, best.error_m = points, directions, error_m
    return best.stalls >= STALLS


def progress(best_error_m: Scalar, error_m: Scalar, stalls: Scalar,
             min_improvement_m: float) -> tuple[Scalar, Scalar]:
    """Return whether a pass pair improved on the best residual, and the updated stall count.

    A pass pair that improves by less than ``min_improvement_m`` (or not at all) counts as a
    stall; :data:`STALLS` in a row end the attempt. Works on one solve or arrays of them.

    >>> progress(1.0, 0.5, 1, 1e-7), progress(1.0, 1.0, 1, 1e-7)
    ((True, 0), (False, 2))
    """
    improvement = best_error_m - error_m
    improved = improvement > 0.0
    return improved, pick(improved & (improvement >= min_improvement_m), 0, stalls + 1)
