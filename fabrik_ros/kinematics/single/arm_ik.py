"""Arm IK: choose the yaw branch, reduce to the planar chain, solve it with FABRIK.

The yaw joint turns the arm's vertical plane; every pitch joint then works inside it. A target
at azimuth ``a`` can be reached from yaw ``a`` (arm in front) or yaw ``a + pi`` (shoulder past
90 degrees, reaching over the top); yaw limits decide which exist. When neither does, the yaw
stops at a limit and the closest point in that plane is the answer.
"""

import cmath
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
import math
from typing import NamedTuple

import numpy as np

from fabrik_ros.kinematics.aliases import FloatVector
from fabrik_ros.kinematics.approach import angle_between, in_base
from fabrik_ros.kinematics.description.joint import Joint
from fabrik_ros.kinematics.elementwise import phase, pick, rotation, Scalar, TINY, TURN, wrap
from fabrik_ros.kinematics.errors import TargetError
from fabrik_ros.kinematics.options import Bend, SolverOptions
from fabrik_ros.kinematics.single.attempts import Attempts
from fabrik_ros.kinematics.single.chain import Chain, planar_pose
from fabrik_ros.kinematics.single.closed_form import triangle_angles
from fabrik_ros.kinematics.single.fabrik import backward_pass, check_finite, FabrikSolver
from fabrik_ros.kinematics.single.planar_arm import PlanarArm, side_of, up_side
from fabrik_ros.kinematics.single.reach_boundary import closest_pose
from fabrik_ros.kinematics.single.results import ChainSolution, StopReason
from fabrik_ros.kinematics.single.yaw_branches import branch_headings, turns_within
from fabrik_ros.kinematics.vec3 import Vec3

DEFAULT_OPTIONS = SolverOptions()
SEED_ITERATIONS = 10
"""Cap on the seed's attempt: a seed near the answer gets there in a few pass pairs; one that
does not is better left for the arcs bent on its side (a slow FABRIK crawl costs ~7 us a pass
pair and ends where an arc start lands at once)."""


def seed_options(options: SolverOptions) -> SolverOptions:
    """Return ``options`` for the seed's attempt (the cap :data:`SEED_ITERATIONS`)."""
    return replace(options, max_iterations=min(SEED_ITERATIONS, options.max_iterations))


class Plane(NamedTuple):
    """One yaw branch: the yaw angle, the target in plane coordinates and off the plane.

    A NamedTuple rather than a frozen dataclass: one is built per solve, and it is cheaper.
    """

    yaw_rad: float
    target: complex
    off_plane_m: float


class PlanarAnswer(NamedTuple):
    """The best planar solution found for one plane, with the work it took."""

    plane: Plane
    solution: ChainSolution[complex]
    iterations: int

    @property
    def error_m(self) -> float:
        """Return the 3D residual: in-plane error combined with the distance off the plane."""
        return math.hypot(self.solution.error_m, self.plane.off_plane_m)


def candidate_planes(yaw: Joint | None, target: Vec3, preferred_yaw: float | None,
                     lateral_m: float = 0.0) -> Iterator[Plane]:
    """Yield the yaw branches worth solving, the most preferred first.

    In-range branches (front, over the top) come first: the one nearer ``preferred_yaw``
    (the seed's yaw) leading, or the front one without a preference. The yaw limits follow,
    for targets no in-range branch reaches. The closest reachable point lies in one of these
    planes: for any pose, turning the yaw toward the target's azimuth (or its opposite, for a
    pose reaching over the top) only brings the tool nearer, until the azimuth or a limit is
    met. ``yaw`` is the yaw joint's geometric view; ``lateral_m`` how far the arm's plane
    runs beside the yaw axis (:mod:`yaw_branches`).
    """
    if yaw is None:
        yield _plane(0.0, target, lateral_m)
        return
    ranged = []
    for heading in branch_headings(target.x, target.y, lateral_m):
        ranged += turns_within(heading, yaw.min_rad, yaw.max_rad)
    if preferred_yaw is not None:
        ranged.sort(key=lambda t: abs(wrap(t - preferred_yaw)))
    for turn in _unique(ranged + [yaw.min_rad, yaw.max_rad]):
        yield _plane(turn, target, lateral_m)


