"""Batch arm IK: the same constrained FABRIK passes on numpy arrays of planar targets.

Every target gets its yaw branch and the start poses of the single-target solver (the arcs,
a nearby grid pose, the tool sweep), each run through the forward/backward passes of fabrik.py
with one numpy operation per joint for all targets at once. Targets left unreached are solved
again in the other candidate planes (the other yaw branch, the yaw limits) that could bring
them closer. Seeds and bend preferences are single-target features.
"""

import math
from typing import TYPE_CHECKING

import numpy as np

from fabrik_ros.kinematics.arm_ik import SWEEP_DIRECTIONS, SWEEP_HALVINGS, SWEEP_ITERATIONS
from fabrik_ros.kinematics.chain import Chain
from fabrik_ros.kinematics.errors import TargetError
from fabrik_ros.kinematics.constraints import Arc, Hinge2D
from fabrik_ros.kinematics.joint import Joint, JointKind
from fabrik_ros.kinematics.options import SolverOptions
from fabrik_ros.kinematics.results import BatchIkResult

if TYPE_CHECKING:
    from fabrik_ros.kinematics.arm import Arm


def solve_batch(arm: 'Arm', targets: np.ndarray) -> BatchIkResult:
    """Return IK answers for (N, 3) targets [m]; see :meth:`Arm.ik_batch`."""
    if targets.ndim != 2 or targets.shape[1] != 3:
        raise TargetError(f'targets has shape {targets.shape}, need (N, 3)')
    if not np.all(np.isfinite(targets)):
        bad = int(np.argmin(np.all(np.isfinite(targets), axis=1)))
        raise TargetError(f'targets[{bad}] = {targets[bad].tolist()!r}, must be finite')
    angles, iterations = solve_in_planes(arm, targets, branch_yaw(arm, targets))
    positions = batch_fk(arm, angles)
    error = distances(positions, targets)
    if arm.joints[0].kind is JointKind.YAW:
        for other in other_yaws(arm.joints[0], targets, angles[:, 0]):
            bound = _plane_bound(arm.planar.chain, targets, other)
            left = np.flatnonzero((error > arm.options.tolerance_m) & (bound < error))
            if left.size == 0:
                continue
            more, more_iterations = solve_in_planes(arm, targets[left], other[left])
            reached = batch_fk(arm, more)
            more_error = distances(reached, targets[left])
            iterations[left] += more_iterations
            better = left[more_error < error[left]]
            keep = more_error < error[left]
            angles[better], positions[better], error[better] = (
                more[keep], reached[keep], more_error[keep])
    return BatchIkResult(angles, positions, error <= arm.options.tolerance_m, error, iterations)


