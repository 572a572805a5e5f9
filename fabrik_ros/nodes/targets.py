"""Turn incoming target messages into checked points in the arm's base frame."""

from dataclasses import dataclass
from enum import Enum
import math
from typing import Optional

from geometry_msgs.msg import PointStamped, Pose, PoseStamped
from nav_msgs.msg import Path

Vector = tuple[float, float, float]


class TargetCause(Enum):
    """Why a target message was refused; the node throttles its warnings per cause."""

    NOT_FINITE = 'not finite'
    WRONG_FRAME = 'wrong frame'
    EMPTY_PATH = 'empty path'


class TargetError(ValueError):
    """A target message the IK node cannot use (non-finite, or in another frame)."""

    def __init__(self, cause: TargetCause, message: str) -> None:
        super().__init__(message)
        self.cause = cause


@dataclass(frozen=True)
class Target:
    """A checked target: a point [m] in the base frame and, from a pose, an approach axis."""

    position_m: Vector
    approach: Optional[Vector] = None


def target_from_point(msg: PointStamped, base_frame: str) -> Target:
    """Return the target of a PointStamped.

    :raises TargetError: for a frame other than ``base_frame`` (empty means the base frame)
        or a non-finite coordinate
    """
    _check_frame('target_point', msg.header.frame_id, base_frame)
    return Target(_finite_point('target_point', msg.point))


def target_from_pose(msg: PoseStamped, base_frame: str) -> Target:
    """Return the target of a PoseStamped; its orientation's x axis is the approach axis.

    An all-zero quaternion (an orientation left unset) gives no approach axis.

    :raises TargetError: for a wrong frame, a non-finite value or a non-normalisable quaternion
    """
    _check_frame('target_pose', msg.header.frame_id, base_frame)
    return _target_of(msg.pose, 'target_pose')


def targets_from_path(msg: Path, base_frame: str) -> list[Target]:
    """Return the targets of every pose of a Path, in order.

    A pose with an empty frame_id inherits the path's frame.

    :raises TargetError: if the path is empty or any pose is unusable (naming its index)
    """
    _check_frame('target_path', msg.header.frame_id, base_frame)
    if not msg.poses:
        raise TargetError(TargetCause.EMPTY_PATH,
                          'target_path has no poses, needs at least one')
    targets = []
    for index, stamped in enumerate(msg.poses):
        where = f'target_path.poses[{index}]'
        _check_frame(where, stamped.header.frame_id or msg.header.frame_id, base_frame)
        targets.append(_target_of(stamped.pose, where))
    return targets


def _target_of(pose: Pose, where: str) -> Target:
    return Target(_finite_point(where, pose.position), _approach_axis(where, pose.orientation))


def _check_frame(where: str, frame_id: str, base_frame: str) -> None:
    if frame_id not in ('', base_frame):
        raise TargetError(TargetCause.WRONG_FRAME,
                          f"{where}: frame_id {frame_id!r} is not the arm's base frame "
                          f"'{base_frame}' (no tf2 here: send targets in '{base_frame}')")


def _finite_point(where: str, point) -> Vector:
    values = (float(point.x), float(point.y), float(point.z))
    if not all(math.isfinite(v) for v in values):
        raise TargetError(TargetCause.NOT_FINITE, f'{where}: position {values} is not finite')
    return values


def _approach_axis(where: str, q) -> Optional[Vector]:
    """Return the rotated x axis of quaternion ``q``, or None for an unset (zero) one."""
    w, x, y, z = float(q.w), float(q.x), float(q.y), float(q.z)
    if not all(math.isfinite(v) for v in (w, x, y, z)):
        raise TargetError(TargetCause.NOT_FINITE,
                          f'{where}: orientation {(x, y, z, w)} is not finite')
    norm_sq = w * w + x * x + y * y + z * z
    if norm_sq == 0.0:
        return None
    s = 2.0 / norm_sq
    return (1.0 - s * (y * y + z * z), s * (x * y + w * z), s * (x * z - w * y))
