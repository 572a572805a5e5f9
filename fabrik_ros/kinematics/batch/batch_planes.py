"""The yaw planes of arm_ik.candidate_planes for many targets at once, one row per target."""

import numpy as np

from fabrik_ros.kinematics.batch.batch_arm import BatchArm
from fabrik_ros.kinematics.description.joint import JointKind
from fabrik_ros.kinematics.elementwise import TURN, wrap
from fabrik_ros.kinematics.single.arm_ik import plane_coordinates, reach_bound
from fabrik_ros.kinematics.single.chain import Chain
from fabrik_ros.kinematics.single.yaw_branches import branch_headings, first_turn

_SAME_RAD = 1e-12


def candidate_yaws(arm: BatchArm, targets: np.ndarray,
                   preferred: np.ndarray | None) -> np.ndarray:
    """Return (N, k) yaws in candidate_planes' order, NaN after each row's last candidate.

    Per row: the in-range branches (facing the target, then reaching over the top, each
    turned into the range, twice where a range spans a whole turn), ordered by nearness to
    the ``preferred`` yaw when given (a stable sort, as the single solver's), then the two
    limits; repeats dropped.
    """
    if arm.joints[0].kind is not JointKind.YAW:
        return np.zeros((len(targets), 1))
    joint = arm.joints[0]
    ranged = _ranged(arm, targets)
    if preferred is not None:
        distance = np.abs(wrap(ranged - preferred[:, None]))
        order = np.argsort(np.where(np.isnan(ranged), np.inf, distance), axis=1, kind='stable')
        ranged = np.take_along_axis(ranged, order, axis=1)
    limits = np.tile([joint.min_rad, joint.max_rad], (len(targets), 1))
    return _compact(_unique(np.concatenate([ranged, limits], axis=1)))


def first_yaws(arm: BatchArm, targets: np.ndarray, preferred: np.ndarray | None) -> np.ndarray:
    """Return the first column of :func:`candidate_yaws`, without building the others.

    The in-range branch first in order (the nearest the preferred yaw, the first on a tie), or
    the lower yaw limit where no branch is in range.
    """
    joint = arm.joints[0]
    if joint.kind is not JointKind.YAW:
        return np.zeros(len(targets))
    ranged = _ranged(arm, targets)
    usable = ~np.isnan(ranged)
    if preferred is None:
        column = np.argmax(usable, axis=1)
    else:
        distance = np.abs(wrap(ranged - preferred[:, None]))
        column = np.argmin(np.where(usable, distance, np.inf), axis=1)
    first = ranged[np.arange(len(targets)), column]
    return np.where(usable.any(axis=1), first, joint.min_rad)


def _ranged(arm: BatchArm, targets: np.ndarray) -> np.ndarray:
    """Return (N, 4) yaws of both branches turned into the range (twice), NaN where beyond it."""
    joint = arm.joints[0]
    columns = []
    for heading in branch_headings(targets[:, 0], targets[:, 1], arm.lateral_m):
        first = first_turn(heading, joint.min_rad)
        columns += [first, first + TURN]
    ranged = np.stack(columns, axis=1)
    ranged[ranged > joint.max_rad] = np.nan
    return ranged


def _unique(yaws: np.ndarray) -> np.ndarray:
    """Return yaws with every value equal to an earlier one in its row set to NaN."""
    kept = np.array(yaws, dtype=float)     # a copy: the caller's array stays as it is
    for column in range(1, yaws.shape[1]):
        earlier = np.abs(kept[:, :column] - yaws[:, column:column + 1]) <= _SAME_RAD
        kept[np.any(earlier, axis=1), column] = np.nan
    return kept


def _compact(yaws: np.ndarray) -> np.ndarray:
    """Return yaws with each row's NaNs moved to its end, order otherwise kept."""
    order = np.argsort(np.isnan(yaws), axis=1, kind='stable')
    return np.take_along_axis(yaws, order, axis=1)


def planes_of(targets: np.ndarray, yaw: np.ndarray,
              lateral_m: float) -> tuple[np.ndarray, np.ndarray]:
    """Return the targets' in-plane coordinates (complex) and distances off their planes [m]."""
    goal, off_plane = plane_coordinates(yaw, targets[:, 0], targets[:, 1], targets[:, 2],
                                        lateral_m)
    return np.asarray(goal), np.asarray(off_plane)


def plane_bound(chain: Chain[complex], targets: np.ndarray, yaw: np.ndarray,
                lateral_m: float) -> np.ndarray:
    """Return arm_ik.plane_bound per target in its yaw's plane (inf where the yaw is NaN)."""
    usable = ~np.isnan(yaw)
    goal, off_plane = planes_of(targets, np.where(usable, yaw, 0.0), lateral_m)
    return np.where(usable, reach_bound(goal, off_plane, chain), np.inf)
