"""The pitch joints of an arm as a planar FABRIK chain in the arm's vertical plane.

Plane coordinates are complex numbers ``u + iz``: ``u`` runs horizontally along the arm's yaw
direction, ``z`` up. The chain's base is the first pitch joint at ``(0, shoulder_height)`` and
its limits are measured from the horizontal.
"""

import cmath
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
import itertools
import math

import numpy as np

from fabrik_ros.kinematics.elementwise import (
    interpolate,
    phase,
    pick,
    rotation,
    Scalar,
    TINY,
    TURN,
    unit_or,
)
from fabrik_ros.kinematics.single.chain import Chain, planar_angles, planar_points
from fabrik_ros.kinematics.single.constraints import into_range
from fabrik_ros.kinematics.single.reach_boundary import (
    boundary_arcs,
    boundary_table,
    BoundaryArc,
    BoundaryTable,
    ReachRegion,
)

_TABLE_SIZE = 1000
_ARC_SAMPLES = 512
_CELLS = 64


def up_side(chord: Scalar) -> Scalar:
    """Return the side (+1 left, -1 right of ``chord``) that is physically above it.

    >>> up_side(1 + 0j), up_side(-1 + 0j)
    (1, -1)
    """
    return pick(chord.real >= 0.0, 1, -1)


def side_of(points: Sequence[Scalar]) -> Scalar:
    """Return which side of the base-to-tip chord the first inner joint lies on (0 if on it)."""
    if len(points) < 3:
        return 0
    cross = ((points[-1] - points[0]).conjugate() * (points[1] - points[0])).imag
    return pick(cross > 1e-12, 1, pick(cross < -1e-12, -1, 0))


