"""Turn incoming target messages into checked points in the arm's base frame."""

from dataclasses import dataclass
from enum import Enum
import math
from typing import Optional, TYPE_CHECKING

from geometry_msgs.msg import PointStamped, Pose, PoseStamped
from nav_msgs.msg import Path
import numpy as np
from rclpy.serialization import deserialize_message

from fabrik_ros.kinematics import TargetError

if TYPE_CHECKING:       # frames.py raises this module's errors, so it imports it
    from fabrik_ros.nodes.frames import BaseFrames, RigidTransform

Vector = tuple[float, float, float]


class TargetCause(Enum):
    """Why a target message was refused; the node throttles its warnings per cause."""

    NOT_FINITE = 'not finite'
    WRONG_FRAME = 'wrong frame'
    UNKNOWN_FRAME = 'unknown frame'          # tf does not know it, or cannot reach it
    NOT_AT_STAMP = 'no transform at stamp'   # tf knows it, not at the message's stamp
    EMPTY_PATH = 'empty path'
    TOO_MANY_POSES = 'too many poses'
    NO_ROTATION = 'no rotation'
    MALFORMED = 'malformed'
    UNSOLVABLE = 'unsolvable'


class TargetMessageError(TargetError):
    """A target message the IK node cannot use, with the cause its warning is throttled by.

    A kind of the core's :class:`~fabrik_ros.kinematics.TargetError`, so one ``except`` covers
    a bad message and a target the solver itself refuses.
    """

    def __init__(self, cause: TargetCause, message: str) -> None:
        super().__init__(message)
        self.cause = cause


def cause_of(error: TargetError) -> TargetCause:
    """Return why ``error`` refused a target: its own cause, else that the solver refused it."""
    return getattr(error, 'cause', TargetCause.UNSOLVABLE)


@dataclass(frozen=True)
class Target:
    """A checked target: a point [m] in the base frame and, from a pose, an approach axis."""

    position_m: Vector
    approach: Optional[Vector] = None


def target_from_point(msg: PointStamped, frames: 'BaseFrames', *,
                      topic: str = 'target_point') -> Target:
    """Return the target of a PointStamped received on ``topic`` (named in errors).

    :raises TargetMessageError: for a frame ``frames`` cannot transform into the base frame
        (an empty frame_id means the base frame) or a non-finite coordinate
    """
    to_base = frames.to_base(topic, msg.header.frame_id, msg.header.stamp)
    return Target(_in_base(topic, to_base, _finite_point(topic, msg.point), frames))


def deserialized(serialized: bytes, msg_type, *, topic: str):
    """Return serialized message ``serialized`` of ``msg_type`` received on ``topic``.

    :raises TargetMessageError: if the bytes are no such message (hostile input)
    """
    try:
        return deserialize_message(serialized, msg_type)
    except RuntimeError as error:
        raise TargetMessageError(TargetCause.MALFORMED,
                                 f'{topic}: {len(serialized)} bytes that are no '
                                 f'{_type_name(msg_type)} ({error})') from None


def _type_name(msg_type) -> str:
    """Return ``geometry_msgs/PointStamped`` for the PointStamped class."""
    return f'{msg_type.__module__.split(".")[0]}/{msg_type.__name__}'


def target_from_pose(msg: PoseStamped, frames: 'BaseFrames', *, topic: str = 'target_pose',
                     use_orientation: bool = False) -> Target:
    """Return the target of a PoseStamped; its orientation's x axis is the approach axis.

    The orientation is read only when ``use_orientation``: then it must be a rotation (any
    non-zero length; it is normalised), and the approach axis is set. A pose in another frame
    is transformed: its position, and its approach axis rotated into the base frame.

    :raises TargetMessageError: for a frame with no transform, a non-finite position, or,
        when the orientation is used, a non-finite or all-zero quaternion
    """
    to_base = frames.to_base(topic, msg.header.frame_id, msg.header.stamp)
    return _target_of(msg.pose, topic, use_orientation, to_base, frames)


