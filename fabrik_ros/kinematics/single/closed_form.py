"""Closed-form start poses that are already answers: the even arc, then the tool triangle.

Most targets are met by the even arc of :meth:`PlanarArm.arc_angles`. For a three-bone chain
the rest mostly are by fixing the last bone's direction: the wrist point follows, and the two
inner bones close a triangle with the base, two elbow branches in closed form. Tool directions
are tried spreading out from the arc's, the wanted elbow side first, for targets the chain can
reach (reach_boundary.ReachRegion). Only a pose within every limit, on the wanted side and
within tolerance counts; otherwise the solver runs FABRIK.
The single-target and the batch solver call these functions, so both try the same candidates
in the same order (one value, or arrays with a row per target).
"""

from collections.abc import Iterator
import math

import numpy as np

from fabrik_ros.kinematics.elementwise import arccos, phase, rotation, Scalar, wrap
from fabrik_ros.kinematics.single.chain import Chain
from fabrik_ros.kinematics.single.constraints import into_range
from fabrik_ros.kinematics.single.planar_arm import PlanarArm, side_of

TOOL_DIRECTIONS = 24


def within(chain: Chain[complex], angles_rad: list[Scalar]) -> Scalar:
    """Return True (or a bool per row) where every angle lies in its joint's range, no slack."""
    inside: Scalar = True
    for constraint, angle in zip(chain.constraints, angles_rad, strict=True):
        inside = inside & constraint.contains(angle, slack_rad=0.0)
    return inside


def triangle_candidates(tool_rad: Scalar, side: Scalar) -> Iterator[tuple[Scalar, Scalar]]:
    """Yield (tool direction [rad], elbow sign) pairs: nearest ``tool_rad`` first.

    Each direction is tried with the elbow bent to ``side`` first, then the other way.

    >>> [(round(t, 3), e) for t, e in triangle_candidates(0.0, 1)][:3]
    [(0.0, -1), (0.0, 1), (0.262, -1)]
    """
    for offset, elbow in CANDIDATE_STEPS:
        yield tool_rad + offset, elbow * side


def _candidate_steps() -> tuple[tuple[float, int], ...]:
    """Return the (tool offset [rad], elbow factor) of every triangle candidate, in order."""
    step = 2.0 * math.pi / TOOL_DIRECTIONS
    steps = []
    for index in range(TOOL_DIRECTIONS):
        turns = (index + 1) // 2 if index % 2 else -(index // 2)
        steps += [(turns * step, -1), (turns * step, 1)]
    return tuple(steps)


CANDIDATE_STEPS = _candidate_steps()


def triangle_angles(chain: Chain[complex], target: Scalar, tool_rad: Scalar,
                    elbow: Scalar) -> tuple[list[Scalar], Scalar]:
    """Return the angles [rad] of a three-bone chain with its last bone along ``tool_rad``.

    :param tool_rad: the last bone's direction, from the chain's base direction [rad]
    :param elbow: -1 or +1, the sign of the middle joint's angle
    :return: the angles, and whether the wrist point is within the inner bones' reach
    """
    inner, outer, last = chain.lengths
    toward = chain.base_direction.conjugate()
    wrist = (target - chain.base) * toward - last * rotation(tool_rad)
    reach = abs(wrist)  # the law of cosines, scaled so that no square can overflow
    cosine = 0.5 * ((reach / inner) * (reach / outer) - inner / outer - outer / inner)
    middle = elbow * arccos(cosine)
    first = wrap(phase(wrist) - phase(inner + outer * rotation(middle)))
    return [first, middle, wrap(tool_rad - first - middle)], abs(cosine) <= 1.0


def fits(planar: PlanarArm, angles_rad: list[Scalar], target: Scalar, side: Scalar,
         tolerance_m: Scalar) -> tuple[Scalar, Scalar]:
    """Return whether a pose is in limits, on ``side`` and on target, and its tip [m].

    Given arrays, answer with a bool and a tip per row.

    :param side: +1 / -1 for the wanted side of the base-to-tip chord, 0 for either
    """
    points = planar.points(angles_rad)
    good = within(planar.chain, angles_rad) & (abs(points[-1] - target) <= tolerance_m)
    if not (side.any() if isinstance(side, np.ndarray) else side):
        return good, points[-1]
    return good & ((side == 0) | (side_of(points) != -side)), points[-1]


def closed_form(planar: PlanarArm, target: complex, side: int,
                tolerance_m: float) -> tuple[list[float], complex] | None:
    """Return the first closed-form pose that fits and its tip, or None (FABRIK must search).

    A target beyond the chain's reach gets the chain stretched toward it when the limits allow
    (:func:`stretched`): no pose comes closer.

    :param side: the wanted elbow side (0: either; the arc then bends up, as FABRIK's first
        start does)
    :return: the angles, each turned into its joint's range, and the tip
    """
    chain = planar.chain
    aim = target - chain.base
    if abs(aim) > chain.total_length + tolerance_m:
        found = stretched(planar, target)
        return None if found is None else (in_ranges(chain, found[0]), found[1])
    first = side or (1 if aim.real >= 0.0 else -1)      # up_side, on one value
    angles, tip, in_range = planar.arc_pose(target, first)
    if in_range and abs(tip - target) <= tolerance_m:   # bent to ``first``: the wanted side
        return angles, tip
    if len(chain.lengths) != 3 or not planar.reach_region.contains(target):
        return None
    for tool_rad, elbow in triangle_candidates(math.fsum(angles), first):
        angles, reachable = triangle_angles(chain, target, tool_rad, elbow)
        if reachable:
            good, tip = fits(planar, angles, target, side, tolerance_m)
            if good:
                return in_ranges(chain, angles), tip
    return None


def in_ranges(chain: Chain[complex], angles_rad: list[float]) -> list[float]:
    """Return angles that lie in their joints' ranges up to whole turns, turned into them."""
    return [into_range(c, angle, slack_rad=0.0)
            for c, angle in zip(chain.constraints, angles_rad, strict=True)]


def stretched(planar: PlanarArm, target: Scalar) -> tuple[list[Scalar], Scalar] | None:
    """Return the chain stretched straight toward ``target`` and its tip, if within limits.

    Every tip lies within the chain's length of its base, so for a target beyond that reach
    the straight pose pointing at it is the closest any pose gets. Given arrays, return the
    poses for every row (check :func:`within` per row; None is for a single target only).
    """
    chain = planar.chain
    first = phase((target - chain.base) * chain.base_direction.conjugate())
    angles = [first] + [0.0 * first] * (len(chain.lengths) - 1)
    usable = within(chain, angles)
    if not isinstance(usable, np.ndarray) and not usable:
        return None
    return angles, planar.points(angles)[-1]
