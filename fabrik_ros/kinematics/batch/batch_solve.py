"""Batch arm IK: the single-target solver's steps on numpy arrays, a row per target.

Nothing here re-implements a step of the solver. The yaw planes, the closed-form answers
(closed_form.py), the start poses (planar_arm.py), the FABRIK passes and their stopping rule
(fabrik.py), the joint limits (constraints.py) and the forward kinematics (chain.py) are the
functions the single-target solver calls, given arrays instead of single values. This module
and its helpers keep only the per-row bookkeeping: which targets are still open, which attempt
is best (batch_attempts.py, the ranking of attempts.py), the planes (batch_planes.py), the
closed-form rows (batch_closed_form.py), and the work done.
"""

from collections.abc import Callable
import math

import numpy as np

from fabrik_ros.kinematics.batch.batch_arm import BatchArm
from fabrik_ros.kinematics.batch.batch_attempts import BatchAttempts, SCALAR_ROWS, Solved
from fabrik_ros.kinematics.batch.batch_closed_form import batch_closed_form
from fabrik_ros.kinematics.batch.batch_planes import (
    candidate_yaws,
    first_yaws,
    plane_bound,
    planes_of,
)
from fabrik_ros.kinematics.batch.batch_seed_step import batch_step_to
from fabrik_ros.kinematics.description.joint import Joint, JointKind
from fabrik_ros.kinematics.elementwise import rotation
from fabrik_ros.kinematics.errors import TargetError
from fabrik_ros.kinematics.options import Bend, SolverOptions
from fabrik_ros.kinematics.single.arm_ik import (
    ArmIk,
    bend_side,
    PlanarAnswer,
    Plane,
    planes_differ,
    seed_options,
)
from fabrik_ros.kinematics.single.chain import planar_points, planar_pose
from fabrik_ros.kinematics.single.fabrik import FabrikSolver
from fabrik_ros.kinematics.single.planar_arm import PlanarArm, side_of, up_side
from fabrik_ros.kinematics.single.reach_boundary import closest_on_table
from fabrik_ros.kinematics.single.results import BatchIkResult


def solve_batch(arm: BatchArm, targets: np.ndarray, seeds: np.ndarray | None = None
                ) -> BatchIkResult:
    """Return IK answers for (N, 3) targets [m]; see :meth:`Arm.ik_batch`."""
    targets = checked_targets(targets)
    seeds = None if seeds is None else checked_seeds(arm.joints, seeds, len(targets))
    preferred = None if seeds is None else seeds[:, 0]
    first = solve_plane(arm, targets, first_yaws(arm, targets, preferred), seeds, True)
    unreached = first.error > arm.options.tolerance_m
    rows = np.flatnonzero(unreached if planes_differ(arm.planar.chain, arm.lateral_m)
                          else unreached & np.isnan(first.tip))
    if rows.size:
        other_planes(arm, targets, seeds, rows, first)
    positions = tool_points(arm, first.angles, first.tip)
    error = distances(positions, targets)
    return BatchIkResult(first.angles, positions, error <= arm.options.tolerance_m, error,
                         first.iterations)


def other_planes(arm: BatchArm, targets: np.ndarray, seeds: np.ndarray | None, rows: np.ndarray,
                 answers: 'PlaneAnswers') -> None:
    """Solve ``rows`` in their further candidate planes, as best_answer does; update answers.

    A plane is skipped where its bound is no better than the row's answer, and a row leaves
    once it is reached.
    """
    yaws = candidate_yaws(arm, targets[rows], None if seeds is None else seeds[rows, 0])
    for column in range(1, yaws.shape[1]):
        error = answers.error[rows]
        bound = plane_bound(arm.planar.chain, targets[rows], yaws[:, column], arm.lateral_m)
        todo = np.flatnonzero((error > arm.options.tolerance_m) & (bound < error))
        if todo.size == 0:
            continue
        picked = rows[todo]
        solved = solve_plane(arm, targets[picked], yaws[todo, column],
                             None if seeds is None else seeds[picked], False)
        answers.iterations[picked] += solved.iterations
        better = solved.error < answers.error[picked]
        answers.angles[picked[better]] = solved.angles[better]
        answers.error[picked[better]] = solved.error[better]
        answers.tip[picked[better]] = np.nan