def first_plane(yaw: Joint | None, x: float, y: float, z: float, lateral_m: float = 0.0) -> Plane:
    """Return the first plane :func:`candidate_planes` yields without a preferred yaw.

    The arm facing the target (x, y, z) [m] when the yaw range allows it, else reaching over
    the top to it, else at the lower yaw limit; found on floats without building the list:
    every cold solve's first try starts here.
    """
    chosen = 0.0
    if yaw is not None:
        low, high = yaw.min_rad, yaw.max_rad
        azimuth = math.atan2(y, x)      # branch_headings, on one value
        turn = math.asin(min(1.0, max(-1.0, lateral_m / max(math.hypot(x, y), TINY)))
                         ) if lateral_m != 0.0 else 0.0
        chosen = low + (azimuth - turn - low) % TURN     # first_turn, on one value
        if chosen > high:
            chosen = low + (azimuth + math.pi + turn - low) % TURN
            if chosen > high:
                chosen = low
    heading = cmath.rect(1.0, chosen)   # plane_coordinates, on one value
    along = x * heading.real + y * heading.imag
    return Plane(chosen, complex(along, z), abs(y * heading.real - x * heading.imag - lateral_m))


def _unique(angles: list[float]) -> list[float]:
    """Return ``angles`` without repeats (to 1e-12 rad), order kept."""
    kept: list[float] = []
    for angle in angles:
        if all(abs(angle - k) > 1e-12 for k in kept):
            kept.append(angle)
    return kept


def _plane(yaw_rad: float, target: Vec3, lateral_m: float) -> Plane:
    """Return the plane at ``yaw_rad`` with the target's coordinates in and off it."""
    goal, off_plane = plane_coordinates(yaw_rad, target.x, target.y, target.z, lateral_m)
    return Plane(yaw_rad, goal, off_plane)


def plane_coordinates(yaw_rad: Scalar, x: Scalar, y: Scalar, z: Scalar,
                      lateral_m: float = 0.0) -> tuple[Scalar, Scalar]:
    """Return a target's in-plane coordinates (along + i z) and its distance off the plane [m].

    The plane is the arm's vertical plane at ``yaw_rad``, ``lateral_m`` beside the yaw axis;
    one target or arrays of them.
    """
    heading = rotation(yaw_rad)
    along = x * heading.real + y * heading.imag
    across = -x * heading.imag + y * heading.real - lateral_m
    return along + 1j * z, abs(across)


def wanted_side(bend: Bend, pole: Vec3 | None, plane: Plane, base: complex) -> int:
    """Return the side (+1 left, -1 right of the chord, 0 any) the elbow should take."""
    chord = plane.target - base
    if pole is not None:
        cos, sin = math.cos(plane.yaw_rad), math.sin(plane.yaw_rad)
        toward = complex(pole.x * cos + pole.y * sin, pole.z) - base
        cross = (chord.conjugate() * toward).imag
        return (cross > 0.0) - (cross < 0.0)
    return int(bend_side(bend, chord))


def bend_side(bend: Bend, chord: Scalar) -> Scalar:
    """Return the elbow side a bend preference asks for, given the base-to-target chord(s).

    >>> bend_side(Bend.DOWN, 1 + 1j), bend_side(Bend.ANY, 1 + 1j)
    (-1, 0)
    """
    if bend is Bend.ANY:
        return 0 * chord.real if isinstance(chord, np.ndarray) else 0
    return up_side(chord) * (1 if bend is Bend.UP else -1)


