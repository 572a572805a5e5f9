"""The closest point a planar chain can reach, from the arcs its workspace boundary lies on.

A tip position is inside the region the chain can sweep when the joints that are free to move
(not at a limit) can push the tip in every direction. That fails only where the free joints
and the tip lie on one line: the tip can then only swing about the first free joint (the
pivot). So every boundary point lies on an arc traced by one pivot joint turning through its
range while the others stay fixed: the joints before it at a limit, each joint after it either
at a limit or turned so that the chain from it to the next such joint (or the tip) lies along
the pivot-to-tip line, pointing out or folded back. Those arcs depend on the chain alone; a
target out of reach is then answered exactly by the nearest point over a few dozen arcs, where
FABRIK would need hundreds of iterations to settle against the limits.

A target inside the region also has a nearest arc point, at a distance above zero: there the
arcs give a start pose, not the answer. :class:`ReachRegion` tells the two cases apart exactly,
from the same arcs of the chain's shorter tails.
"""

from collections.abc import Sequence
import itertools
import math
from typing import NamedTuple

import numpy as np

from fabrik_ros.kinematics.elementwise import phase, pick, rotation, Scalar, TINY, wrap
from fabrik_ros.kinematics.single.chain import Chain, planar_pose
from fabrik_ros.kinematics.single.results import ChainSolution, StopReason

_AT_MIN, _AT_MAX, _OUT, _BACK = range(4)
_TOUCH_M = 1e-12
_TOUCH_RAD = 1e-12
_FEW_ROWS = 64
"""Below this many targets, one at a time is quicker than numpy (its per-call cost)."""


class BoundaryArc(NamedTuple):
    """The tip's path while joint ``pivot`` turns through its range, the others fixed.

    The tip is ``centre + radius * e^(i (phase0 + angle))`` for the pivot's ``angle`` within
    ``mid +- half`` [rad]; ``angles`` holds every joint's angle, the pivot's as 0.0.
    """

    pivot: int
    angles: tuple[float, ...]
    centre: complex
    radius: float
    phase0: float
    mid: float
    half: float


class BoundaryTable(NamedTuple):
    """The arcs of one chain as arrays, one column per arc (for batches of targets)."""

    centre: np.ndarray
    radius: np.ndarray
    phase0: np.ndarray
    mid: np.ndarray
    half: np.ndarray
    angles: np.ndarray      # (n_arcs, n_joints), the pivot's angle as 0.0
    pivot: np.ndarray


MAX_JOINTS = 5
"""Longest chain given arcs: their count grows as 4 ** joints (496 arcs at 5 joints)."""


def boundary_arcs(chain: Chain[complex]) -> list[BoundaryArc]:
    """Return the arcs every boundary point of ``chain``'s reachable region lies on.

    An empty list for chains longer than :data:`MAX_JOINTS` (the solver then searches alone).

    >>> chain = Chain.planar([1.0, 1.0], [(0.0, math.pi / 2), (0.0, math.pi / 2)])
    >>> sorted({round(arc.radius, 6) for arc in boundary_arcs(chain)})
    [1.0, 1.414214, 2.0]
    """
    arcs: list[BoundaryArc] = []
    limits = [(c.min_rad, c.max_rad) for c in chain.constraints]
    if len(limits) > MAX_JOINTS:
        return arcs
    for pivot in range(len(limits)):
        for before in itertools.product(*limits[:pivot]):
            for choices in itertools.product(range(4), repeat=len(limits) - pivot - 1):
                after = _settle(chain, pivot, choices)
                if after is not None:
                    arcs.append(_arc(chain, pivot, (*before, 0.0, *after)))
    return arcs


def _arc(chain: Chain[complex], pivot: int, angles: Sequence[float]) -> BoundaryArc:
    """Return the arc of joint ``pivot`` turning, the other joints at ``angles``."""
    centre, heading = _walk(chain, 0, angles[:pivot], chain.base, chain.base_direction)
    tip, _ = _walk(chain, pivot, (0.0, *angles[pivot + 1:]), centre, heading)
    spoke = tip - centre
    constraint = chain.constraints[pivot]
    low, high = constraint.min_rad, constraint.max_rad
    return BoundaryArc(pivot, (*angles[:pivot], 0.0, *angles[pivot + 1:]), centre, abs(spoke),
                       math.atan2(spoke.imag, spoke.real), 0.5 * (low + high),
                       0.5 * (high - low))