class PlaneAnswers:
    """Answers of one yaw plane: (M, n_joints) angles, 3D residuals [m] and iterations.

    ``tip`` holds the in-plane tool point of closed-form answers (their forward kinematics,
    known already) and NaN for the others.
    """

    def __init__(self, angles: np.ndarray, error: np.ndarray, iterations: np.ndarray,
                 tip: np.ndarray) -> None:
        """Keep the arrays."""
        self.angles, self.error, self.iterations, self.tip = angles, error, iterations, tip


def solve_plane(arm: BatchArm, targets: np.ndarray, yaw: np.ndarray, seeds: np.ndarray | None,
                first: bool) -> PlaneAnswers:
    """Solve targets in their yaw's plane: a first try, then FABRIK's attempts.

    The first try, in the first plane: the closed form (cold), or the seed's least-motion
    steps (seeded, bend any), as the single solver.
    """
    planar, options = arm.planar, arm.options
    goal, off_plane = planes_of(targets, yaw, arm.lateral_m)
    side = bend_side(options.bend, goal - planar.chain.base)
    pitch = np.zeros((len(targets), len(planar.chain.lengths)))
    in_plane = np.full(len(targets), np.inf)
    tip = np.full(len(targets), np.nan, dtype=complex)
    open_rows = np.arange(len(targets))
    iterations = np.zeros(len(targets), dtype=int)
    if first and seeds is None:
        found, pitch[:], tips = batch_closed_form(planar, goal, off_plane, side,
                                                  options.tolerance_m)
        tip[found], in_plane[found] = tips[found], np.abs(tips[found] - goal[found])
        open_rows = np.flatnonzero(~found)
    elif first and seeds is not None and options.bend is Bend.ANY:
        tolerance = options.tolerance_m
        room = np.sqrt(np.maximum(tolerance * tolerance - off_plane * off_plane, 0.0))
        found, moved, tips = batch_step_to(planar.chain, seed_chain_angles(arm, seeds), goal,
                                           room)
        found &= off_plane < tolerance
        pitch[found], tip[found] = moved[found], tips[found]
        in_plane[found] = np.abs(tips[found] - goal[found])
        open_rows = np.flatnonzero(~found)
    if open_rows.size:
        seed_points = None if seeds is None else seed_poses(arm, seeds[open_rows])
        pitch[open_rows], in_plane[open_rows], iterations[open_rows] = search(
            arm, goal[open_rows], side[open_rows], seed_points)
    angles = assemble(arm, yaw, pitch, seeds)
    return PlaneAnswers(angles, np.hypot(in_plane, off_plane), iterations, tip)


