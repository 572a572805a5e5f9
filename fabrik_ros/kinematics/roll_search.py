"""The roll to solve at when the tool sits off the roll axis and the kept roll misses.

A position-only target leaves the roll where it is: the seed's, or home. With the tool off the
roll axis the roll moves the tool point a little (its reach in the plane, and the plane's side
offset), so a target the kept roll misses may be reached at another. Then the roll nearest the
kept one that reaches is taken: the range is sampled (plus any roll known to put the tool in
line with the target), and between the kept roll and the first sample that reaches, bisection
finds the edge of the reaching rolls (a roll in line with the target is taken as it is: it
reaches exactly). When no sample reaches, the best is refined by a golden
section search and taken only if it comes closer than the kept roll by more than the tolerance.
"""

from collections.abc import Callable, Iterable
import math

import numpy as np

from fabrik_ros.kinematics.single.results import IkResult

SAMPLES = 13
"""Rolls sampled across the range (every 30 degrees of a whole turn)."""
BISECTIONS = 12
"""Halvings toward the kept roll: the edge to within 1/4096 of a sample step."""
GOLDEN_STEPS = 16

SolveAt = Callable[[float], IkResult]


def nearest_reaching_roll(solve_at: SolveAt, low: float, high: float, kept_roll: float,
                          kept: IkResult, *, tolerance_m: float,
                          exact: Iterable[float] = ()) -> IkResult:
    """Return the answer at the roll nearest ``kept_roll`` that reaches, else the closest.

    :param solve_at: solves the target with the roll at a geometric angle [rad]
    :param low: the roll range's lower end (geometric) [rad]
    :param high: its upper end [rad]
    :param kept: the answer at ``kept_roll``, which did not reach
    :param exact: rolls that put the tool in line with the target, tried with the samples
    """
    in_line = set(exact)
    samples = sorted({*np.linspace(low, high, SAMPLES).tolist(), *in_line},
                     key=lambda roll: abs(roll - kept_roll))
    best, best_roll = kept, kept_roll
    for roll in samples:
        if abs(roll - kept_roll) < 1e-12:
            continue
        result = solve_at(roll)
        if result.reached:
            return result if roll in in_line else _toward(solve_at, kept_roll, roll, result)
        if result.residual_m < best.residual_m:
            best, best_roll = result, roll
    step = (high - low) / (SAMPLES - 1)
    roll, refined = _golden(solve_at, max(low, best_roll - step), min(high, best_roll + step))
    if refined.reached:
        return _toward(solve_at, kept_roll, roll, refined)
    closest = refined if refined.residual_m < best.residual_m else best
    return closest if closest.residual_m < kept.residual_m - tolerance_m else kept


def _toward(solve_at: SolveAt, missing: float, reaching: float, result: IkResult) -> IkResult:
    """Return the reaching answer nearest the roll ``missing``, by bisection of the roll."""
    for _ in range(BISECTIONS):
        middle = 0.5 * (missing + reaching)
        found = solve_at(middle)
        if found.reached:
            reaching, result = middle, found
        else:
            missing = middle
    return result


def _golden(solve_at: SolveAt, low: float, high: float) -> tuple[float, IkResult]:
    """Return the roll in [low, high] whose answer comes closest, and that answer."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    left, right = high - ratio * (high - low), low + ratio * (high - low)
    at_left, at_right = solve_at(left), solve_at(right)
    for _ in range(GOLDEN_STEPS):
        if at_left.reached or at_right.reached:
            break
        if at_left.residual_m < at_right.residual_m:
            high, right, at_right = right, left, at_left
            left = high - ratio * (high - low)
            at_left = solve_at(left)
        else:
            low, left, at_left = left, right, at_right
            right = low + ratio * (high - low)
            at_right = solve_at(right)
    if at_right.reached or (not at_left.reached and at_right.residual_m < at_left.residual_m):
        return right, at_right
    return left, at_left