@dataclass(frozen=True)
class ArmIk:
    """Solve one arm target: planes, start poses, attempts, and the bend preference.

    ``tool_turn_rad`` is the chain's last link's turn from the tool's axis (RollPlane's): an
    asked approach is met by the tool's axis, so the last link is laid that much turned.
    """

    planar: PlanarArm
    solver: FabrikSolver
    lateral_m: float = 0.0
    tool_turn_rad: float = 0.0

    def solve_plane(self, plane: Plane, *, seed_points: Sequence[complex] | None,
                    side: int, tip_direction: complex | None) -> PlanarAnswer:
        """Try the start poses in turn until one reaches on the wanted side; return the best.

        Starts: the seed, the arc bent to the wanted side, the arc bent the other way, the grid
        pose of the target's cell, the grid pose whose tip lies nearest the target, the pose at
        the nearest point of the reach
        boundary. A target the chain cannot reach (:class:`ReachRegion`, decided exactly once
        the seed has not reached it) gets that boundary pose, the closest there is, at once.
        """
        attempts = Attempts(self.solver, self.planar, plane.target, side=side,
                            tip_direction=tip_direction)
        if tip_direction is not None:
            self._lay_tool(attempts, plane.target, tip_direction, side, seed_points)
        if seed_points is not None and not attempts.done:
            attempts.run(seed_points, solver=self._seed_solver)
        boundary = tip_direction is None and bool(self.planar.boundary_arcs)
        if boundary and not attempts.done and not self.planar.reach_region.contains(
                plane.target):
            attempts.offer(self._boundary_pose(plane.target))
            attempts.out_of_reach = True
        for start in self._cold_starts(plane.target, seed_points, side):
            if attempts.done:
                break
            attempts.run(start)
        if boundary and not attempts.done:
            nearest = self._boundary_pose(plane.target)
            attempts.offer(nearest)
            attempts.run(nearest.points)
        assert attempts.best is not None
        return PlanarAnswer(plane, attempts.best, attempts.iterations)

    def _lay_tool(self, attempts: Attempts, target: complex, tip_direction: complex, side: int,
                  seed_points: Sequence[complex] | None) -> None:
        """Offer the three-bone poses whose last bone lies along ``tip_direction`` exactly.

        With the tool's direction asked, the last bone fixes the wrist point and the two inner
        bones close a triangle with the base: two elbow branches in closed form, the wanted
        (else the seed's) side first. A branch within every limit meets the target and the
        approach at once, where FABRIK crawled toward it (one reachable pose target in ten
        ended a few tenths of a millimetre short after its 30 iterations).
        """
        chain = self.planar.chain
        if attempts.done or len(chain.lengths) != 3:
            return
        tool_rad = phase(tip_direction * chain.base_direction.conjugate())
        first = side or (side_of(seed_points) if seed_points is not None else 0) or up_side(
            target - chain.base)
        for elbow in (-first, first):     # a straight elbow may not close by a rounding:
            angles, _ = triangle_angles(chain, target, tool_rad, elbow)     # the error tells
            if all(hinge.contains(angle)
                   for hinge, angle in zip(chain.constraints, angles, strict=True)):
                # A pose on a limit may lie a rounding beyond it: the pass puts it on it.
                points, directions = backward_pass(chain, planar_pose(chain, angles)[0],
                                                   tip_direction)
                error = abs(points[-1] - target)
                reached = error <= self.solver.options.tolerance_m
                attempts.offer(ChainSolution(tuple(points), tuple(directions), reached, error, 0,
                                             StopReason.REACHED if reached
                                             else StopReason.STALLED))
                if attempts.done:
                    return

    @cached_property
    def _seed_solver(self) -> FabrikSolver:
        return FabrikSolver(seed_options(self.solver.options))

    def _boundary_pose(self, target: complex) -> ChainSolution[complex]:
        """Return the pose at the reach boundary's point nearest ``target``."""
        return closest_pose(self.planar.chain, self.planar.boundary_arcs, target,
                            self.solver.options.tolerance_m)

    def _cold_starts(self, target: complex, seed_points: Sequence[complex] | None,
                     side: int) -> Iterator[Sequence[complex]]:
        """Yield start poses: the arcs (the wanted side first), then two nearby grid poses."""
        first = side or (side_of(seed_points) if seed_points is not None else 0) or up_side(
            target - self.planar.chain.base)
        yield self.planar.arc_start(target, first)
        yield self.planar.arc_start(target, -first)
        yield self.planar.grid_start(target)
        yield self.planar.nearest_grid_start(target)