@dataclass(frozen=True)
class PlanarArm:
    """A planar constrained chain plus the start poses the arm solver tries."""

    chain: Chain[complex]

    def points(self, angles_rad: Sequence[Scalar]) -> tuple[Scalar, ...]:
        """Return the joint positions in the plane for the pitch angles [rad]."""
        return planar_points(self.chain, angles_rad)

    def angles(self, directions: Sequence[Scalar]) -> tuple[Scalar, ...]:
        """Return the pitch angles [rad] of solved bone directions, each inside its range.

        An angle within its joint's range up to whole turns is given as the value inside it
        (:func:`into_range`), so a joint folded to a limit at pi never reads -pi.
        """
        return tuple(into_range(constraint, angle) for constraint, angle in zip(
            self.chain.constraints, planar_angles(self.chain, directions), strict=True))

    def arc_start(self, target: Scalar, side: Scalar) -> list[Scalar]:
        """Return the chain bent evenly into an arc whose chord runs from base to ``target``.

        Every joint turns by the same angle, read off :attr:`arc_table` so the chord length
        matches the target distance; the arc bulges to ``side`` (+1 left of the chord, -1
        right). This cold start already bends the way asked, so FABRIK never starts from a
        straight chain (which cannot leave a target on its own axis). Targets and sides may be
        arrays (one start per row).
        """
        heading, turn = self._arc(target, side)
        return arc_points(self.chain.base, heading, self.chain.lengths, turn)

    def arc_angles(self, target: Scalar, side: Scalar) -> list[Scalar]:
        """Return the joint angles [rad] of :meth:`arc_start`: the first bone's, then the turns.

        When they are all within the limits, the arc is an answer in closed form: its tip lies
        on the target up to the table's interpolation (well under a micrometre). One target
        takes :meth:`arc_pose`; arrays of them (a row per target) are computed here.
        """
        if not isinstance(target, np.ndarray):
            return self.arc_pose(target, side)[0]
        heading, turn = self._arc(target, side)
        first = phase(heading * self.chain.base_direction.conjugate())
        return [first] + [turn] * (len(self.chain.lengths) - 1)

    def arc_pose(self, target: complex, side: int) -> tuple[list[float], complex, bool]:
        """Return the even arc's angles [rad] and tip for one target, and whether it fits.

        Every cold solve tries this first, so it runs on plain floats with the chain's numbers
        read once. Where they fit (every angle in its joint's range up to whole turns, no
        slack) the angles are turned into the ranges; the tip is the arc's, on the line from
        the base to the target at the arc's chord length.
        """
        lengths, base, direction, hinges, chords, turns = self._arc_numbers
        aim = target - base
        distance = abs(aim)
        turn = -side * interpolate(distance, chords, turns)
        step = cmath.rect(1.0, turn)
        chord = 0j
        for length in lengths:
            chord += direction * length
            direction *= step
        reach = abs(chord)
        heading = aim / distance if distance > TINY else 1 + 0j
        first = cmath.phase(heading) - cmath.phase(chord)
        tip = base + heading * reach
        angles, angle = [], first
        for low, width in hinges:
            offset = (angle - low) % TURN
            if offset > width:
                return [first] + [turn] * (len(lengths) - 1), tip, False
            angles.append(low + offset)
            angle = turn
        return angles, tip, True

    @cached_property
    def _arc_numbers(self) -> tuple[tuple[float, ...], complex, complex,
                                    list[tuple[float, float]], list[float], list[float]]:
        """Return what :meth:`arc_pose` reads, once.

        The lengths, base, base direction, each hinge's (start, width), :attr:`arc_table`.
        """
        chain = self.chain
        chords, turns = self.arc_table
        return (chain.lengths, chain.base, chain.base_direction,
                [(c.min_rad, c.max_rad - c.min_rad) for c in chain.constraints],
                chords.tolist(), turns.tolist())

    def _arc(self, target: Scalar, side: Scalar) -> tuple[Scalar, Scalar]:
        """Return the first bone's direction and the even turn of the arc start."""
        chords, turns = self._arc_lists
        aim = target - self.chain.base
        turn = -side * interpolate(abs(aim), chords, turns)
        chord = arc_chord(self.chain.lengths, turn)
        return unit_or(aim, 1 + 0j) * (abs(chord) / chord), turn

    @cached_property
    def arc_table(self) -> tuple[np.ndarray, np.ndarray]:
        """Return chord lengths (ascending) and the even turn per joint that gives each.

        Sampled from a straight chain (turn 0) while the chord keeps shrinking, at most to
        pi / (n_bones - 1), where an even arc closes into a half circle.
        """
        turns = np.linspace(0.0, math.pi / max(1, len(self.chain.lengths) - 1), _ARC_SAMPLES)
        chords = np.abs(arc_chord(self.chain.lengths, turns))
        shrinking = np.flatnonzero(np.diff(chords) >= 0.0)
        end = int(shrinking[0]) + 1 if shrinking.size else len(turns)
        return chords[:end][::-1].copy(), turns[:end][::-1].copy()

    @cached_property
    def boundary_arcs(self) -> list[BoundaryArc]:
        """Return the arcs the reach boundary lies on (see :mod:`reach_boundary`)."""
        return boundary_arcs(self.chain)

    @cached_property
    def reach_region(self) -> ReachRegion:
        """Return the test of whether the tip can reach a point (see :mod:`reach_boundary`)."""
        return ReachRegion(self.chain)

    @cached_property
    def boundary_table(self) -> BoundaryTable:
        """Return :attr:`boundary_arcs` as arrays, for batches."""
        return boundary_table(self.boundary_arcs)

    @cached_property
    def _arc_lists(self) -> tuple[list[float], list[float]]:
        """Return :attr:`arc_table` as lists, for fast scalar look-ups."""
        chords, turns = self.arc_table
        return chords.tolist(), turns.tolist()

    def grid_start(self, target: Scalar) -> list[Scalar]:
        """Return the grid pose looked up for the target's cell (see :attr:`cells`).

        Given an array of targets, return the poses as one array per joint (a row per target).
        """
        if isinstance(target, np.ndarray):
            return list(self.table_points[:, self.cells[self.cell_of(target)]])
        index = self.cells[self.cell_of(np.array([target]))[0]]
        return self.table_points[:, index].tolist()  # type: ignore[no-any-return]

    def nearest_grid_start(self, target: Scalar) -> list[Scalar]:
        """Return the grid pose whose tip lies nearest the target itself (not its cell's centre).

        The cell's pose (:meth:`grid_start`) is near the target's cell; where the reach is
        folded (a shoulder leaning back over its base), the pose whose tip is nearest the
        target may sit on another branch, and FABRIK from it reaches where the cell's stalls.
        Given an array of targets, return the poses as one array per joint (a row per target).
        """
        tips = self.table_points[-1]
        if not isinstance(target, np.ndarray):
            index = int(np.argmin(np.abs(tips - target)))
            pose: list[Scalar] = self.table_points[:, index].tolist()
            return pose
        nearest = np.empty(len(target), dtype=int)
        for row in range(0, len(target), 256):
            block = target[row:row + 256]
            nearest[row:row + 256] = np.argmin(np.abs(block[:, None] - tips[None, :]), axis=1)
        return list(self.table_points[:, nearest])

    @cached_property
    def table_points(self) -> np.ndarray:
        """Return the (n_bones + 1, n_grid) joint positions of the grid poses."""
        hinges = self.chain.constraints
        per_joint = max(3, int(round(_TABLE_SIZE ** (1.0 / len(hinges)))))
        grids = [np.linspace(h.min_rad, h.max_rad, per_joint) for h in hinges]
        angles = np.array(list(itertools.product(*grids))).reshape(-1, len(hinges))
        absolute = np.cumsum(angles, axis=1)
        steps = np.exp(1j * absolute) * np.array(self.chain.lengths) * self.chain.base_direction
        bones = np.concatenate([np.zeros((len(angles), 1)), np.cumsum(steps, axis=1)], axis=1)
        return np.asarray((self.chain.base + bones).T, dtype=complex)

    @cached_property
    def cells(self) -> np.ndarray:
        """Return, per cell of a square grid over the reach, the nearest grid pose's index.

        Looking a target's cell up gives a nearby start pose in constant time (batch solves).
        """
        centres = self._cell_centres()
        tips = self.table_points[-1]
        nearest = np.empty(centres.size, dtype=int)
        for row in range(0, centres.size, 256):
            block = centres.reshape(-1)[row:row + 256]
            nearest[row:row + 256] = np.argmin(np.abs(block[:, None] - tips[None, :]), axis=1)
        return nearest

    def cell_of(self, targets: np.ndarray) -> np.ndarray:
        """Return the flat cell index of each target (targets outside go to the edge)."""
        reach = self.chain.total_length
        scale = _CELLS / (2.0 * reach)
        offset = targets - self.chain.base + complex(reach, reach)
        column = (np.clip(offset.real, 0.0, 2.0 * reach) * scale).astype(int)
        row = (np.clip(offset.imag, 0.0, 2.0 * reach) * scale).astype(int)
        column, row = np.minimum(column, _CELLS - 1), np.minimum(row, _CELLS - 1)
        return np.asarray(row * _CELLS + column)

    def _cell_centres(self) -> np.ndarray:
        reach = self.chain.total_length
        ticks = (np.arange(_CELLS) + 0.5) * (2.0 * reach / _CELLS) - reach
        return self.chain.base + ticks[None, :] + 1j * ticks[:, None]

    def mirrored(self, points: Sequence[complex]) -> list[complex] | None:
        """Return the pose reflected across its base-to-tip chord, or None if out of limits.

        The tip stays where it is and the inner joints swap sides: the other elbow branch.
        """
        reflected, _, usable = self.mirror(points)
        return reflected if usable else None

    def mirror(self, points: Sequence[Scalar]) -> tuple[list[Scalar], list[Scalar], Scalar]:
        """Return the pose reflected across its chord, its bone directions and its validity.

        Valid (True, or a bool per row for arrays) where the chord has a length and every
        reflected angle lies in its joint's range.
        """
        base, tip = points[0], points[-1]
        axis = unit_or(tip - base, 1 + 0j)
        reflected = [base + axis * (axis * (p - base).conjugate()) for p in points]
        reflected[-1] = tip
        pairs = zip(reflected, reflected[1:], strict=False)
        directions = [unit_or(b - a, 1 + 0j) for a, b in pairs]
        usable = abs(tip - base) >= 1e-12
        for constraint, angle in zip(self.chain.constraints, self.angles(directions), strict=True):
            usable = usable & constraint.contains(angle)
        return reflected, directions, usable


def arc_chord(lengths: Sequence[float], turn: Scalar) -> Scalar:
    """Return the base-to-tip vector of a chain laid along +u turning ``turn`` per joint.

    >>> abs(arc_chord([1.0, 1.0], math.pi / 2)) == math.sqrt(2.0)
    True
    """
    step = rotation(turn)
    direction: Scalar = 1 + 0j
    tip: Scalar = 0.0 * step    # shaped as ``turn``, even for one bone (which never turns)
    for length in lengths:
        tip = tip + direction * length
        direction = direction * step
    return tip


def arc_points(base: complex, heading: Scalar, lengths: Sequence[float],
               turn: Scalar) -> list[Scalar]:
    """Return the arc's joint positions from ``base``, first bone along ``heading``."""
    step = rotation(turn)
    points = [base]
    direction = heading
    for length in lengths:
        points.append(points[-1] + direction * length)
        direction = direction * step
    return points
