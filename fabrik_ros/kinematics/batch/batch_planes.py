"""The yaw planes of arm_ik.candidate_planes for many targets at once, one row per target."""

import math

import numpy as np

from fabrik_ros.kinematics.batch.batch_arm import BatchArm
from fabrik_ros.kinematics.description.joint import Joint, JointKind
from fabrik_ros.kinematics.elementwise import wrap
from fabrik_ros.kinematics.single.arm_ik import plane_coordinates, reach_bound
from fabrik_ros.kinematics.single.chain import Chain

_SAME_RAD = 1e-12


def candidate_yaws(arm: BatchArm, targets: np.ndarray,
                   preferred: np.ndarray | None) -> np.ndarray:
    """Return (N, k) yaws in candidate_planes' order, NaN after each row's last candidate.

    Per row: the in-range branches (facing the target, then reaching over the top, each also
    2 pi either side), ordered by nearness to the ``preferred`` yaw when given (a stable
    sort, as the single solver's), then the two limits; repeats dropped.
    """
    if arm.joints[0].kind is not JointKind.YAW:
        return np.zeros((len(targets), 1))
    joint = arm.joints[0]
    azimuth = np.arctan2(targets[:, 1], targets[:, 0])
    turns = (0.0, -2.0 * math.pi, 2.0 * math.pi) if _wide(joint) else (0.0,)
    ranged = np.stack([heading + turn for heading in (azimuth, wrap(azimuth + math.pi))
                       for turn in turns], axis=1)
    ranged[(ranged < joint.min_rad) | (ranged > joint.max_rad)] = np.nan
    if preferred is not None:
        distance = np.abs(wrap(ranged - preferred[:, None]))
        order = np.argsort(np.where(np.isnan(ranged), np.inf, distance), axis=1, kind='stable')
        ranged = np.take_along_axis(ranged, order, axis=1)
    limits = np.tile([joint.min_rad, joint.max_rad], (len(targets), 1))
    return _compact(_unique(np.concatenate([ranged, limits], axis=1)))


def first_yaws(arm: BatchArm, targets: np.ndarray, preferred: np.ndarray | None) -> np.ndarray:
    """Return the first column of :func:`candidate_yaws`, without building the others."""
    joint = arm.joints[0]
    if joint.kind is not JointKind.YAW or _wide(joint):
        return candidate_yaws(arm, targets, preferred)[:, 0]
    front = np.arctan2(targets[:, 1], targets[:, 0])
    back = wrap(front + math.pi)
    front_in = (front >= joint.min_rad) & (front <= joint.max_rad)
    back_in = (back >= joint.min_rad) & (back <= joint.max_rad)
    take_back = back_in & ~front_in
    if preferred is not None:
        nearer = np.abs(wrap(back - preferred)) < np.abs(wrap(front - preferred))
        take_back = back_in & (~front_in | nearer)
    return np.where(take_back, back, np.where(front_in, front, joint.min_rad))


def _wide(joint: Joint) -> bool:
    """Return True when a heading 2 pi away from one in [-pi, pi) can lie in the range."""
    return joint.min_rad < -math.pi or joint.max_rad >= math.pi


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


def planes_of(targets: np.ndarray, yaw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the targets' in-plane coordinates (complex) and distances off their planes [m]."""
    goal, off_plane = plane_coordinates(yaw, targets[:, 0], targets[:, 1], targets[:, 2])
    return np.asarray(goal), np.asarray(off_plane)


def plane_bound(chain: Chain[complex], targets: np.ndarray, yaw: np.ndarray) -> np.ndarray:
    """Return arm_ik.plane_bound per target in its yaw's plane (inf where the yaw is NaN)."""
    usable = ~np.isnan(yaw)
    goal, off_plane = planes_of(targets, np.where(usable, yaw, 0.0))
    return np.where(usable, reach_bound(goal, off_plane, chain), np.inf)