def solve_planar_chain(chain: Chain[complex], target: complex, *,
                       options: SolverOptions = DEFAULT_OPTIONS,
                       seed: Sequence[complex] | None = None, side: int = 0,
                       tip_direction: complex | None = None) -> ChainSolution[complex]:
    """Solve any planar chain with the arm's start poses (seed, reach boundary, arcs, grid).

    :param seed: joint positions to try first (the current pose)
    :param side: +1 / -1 to prefer the first inner joint left / right of the base-to-tip
        chord, 0 for no preference
    :param tip_direction: unit direction the last bone must point along, or None
    :raises TargetError: if the target is not finite
    """
    check_finite('target', target)
    ik = ArmIk(PlanarArm(chain), FabrikSolver(options))
    return ik.solve_plane(Plane(0.0, target, 0.0), seed_points=seed, side=side,
                          tip_direction=tip_direction).solution


def best_answer(ik: ArmIk, planes: Iterable[Plane], *, seed_points: Sequence[complex] | None,
                bend: Bend, pole: Vec3 | None, approach: Vec3 | None) -> tuple[PlanarAnswer, int]:
    """Solve the planes in order, stop at the first that reaches; return the best and work.

    A plane whose lower bound (:func:`plane_bound`) is already no better than the best
    answer is skipped: nothing in it can come closer. With an approach asked, a plane that
    reaches but misses the approach does not end the search: another plane that may reach
    (reaching over the top of a plane beside the yaw axis) may hold more of the approach, and
    among the reaching answers the one whose tool axis is nearest it wins.
    """
    best: PlanarAnswer | None = None
    best_rank = (True, 0.0, math.inf)
    iterations = 0
    chain = ik.planar.chain
    tolerance = ik.solver.options.tolerance_m
    for plane in planes:
        if best is not None and plane_bound(plane, chain) >= max(
                best.error_m, 0.0 if approach is None else tolerance):
            continue
        side = wanted_side(bend, pole, plane, ik.planar.chain.base)
        answer = ik.solve_plane(plane, seed_points=seed_points, side=side,
                                tip_direction=_in_plane(approach, plane, ik.tool_turn_rad))
        iterations += answer.iterations
        short = answer.error_m > tolerance
        miss = 0.0 if short or approach is None else _approach_miss(answer, approach,
                                                                   ik.tool_turn_rad)
        rank = (short, miss, answer.error_m)
        if best is None or rank < best_rank:
            best, best_rank = answer, rank
        if not best_rank[0] and best_rank[1] <= _APPROACH_MET_RAD:
            break
    assert best is not None
    return best, iterations


_APPROACH_MET_RAD = 1e-9
"""A reaching answer whose tool axis is this near the asked approach ends the plane search."""


def _approach_miss(answer: PlanarAnswer, approach: Vec3, tool_turn_rad: float) -> float:
    """Return the angle between the asked approach and a planar answer's tool axis [rad]."""
    axis = answer.solution.directions[-1] * complex(math.cos(tool_turn_rad),
                                                    -math.sin(tool_turn_rad))
    return angle_between(approach, in_base(answer.plane.yaw_rad, axis))