def targets_from_path(msg: Path, frames: 'BaseFrames', *, topic: str = 'target_path',
                      wait_s: float = 0.0) -> list[Target]:
    """Return the targets of every pose of a Path, in order (orientations are not used).

    A pose with an empty frame_id takes the path's header (frame and stamp); a pose with a
    frame of its own is transformed at its own stamp. Each frame and stamp is looked up once.

    :param wait_s: how long a lookup may wait for its transform (off the executor's thread)
    :raises TargetMessageError: if the path is empty or any pose is unusable (naming its index)
    """
    path_to_base = frames.to_base(topic, msg.header.frame_id, msg.header.stamp, wait_s=wait_s)
    if not msg.poses:
        raise TargetMessageError(TargetCause.EMPTY_PATH,
                                 f'{topic} has no poses, needs at least one: '
                                 f'the arm keeps its current target')
    looked_up: dict[tuple[str, int, int], RigidTransform] = {}
    targets = []
    for index, stamped in enumerate(msg.poses):
        where = f'{topic}.poses[{index}]'
        header = stamped.header
        to_base = path_to_base
        if header.frame_id:
            key = (header.frame_id, header.stamp.sec, header.stamp.nanosec)
            if key not in looked_up:
                looked_up[key] = frames.to_base(where, header.frame_id, header.stamp,
                                                wait_s=wait_s)
            to_base = looked_up[key]
        targets.append(_target_of(stamped.pose, where, False, to_base, frames))
    return targets


def _target_of(pose: Pose, where: str, use_orientation: bool, to_base: 'RigidTransform',
               frames: 'BaseFrames') -> Target:
    approach = _approach_axis(where, pose.orientation) if use_orientation else None
    if approach is not None and not to_base.is_identity:
        approach = to_base.rotate(approach)
    return Target(_in_base(where, to_base, _finite_point(where, pose.position), frames),
                  approach)


def _in_base(where: str, to_base: 'RigidTransform', point: Vector,
             frames: 'BaseFrames') -> Vector:
    """Return ``point`` transformed into the base frame, refused if it leaves the floats."""
    if to_base.is_identity:
        return point
    moved = to_base.apply(point)
    if not all(math.isfinite(v) for v in moved):
        raise TargetMessageError(TargetCause.NOT_FINITE,
                                 f"{where}: position {point} is {moved} in the arm's base "
                                 f"frame '{frames.base_frame}', not finite")
    return moved


def _finite_point(where: str, point) -> Vector:
    return _finite(where, (point.x, point.y, point.z))


def _finite(where: str, xyz: tuple[float, float, float]) -> Vector:
    x, y, z = xyz
    values = (float(x), float(y), float(z))
    if not all(math.isfinite(v) for v in values):
        raise TargetMessageError(TargetCause.NOT_FINITE,
                                 f'{where}: position {values} is not finite')
    return values


def rotation_matrix(xyzw: tuple[float, float, float, float]) -> np.ndarray:
    """Return the 3x3 rotation of quaternion ``xyzw`` (normalised first; tf's order).

    :raises ValueError: if it is not finite or has no length
    """
    q = np.asarray(xyzw, dtype=float)
    if not np.all(np.isfinite(q)):
        raise ValueError(f'quaternion {tuple(xyzw)} is not finite')
    q = q / np.max(np.abs(q)) if np.any(q) else q     # scaled first: no under- or overflow
    length = float(np.linalg.norm(q))
    if length == 0.0:
        raise ValueError('quaternion (0, 0, 0, 0) is not a rotation')
    x, y, z, w = q / length
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _approach_axis(where: str, q) -> Vector:
    """Return the x axis of quaternion ``q`` rotated, after normalising ``q``.

    ``q`` is first divided by its largest component, so that lengths far from 1 (subnormal
    or near the float maximum, where squaring under- or overflows) normalise exactly as well
    as ordinary ones.

    >>> class Q: x, y, z, w = 1e-160, 0.0, 0.0, 0.0
    >>> [round(v, 12) + 0.0 for v in _approach_axis('doc', Q)]
    [1.0, 0.0, 0.0]
    """
    components = (float(q.w), float(q.x), float(q.y), float(q.z))
    if not all(math.isfinite(v) for v in components):
        raise TargetMessageError(TargetCause.NOT_FINITE, f'{where}: orientation '
                                 f'{_xyzw(components)} is not finite')
    largest = max(abs(v) for v in components)
    if largest == 0.0:
        raise TargetMessageError(TargetCause.NO_ROTATION, f'{where}: orientation (0, 0, 0, 0) '
                                 f'is not a rotation; use_pose_orientation takes the approach '
                                 f'from it (the identity is w = 1)')
    x, y, z = (float(v) for v in rotation_matrix(_xyzw(components))[:, 0])
    return (x, y, z)


def _xyzw(components: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    w, x, y, z = components
    return (x, y, z, w)