def solve_in_planes(arm: 'Arm', targets: np.ndarray,
                    yaw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (N, n_joints) angles and iterations solving each target in its yaw's plane."""
    planar = (targets[:, 0] * np.cos(yaw) + targets[:, 1] * np.sin(yaw)
              + 1j * targets[:, 2])
    directions, iterations = solve_planar(arm, planar)
    return assemble(arm, yaw, directions), iterations


def other_yaws(joint: Joint, targets: np.ndarray, chosen: np.ndarray) -> list[np.ndarray]:
    """Return the other candidate yaws of arm_ik.candidate_planes, NaN where none applies.

    In-range front and over-the-top branches, then the two limits; a candidate equal to
    the ``chosen`` yaw or out of range is NaN.
    """
    front = np.arctan2(targets[:, 1], targets[:, 0])
    back = np.where(front > 0.0, front - math.pi, front + math.pi)
    candidates = []
    for turn in (front, back, np.full(len(targets), joint.min_rad),
                 np.full(len(targets), joint.max_rad)):
        usable = ((turn >= joint.min_rad) & (turn <= joint.max_rad)
                  & (np.abs(turn - chosen) > 1e-12))
        candidates.append(np.where(usable, turn, np.nan))
    return candidates


def branch_yaw(arm: 'Arm', targets: np.ndarray) -> np.ndarray:
    """Return each target's yaw: in front if in range, else over the top, else a limit."""
    if arm.joints[0].kind is not JointKind.YAW:
        return np.zeros(len(targets))
    joint = arm.joints[0]
    front = np.arctan2(targets[:, 1], targets[:, 0])
    back = np.where(front > 0.0, front - math.pi, front + math.pi)
    limited = np.clip(front, joint.min_rad, joint.max_rad)
    fits_front = (front >= joint.min_rad) & (front <= joint.max_rad)
    fits_back = (back >= joint.min_rad) & (back <= joint.max_rad)
    return np.where(fits_front, front, np.where(fits_back, back, limited))


def solve_planar(arm: 'Arm', targets: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """Solve planar targets from the up arc, a nearby grid pose, the down arc, a tool sweep.

    Each later start runs only on the targets the earlier ones left unreached; the sweep
    (only for targets within full reach) solves with the tool fixed along each of
    ``SWEEP_DIRECTIONS`` directions and refines the best freely, as the single-target solver
    does.
    """
    chain, options, table = arm.planar.chain, arm.options, arm.planar.arc_table
    directions, error, iterations = iterate(chain, arc_starts(chain, targets, 1.0, table),
                                            targets, options)
    def sweep(near: np.ndarray) -> list[np.ndarray]:
        return swept_starts(chain, near, options, table)

    for make_start in (lambda t: grid_starts(arm, t),
                       lambda t: arc_starts(chain, t, -1.0, table),
                       sweep):
        left = np.flatnonzero(error > options.tolerance_m)
        if make_start is sweep:
            left = left[np.abs(targets[left] - chain.base) <= chain.total_length]
        if left.size == 0:
            break
        more, more_error, more_iterations = iterate(chain, make_start(targets[left]),
                                                    targets[left], options)
        iterations[left] += more_iterations
        better = more_error < error[left]
        error[left[better]] = more_error[better]
        for saved, new in zip(directions, more, strict=True):
            saved[left[better]] = new[better]
    return directions, iterations


def swept_starts(chain: Chain[complex], targets: np.ndarray, options: SolverOptions,
                 arc_table: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
    """Return, per target, the best pose over solves with the tool fixed along a sweep.

    As in the single-target solver, the best sweep direction is narrowed down by halving the
    step either side of it.
    """
    count = len(targets)
    cap = min(SWEEP_ITERATIONS, options.max_iterations)
    turns = np.exp(2j * np.pi * np.arange(SWEEP_DIRECTIONS) / SWEEP_DIRECTIONS)
    repeated = np.repeat(targets, SWEEP_DIRECTIONS)
    tips = np.tile(turns, count)
    points = _fixed_tip(chain, arc_starts(chain, repeated, 1.0, arc_table), repeated, tips, cap)
    error = np.abs(points[-1] - repeated).reshape(count, SWEEP_DIRECTIONS)
    chosen = np.arange(count) * SWEEP_DIRECTIONS + np.argmin(error, axis=1)
    best = [p[chosen] for p in points]
    best_tips, best_error = tips[chosen], error.min(axis=1)
    step = 2.0 * math.pi / SWEEP_DIRECTIONS
    for _ in range(SWEEP_HALVINGS):
        step *= 0.5
        for turn in (step, -step):
            turned = best_tips * np.exp(1j * turn)
            moved = _fixed_tip(chain, best, targets, turned, cap)
            moved_error = np.abs(moved[-1] - targets)
            better = moved_error < best_error
            best_tips = np.where(better, turned, best_tips)
            best_error = np.where(better, moved_error, best_error)
            best = [np.where(better, new, old) for new, old in zip(moved, best, strict=True)]
    return best


def _fixed_tip(chain: Chain[complex], points: list[np.ndarray], targets: np.ndarray,
               tips: np.ndarray, iterations: int) -> list[np.ndarray]:
    """Return poses after ``iterations`` pass pairs with the last bone along ``tips``."""
    points, _ = backward(chain, points, tips)
    for _ in range(iterations):
        points = forward(chain, points, targets, tips)
        points, _ = backward(chain, points, tips)
    return points


def grid_starts(arm: 'Arm', targets: np.ndarray) -> list[np.ndarray]:
    """Return, for every target, a grid pose whose tip is near it (looked up by cell)."""
    planar = arm.planar
    nearest = planar.cells[planar.cell_of(targets)]
    return list(planar.table_points[:, nearest])


def arc_starts(chain: Chain[complex], targets: np.ndarray, side: float,
               arc_table: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
    """Return the evenly bent arc start of PlanarArm.arc_start for every target.

    :param side: +1.0 bends the elbow up (above the chord), -1.0 down
    """
    chords, turns = arc_table
    aim = targets - chain.base
    up = np.where(aim.real >= 0.0, 1.0, -1.0)
    turn = -side * up * np.interp(np.abs(aim), chords, turns)
    heading = _unit(aim, 1 + 0j) * np.conj(_unit(_chords(chain.lengths, turn), 1 + 0j))
    points = [np.full(len(targets), chain.base)]
    step = np.exp(1j * turn)
    for length in chain.lengths:
        points.append(points[-1] + heading * length)
        heading = heading * step
    return points


def iterate(chain: Chain[complex], points: list[np.ndarray], targets: np.ndarray,
            options: SolverOptions) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Run pass pairs on the unreached targets only.

    :return: best bone directions, best residuals [m] and iterations, per target
    """
    points, directions = backward(chain, points)
    best_error = np.abs(points[-1] - targets)
    best = [d.copy() for d in directions]
    iterations = np.zeros(len(targets), dtype=int)
    active = np.flatnonzero(best_error > options.tolerance_m)
    for _ in range(options.max_iterations):
        if active.size == 0:
            break
        iterations[active] += 1
        moved = forward(chain, [p[active] for p in points], targets[active])
        moved, turned = backward(chain, moved)
        error = np.abs(moved[-1] - targets[active])
        better = error < best_error[active]
        keep = active[better]
        best_error[keep] = error[better]
        for saved, new in zip(best, turned, strict=True):
            saved[keep] = new[better]
        for saved, new in zip(points, moved, strict=True):
            saved[active] = new
        active = active[error > options.tolerance_m]
    return best, best_error, iterations


def forward(chain: Chain[complex], points: list[np.ndarray], targets: np.ndarray,
            tips: np.ndarray | None = None) -> list[np.ndarray]:
    """Vectorised forward pass (tip pinned on the target), as fabrik.forward_pass.

    :param tips: unit directions to lay the last bone along, or None
    """
    count = len(chain.lengths)
    placed = list(points)
    placed[count] = targets
    outer = None
    for i in range(count - 1, -1, -1):
        if outer is None and tips is not None:
            direction = tips
        else:
            direction = _unit(placed[i + 1] - points[i], points[i + 1] - points[i])
        if outer is not None:
            direction = _limit(direction, outer, _hinge(chain, i + 1).reverse_arc)
        placed[i] = placed[i + 1] - direction * chain.lengths[i]
        outer = direction
    return placed


def backward(chain: Chain[complex], points: list[np.ndarray],
             tips: np.ndarray | None = None) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Vectorised backward pass (root pinned on the base), as fabrik.backward_pass."""
    placed = [np.full(len(points[0]), chain.base)]
    directions = []
    previous = np.full(len(points[0]), chain.base_direction)
    last = len(chain.lengths) - 1
    for i, length in enumerate(chain.lengths):
        if i == last and tips is not None:
            wanted = tips
        else:
            wanted = _unit(points[i + 1] - placed[i], previous)
        direction = _limit(wanted, previous, _hinge(chain, i).arc)
        placed.append(placed[i] + direction * length)
        directions.append(direction)
        previous = direction
    return placed, directions


def assemble(arm: 'Arm', yaw: np.ndarray, directions: list[np.ndarray]) -> np.ndarray:
    """Return (N, n_joints) angles: yaw, pitch angles from directions, rolls at home."""
    angles = np.tile(arm.home, (len(yaw), 1))
    previous = np.full(len(yaw), arm.planar.chain.base_direction)
    pitch = iter(directions)
    for index, joint in enumerate(arm.joints):
        if joint.kind is JointKind.YAW:
            angles[:, index] = yaw
        elif joint.kind is JointKind.PITCH:
            direction = next(pitch)
            angles[:, index] = np.clip(np.angle(direction * np.conj(previous)),
                                       joint.min_rad, joint.max_rad)
            previous = direction
    return angles


def batch_fk(arm: 'Arm', angles: np.ndarray) -> np.ndarray:
    """Return (N, 3) tool points for (N, n_joints) angles."""
    chain = arm.planar.chain
    tip = np.full(len(angles), chain.base)
    absolute = np.zeros(len(angles))
    yaw = np.zeros(len(angles))
    pitch = 0
    for index, joint in enumerate(arm.joints):
        if joint.kind is JointKind.YAW:
            yaw = angles[:, index]
        elif joint.kind is JointKind.PITCH:
            absolute = absolute + angles[:, index]
            tip = tip + chain.lengths[pitch] * np.exp(1j * absolute)
            pitch += 1
    return np.stack([tip.real * np.cos(yaw), tip.real * np.sin(yaw), tip.imag], axis=1)


def _plane_bound(chain: Chain[complex], targets: np.ndarray, yaw: np.ndarray) -> np.ndarray:
    """Return arm_ik.plane_bound for each target in its yaw's plane (inf where yaw is NaN)."""
    across = -targets[:, 0] * np.sin(yaw) + targets[:, 1] * np.cos(yaw)
    along = targets[:, 0] * np.cos(yaw) + targets[:, 1] * np.sin(yaw)
    beyond = np.maximum(0.0, np.abs(along + 1j * targets[:, 2] - chain.base)
                        - chain.total_length)
    return np.where(np.isnan(yaw), np.inf, np.hypot(across, beyond))


def distances(points: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Return row-wise distances of (N, 3) arrays without overflow for huge coordinates."""
    offset = points - targets
    return np.hypot(np.hypot(offset[:, 0], offset[:, 1]), offset[:, 2])


def _hinge(chain: Chain[complex], index: int) -> Hinge2D:
    constraint = chain.constraints[index]
    assert isinstance(constraint, Hinge2D)
    return constraint


def _limit(direction: np.ndarray, reference: np.ndarray, arc: Arc) -> np.ndarray:
    """Vectorised Arc.nearest_end: turn directions outside the arc onto its nearer end."""
    rotation = direction * np.conj(reference)
    centred = rotation * arc.to_centre
    end = np.where(centred.imag >= 0.0, arc.at_max, arc.at_min)
    return np.where(centred.real >= arc.cos_half, direction, reference * end)


def _unit(vectors: np.ndarray, fallback) -> np.ndarray:
    """Return unit vectors, ``fallback`` where a vector has no length."""
    length = np.abs(vectors)
    safe = np.where(length > 1e-12, length, 1.0)
    return np.where(length > 1e-12, vectors / safe, fallback)


def _chords(lengths, turn: np.ndarray) -> np.ndarray:
    """Return base-to-tip vectors of chains laid along +u turning ``turn`` per joint."""
    step = np.exp(1j * turn)
    direction = np.ones_like(step)
    tip = np.zeros_like(step)
    for length in lengths:
        tip = tip + direction * length
        direction = direction * step
    return tip