def turn_to_target(ik: ArmIk, yaw: Joint, target: Vec3, answer: PlanarAnswer, *, bend: Bend,
                   pole: Vec3 | None, approach: Vec3 | None) -> tuple[PlanarAnswer, int]:
    """Return the answer with the tool, not the plane, turned to an unreached target; and work.

    With the arm's plane beside the yaw axis, the pose nearest a target out of reach is not in
    the plane through the target: the yaw must bring the tool point (``along`` forward,
    ``lateral_m`` aside) to the target's azimuth, ``azimuth - atan2(lateral, along)``. Each
    answer's reach sets the next yaw; a few rounds settle it (the lateral offset is small).
    """
    azimuth = math.atan2(target.y, target.x)
    best, work = answer, 0
    for _ in range(_TURN_ROUNDS):
        along = best.solution.points[-1].real
        turns = turns_within(azimuth - math.atan2(ik.lateral_m, along), yaw.min_rad,
                             yaw.max_rad)
        if not turns:
            break
        plane = _plane(turns[0], target, ik.lateral_m)
        found = ik.solve_plane(plane, seed_points=best.solution.points,
                               side=wanted_side(bend, pole, plane, ik.planar.chain.base),
                               tip_direction=_in_plane(approach, plane, ik.tool_turn_rad))
        work += found.iterations
        if found.error_m >= best.error_m - 1e-12:
            break
        best = found
    return best, work


_TURN_ROUNDS = 4


def planes_differ(chain: Chain[complex], lateral_m: float) -> bool:
    """Return True when another yaw plane may come closer to a target the first one misses.

    With the shoulder on the yaw axis and the plane through it, the stretched pose toward a
    target out of reach is the closest in every plane; off the axis, reaching over the top may
    be nearer (or reach).
    """
    return lateral_m != 0.0 or chain.base.real != 0.0


def plane_bound(plane: Plane, chain: Chain[complex]) -> float:
    """Return a lower bound of the residual any pose in ``plane`` can have [m]."""
    return float(reach_bound(plane.target, plane.off_plane_m, chain))


def reach_bound(target: Scalar, off_plane_m: Scalar, chain: Chain[complex]) -> Scalar:
    """Return a lower bound of the residual [m] for target(s) in a plane.

    The target's distance from the plane, combined with how far it lies beyond the chain's
    full reach inside the plane.
    """
    beyond = abs(target - chain.base) - chain.total_length
    return abs(off_plane_m + 1j * pick(beyond > 0.0, beyond, 0.0))


def _in_plane(approach: Vec3 | None, plane: Plane, tool_turn_rad: float) -> complex | None:
    """Return the chain's last link direction that lays the tool's axis along the approach.

    The approach direction's part in the plane, turned by the last link's ``tool_turn_rad``
    from the tool's axis; None when none is asked or it is normal to the plane.
    """
    if approach is None:
        return None
    cos, sin = math.cos(plane.yaw_rad), math.sin(plane.yaw_rad)
    direction = complex(approach.x * cos + approach.y * sin, approach.z)
    if abs(direction) <= 1e-9:
        return None
    return direction / abs(direction) * complex(math.cos(tool_turn_rad), math.sin(tool_turn_rad))


def as_vec3(name: str, value: FloatVector) -> Vec3:
    """Return a finite 3-vector from any 3-sequence or raise TargetError (a ValueError)."""
    try:
        x, y, z = value
        vector = Vec3(float(x), float(y), float(z))
    except (TypeError, ValueError) as error:
        raise TargetError(f'{name} = {value!r}, must be 3 numbers (x, y, z) [m]') from error
    if not (math.isfinite(vector.x) and math.isfinite(vector.y) and math.isfinite(vector.z)):
        check_finite(name, vector)      # raises, naming the value
    return vector


def stop_reason(answer: PlanarAnswer, reached: bool) -> StopReason:
    """Return why the solve ended, from the 3D point of view."""
    if reached:
        return StopReason.REACHED
    if answer.solution.stop_reason is StopReason.REACHED:
        return StopReason.UNREACHABLE
    return answer.solution.stop_reason