def boundary_table(arcs: Sequence[BoundaryArc]) -> BoundaryTable:
    """Return ``arcs`` as arrays."""
    columns = list(zip(*arcs, strict=True))
    pivot, angles, centre, radius, phase0, mid, half = (np.array(c) for c in columns)
    return BoundaryTable(centre, radius, phase0, mid, half, angles, pivot)


def _walk(chain: Chain[complex], first: int, angles: Sequence[float], start: complex,
          heading: complex) -> tuple[complex, complex]:
    """Return where bones ``first``... end, and their last direction, turned by ``angles``."""
    point, direction = start, heading
    for length, angle in zip(chain.lengths[first:], angles, strict=False):
        direction = direction * complex(math.cos(angle), math.sin(angle))
        point = point + direction * length
    return point, direction


def _settle(chain: Chain[complex], pivot: int,
            choices: Sequence[int]) -> tuple[float, ...] | None:
    """Return the angles of the joints after ``pivot`` for one choice per joint, or None.

    ``_AT_MIN`` / ``_AT_MAX`` put the joint at a limit; ``_OUT`` / ``_BACK`` turn it so the
    rigid stretch from it to the next such joint (or the tip) points along the pivot-to-tip
    line, away from the pivot or back toward it. Worked in the pivot's bone frame (pivot at
    0, its bone along +1); None when an aligned angle falls outside its joint's range or the
    line is not defined.
    """
    constraints = chain.constraints[pivot + 1:]
    angles = [c.min_rad if k == _AT_MIN else c.max_rad if k == _AT_MAX else math.nan
              for c, k in zip(constraints, choices, strict=True)]
    aligned = [i for i, k in enumerate(choices) if k in (_OUT, _BACK)]
    if not aligned:
        return tuple(angles)
    ends = aligned[1:] + [len(angles)]
    # From the pivot to the first aligned joint: that stretch sets the line.
    start, heading = _walk(chain, pivot, (0.0, *angles[:aligned[0]]), 0j, 1 + 0j)
    if abs(start) < TINY:
        return None
    line = start / abs(start)
    for index, end in zip(aligned, ends, strict=True):
        joint = pivot + 1 + index
        stretch, _ = _walk(chain, joint, (0.0, *angles[index + 1:end]), 0j, heading)
        if abs(stretch) < TINY:
            return None
        wanted = line if choices[index] == _OUT else -line
        angle = wrap(math.atan2((wanted / stretch).imag, (wanted / stretch).real))
        if not constraints[index].contains(angle, slack_rad=0.0):
            return None
        angles[index] = angle
        start, heading = _walk(chain, joint, angles[index:end], start, heading)
    return tuple(angles)


def closest_on_arcs(arcs: Sequence[BoundaryArc],
                    target: complex) -> tuple[float, BoundaryArc, float]:
    """Return the distance [m], the arc and the pivot angle [rad] of the nearest arc point."""
    best = (math.inf, arcs[0], 0.0)
    for arc in arcs:
        squared, angle = _nearest_on(arc, target)
        if squared < best[0]:
            best = (squared, arc, angle)
    squared, arc, angle = best
    return math.sqrt(max(0.0, squared)), arc, angle


def _nearest_on(arc: BoundaryArc | BoundaryTable, target: Scalar) -> tuple[Scalar, Scalar]:
    """Return the squared distance [m^2] and the pivot angle [rad] of arc's nearest point.

    One arc and one target, or a table of arcs against a column of targets (a row each).
    """
    spoke = target - arc.centre
    distance = abs(spoke)
    offset = wrap(phase(spoke) - arc.phase0 - arc.mid)
    turn = pick(offset > arc.half, arc.half, pick(offset < -arc.half, -arc.half, offset))
    return (distance * distance + arc.radius * arc.radius
            - 2.0 * distance * arc.radius * rotation(turn - offset).real), arc.mid + turn


def closest_on_table(table: BoundaryTable, targets: np.ndarray) -> np.ndarray:
    """Return, per target, the joint angles [rad] of the nearest arc point (a row each)."""
    squared, pivot_angle = _nearest_on(table, targets[:, None])
    nearest = np.argmin(squared, axis=1)
    rows = np.arange(len(targets))
    angles: np.ndarray = table.angles[nearest].copy()
    angles[rows, table.pivot[nearest]] = pivot_angle[rows, nearest]
    return angles