def search(arm: BatchArm, goal: np.ndarray, side: np.ndarray,
           seed_points: list[np.ndarray] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run the FABRIK attempts of ArmIk.solve_plane on rows; return pitches, errors, work.

    Up to ``SCALAR_ROWS`` rows run one by one in the single solver (cheaper than numpy for
    so few, and the same steps); more run on arrays (:func:`solve_planar`).
    """
    planar = arm.planar
    if len(goal) > SCALAR_ROWS:
        attempts = solve_planar(planar, goal, side, seed_points, arm.options)
        return (np.stack(planar.angles(attempts.directions), axis=1), attempts.error,
                attempts.iterations)
    pitch = np.zeros((len(goal), len(planar.chain.lengths)))
    error, iterations = np.zeros(len(goal)), np.zeros(len(goal), dtype=int)
    for row in range(len(goal)):
        answer = _single(arm, goal[row], side[row], seed_points, row)
        pitch[row] = planar.angles(answer.solution.directions)
        error[row], iterations[row] = answer.solution.error_m, answer.iterations
    return pitch, error, iterations


def _single(arm: BatchArm, goal: complex, side: int, seed_points: list[np.ndarray] | None,
            index: int) -> PlanarAnswer:
    """Run ArmIk.solve_plane on one row: for a few rows, cheaper than numpy, same steps."""
    seed = None if seed_points is None else [complex(p[index]) for p in seed_points]
    ik = ArmIk(arm.planar, FabrikSolver(arm.options), arm.lateral_m)
    return ik.solve_plane(Plane(0.0, complex(goal), 0.0), seed_points=seed, side=int(side),
                          tip_direction=None)


def solve_planar(planar: PlanarArm, goal: np.ndarray, side: np.ndarray,
                 seed_points: list[np.ndarray] | None, options: SolverOptions) -> BatchAttempts:
    """Run the single-target solver's FABRIK attempts, each on the rows still open.

    Starts, in order: the seed, the arc bent to the wanted side (the seed's, else up), the arc
    bent the other way, the grid pose of the target's cell, the grid pose whose tip is nearest,
    the nearest boundary pose. Rows out of
    reach take the nearest boundary pose once the seed has not reached them, as
    ArmIk.solve_plane does.
    """
    attempts = BatchAttempts(planar, goal, side, options)
    first = np.where(side != 0, side, up_side(goal - planar.chain.base))
    if seed_points is not None:
        seeded = side_of(seed_points)
        first = np.where(side != 0, side, np.where(seeded != 0, seeded, first))
        attempts.run(np.arange(len(goal)), seed_points, options=seed_options(options))
    boundary = bool(planar.boundary_arcs)
    if boundary:
        rows = attempts.open_rows()
        rows = rows[~planar.reach_region.contains(goal[rows])]
        offer_boundary_poses(attempts, planar, goal, rows)
        attempts.out_of_reach[rows] = True
    starts: tuple[Callable[[np.ndarray], list[np.ndarray]], ...] = (
        lambda rows: planar.arc_start(goal[rows], first[rows]),
        lambda rows: planar.arc_start(goal[rows], -first[rows]),
        lambda rows: planar.grid_start(goal[rows]),
        lambda rows: planar.nearest_grid_start(goal[rows]))
    for make in starts:
        rows = attempts.open_rows()
        if rows.size == 0:
            return attempts
        attempts.run(rows, make(rows))
    rows = attempts.open_rows()
    if boundary and rows.size:
        attempts.run(rows, offer_boundary_poses(attempts, planar, goal, rows))
    return attempts


def offer_boundary_poses(attempts: BatchAttempts, planar: PlanarArm, goal: np.ndarray,
                         rows: np.ndarray) -> list[np.ndarray]:
    """Offer ``rows`` the poses at their nearest boundary points; return those poses."""
    angles = closest_on_table(planar.boundary_table, goal[rows])
    pose = planar_pose(planar.chain, list(angles.T))
    points, directions = ([np.broadcast_to(p, len(rows)) for p in part] for part in pose)
    attempts.offer(rows, Solved(points, directions, np.abs(points[-1] - goal[rows]),
                                np.zeros(len(rows), dtype=int)))
    return points


def seed_poses(arm: BatchArm, seeds: np.ndarray) -> list[np.ndarray]:
    """Return the planar joint positions of (M, n_joints) seed angles, one array per joint."""
    pitch = list(seed_chain_angles(arm, seeds).T)
    return [np.broadcast_to(p, len(seeds)).astype(complex)
            for p in planar_points(arm.planar.chain, pitch)]


def seed_chain_angles(arm: BatchArm, seeds: np.ndarray) -> np.ndarray:
    """Return the (M, n_pitch) chain angles of seeds: the pitches, the tool's turn on the last."""
    pitch = seeds[:, [i for i, j in enumerate(arm.joints) if j.kind is JointKind.PITCH]]
    pitch[:, -1] = pitch[:, -1] + arm.tool_turn_rad
    return pitch


def assemble(arm: BatchArm, yaw: np.ndarray, pitch: np.ndarray,
             seeds: np.ndarray | None) -> np.ndarray:
    """Return (M, n_joints) angles: the yaw, pitch angles in range, rolls from seed or home.

    The yaws are turned into the range already (or a limit). A pitch angle is taken into its
    joint's range by whole turns (:meth:`Joint.positions` of its geometric view); where the
    range lies within [-pi, pi], the solver's angles (phases, in (-pi, pi]) need no turn and a
    clip does (as fast as before ranges could cross +-pi).
    """
    angles = np.tile(arm.home, (len(yaw), 1)) if seeds is None else seeds.copy()
    pitch_index = [i for i, j in enumerate(arm.joints) if j.kind is JointKind.PITCH]
    if arm.joints[0].kind is JointKind.YAW:
        angles[:, 0] = np.clip(yaw, arm.joints[0].min_rad, arm.joints[0].max_rad)
    for column, index in enumerate(pitch_index):
        joint, values = arm.joints[index], pitch[:, column]
        if index == pitch_index[-1] and arm.tool_turn_rad != 0.0:
            values = values - arm.tool_turn_rad
        elif -math.pi <= joint.min_rad and joint.max_rad <= math.pi:
            angles[:, index] = np.clip(values, joint.min_rad, joint.max_rad)
            continue
        angles[:, index] = joint.positions(values)
    return angles


def tool_points(arm: BatchArm, angles: np.ndarray, tip: np.ndarray) -> np.ndarray:
    """Return (N, 3) tool points of (N, n_joints) angles: Arm.fk's last row, per row.

    Where ``tip`` (the in-plane tool point of a closed-form answer) is known, it is used as
    the single solver uses it; elsewhere (NaN) the planar chain's forward kinematics runs.
    """
    unknown = np.flatnonzero(np.isnan(tip))
    if unknown.size:
        pitch = [angles[unknown, i] for i, j in enumerate(arm.joints)
                 if j.kind is JointKind.PITCH]
        pitch[-1] = pitch[-1] + arm.tool_turn_rad
        tip = tip.copy()
        tip[unknown] = planar_points(arm.planar.chain, pitch)[-1]
    has_yaw = arm.joints[0].kind is JointKind.YAW
    heading = rotation(angles[:, 0]) if has_yaw else np.ones(len(angles), dtype=complex)
    lateral = arm.lateral_m
    return np.stack([tip.real * heading.real - lateral * heading.imag,
                     tip.real * heading.imag + lateral * heading.real, tip.imag], axis=1)


def distances(points: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Return row-wise distances of (N, 3) arrays without overflow for huge coordinates."""
    offset = points - targets
    return np.asarray(np.hypot(np.hypot(offset[:, 0], offset[:, 1]), offset[:, 2]))


def checked_targets(targets: np.ndarray) -> np.ndarray:
    """Return the targets if they are finite and (N, 3), else raise TargetError."""
    if targets.ndim != 2 or targets.shape[1] != 3:
        raise TargetError(f'targets has shape {targets.shape}, need (N, 3)')
    if not np.all(np.isfinite(targets)):
        bad = int(np.argmin(np.all(np.isfinite(targets), axis=1)))
        raise TargetError(f'targets[{bad}] = {targets[bad].tolist()!r}, must be finite')
    return targets


def checked_seeds(joints: tuple[Joint, ...], seeds: np.ndarray, count: int) -> np.ndarray:
    """Return finite (N, n_joints) seeds clamped into the limits, else raise TargetError."""
    width = len(joints)
    if seeds.shape != (count, width):
        raise TargetError(f'seeds has shape {seeds.shape}, need ({count}, {width}): one row '
                          'per target, one angle per joint')
    if not np.all(np.isfinite(seeds)):
        bad = int(np.argmin(np.all(np.isfinite(seeds), axis=1)))
        raise TargetError(f'seeds[{bad}] = {seeds[bad].tolist()!r}, must be finite')
    low = np.array([j.min_rad for j in joints])
    high = np.array([j.max_rad for j in joints])
    return np.asarray(np.clip(seeds, low, high))