def closest_pose(chain: Chain[complex], arcs: Sequence[BoundaryArc], target: complex,
                 tolerance_m: float) -> ChainSolution[complex]:
    """Return the pose whose tip is the nearest arc point to ``target``.

    For a target out of reach this is the closest reachable pose; for one inside the region
    it is a start pose near the target's nearest boundary (its residual is not the least).
    """
    _, arc, angle = closest_on_arcs(arcs, target)
    angles = list(arc.angles)
    angles[arc.pivot] = angle
    points, directions = planar_pose(chain, angles)
    error = abs(points[-1] - target)
    reached = error <= tolerance_m
    return ChainSolution(points, directions, reached, error, 0,
                         StopReason.REACHED if reached else StopReason.UNREACHABLE)


class ReachRegion:
    """Whether a point lies in the region a planar chain's tip can reach, decided exactly.

    The tip reaches ``t`` when some angle ``q`` of the first joint puts ``t``, seen from the
    second joint in the first bone's frame (``e^(-iq) t - length``), in the region of the
    chain that starts at the second joint. As ``q`` runs through its range that point traces
    an arc, which meets the shorter chain's region exactly when it crosses one of that
    region's boundary arcs (all of them reachable points) or starts inside it: the same
    question one joint shorter. The last joint's region is a curve, met only by crossing.
    """

    def __init__(self, chain: Chain[complex]) -> None:
        """Build the boundary arcs of every chain that starts at the second joint or later."""
        self._chain = chain
        self._arcs = [boundary_arcs(Chain(0j, 1 + 0j, chain.lengths[k:], chain.constraints[k:]))
                      for k in range(1, len(chain.lengths))]

    def contains(self, target: Scalar) -> Scalar:
        """Return True where the tip can reach ``target`` (one point, or an array of them).

        >>> region = ReachRegion(Chain.planar([1.0, 1.0], [(-1.0, 1.0), (0.0, 1.0)]))
        >>> region.contains(1.9 + 0.1j), region.contains(0.5 + 0j)
        (True, False)
        """
        if isinstance(target, np.ndarray) and target.size < _FEW_ROWS:
            return np.array([self.contains(complex(t)) for t in target.reshape(-1)],
                            dtype=bool).reshape(target.shape)
        chain = self._chain
        return self._contains(0, (target - chain.base) * chain.base_direction.conjugate())

    def _contains(self, joint: int, target: Scalar) -> Scalar:
        if joint >= len(self._arcs):
            return abs(target) < 0.0        # a curve: no inside (False, per row for arrays)
        constraint, length = self._chain.constraints[joint], self._chain.lengths[joint]
        low, high = constraint.min_rad, constraint.max_rad
        radius, middle = abs(target), phase(target) - 0.5 * (low + high)
        one = not isinstance(target, np.ndarray)      # one point: stop at the first yes
        inside = radius < 0.0
        for arc in self._arcs[joint]:
            inside = inside | _crosses(complex(-length, 0.0), radius, middle, 0.5 * (high - low),
                                       arc)
            if one and inside:
                return True
        for end in (low, high):
            inside = inside | self._contains(joint + 1, target * rotation(-end) - length)
            if one and inside:
                return True
        return inside


def _crosses(centre: complex, radius: Scalar, middle: Scalar, half: float,
             arc: BoundaryArc) -> Scalar:
    """Return where an arc about ``centre`` (spanning ``middle +- half``) meets ``arc``.

    Touching counts. ``radius`` and ``middle`` may be arrays (one arc per row).
    """
    between = arc.centre - centre
    gap = abs(between)
    if gap < TINY:
        return (abs(radius - arc.radius) <= _TOUCH_M) & (
            abs(wrap(middle - arc.phase0 - arc.mid)) <= half + arc.half + _TOUCH_RAD)
    along = (radius * radius - arc.radius * arc.radius + gap * gap) / (2.0 * gap)
    squared = radius * radius - along * along
    height = pick(squared > 0.0, squared, 0.0) ** 0.5
    meets = (gap <= radius + arc.radius + _TOUCH_M) & (gap >= abs(radius - arc.radius) - _TOUCH_M)
    if meets is False or (isinstance(meets, np.ndarray) and not meets.any()):
        return meets
    crossing = meets & False
    for side in (1.0, -1.0):
        point = centre + between / gap * (along + 1j * side * height)
        crossing = crossing | (_within(point - centre, radius, middle, half)
                               & _within(point - arc.centre, arc.radius,
                                         arc.phase0 + arc.mid, arc.half))
    return meets & crossing


def _within(offset: Scalar, radius: Scalar, middle: Scalar, half: float) -> Scalar:
    """Return where ``offset`` from an arc's centre points within the arc's span."""
    return (radius < TINY) | (abs(wrap(phase(offset) - middle)) <= half + _TOUCH_RAD)
