"""Take target_path messages off the executor's thread: a size limit first, then a worker.

A long nav_msgs/Path would keep fabrik_ik's executor thread busy turning it into Python
objects, checking every pose and sampling the curve, and every other target would wait. So the
subscription takes the serialized bytes. The pose count is read from the message header (at
once, whatever the size) and a path of more than :data:`MAX_PATH_POSES` is refused. A path
within the limit is deserialized, checked and sampled on one worker thread, and handed back to
the executor's thread when it is ready; meanwhile other targets are answered as usual. A target
that comes in while a path is being prepared supersedes it, as a new target ends a path being
followed.

Before the arm moves, every pose is solved in one batch (:meth:`Arm.ik_batch`; the poses it
misses once more one by one, where another roll may reach them): a path with a pose out of the
arm's reach is refused, naming those poses and how far each stays from the closest pose, and
the arm keeps its current target. Following it would leave the tool short of part of the path
the user drew, silently but for a warning per solve; better to say so once, before it starts.
Only the poses' positions are read: a path steers the tool point, whatever
``use_pose_orientation`` says (it applies to target_pose), and the line fabrik_ik logs when it
starts following a path says so.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
import threading
from typing import Literal, Optional, Union

from nav_msgs.msg import Path
import numpy as np

from fabrik_ros.kinematics import Arm
from fabrik_ros.nodes.frames import BaseFrames, TF_WAIT_S
from fabrik_ros.nodes.path_follower import PathFollower, Point
from fabrik_ros.nodes.targets import (
    deserialized,
    TargetCause,
    TargetMessageError,
    targets_from_path,
)

# The most poses a target_path may have. A pose every millimetre makes a 10 m path, far more
# than an arm's reach traces.
MAX_PATH_POSES = 10_000
# A refusal names this many of the poses out of reach, then says how many more there are.
NAMED_POSES = 5
# CDR encapsulation identifiers (plain CDR, as every ROS 2 middleware writes) -> byte order.
_BYTE_ORDER: dict[bytes, Literal['big', 'little']] = {b'\x00\x00': 'big', b'\x00\x01': 'little'}
_ENCAPSULATION_BYTES = 4
_STRING_AT = 8        # header.stamp: int32 sec, uint32 nanosec


def pose_count(serialized: bytes) -> Optional[int]:
    """Return the number of poses of a serialized nav_msgs/Path, read from its header.

    The count follows the path's header (stamp, frame_id) in the CDR stream; reading it
    does not depend on the size of the message. None for an encoding this does not know, or
    a header cut short: the worker then counts the poses after deserializing.

    >>> from rclpy.serialization import serialize_message
    >>> from geometry_msgs.msg import PoseStamped
    >>> pose_count(serialize_message(Path(poses=[PoseStamped()] * 3)))
    3
    >>> pose_count(bytes([0, 9, 0, 0]) + bytes(12)) is None      # not plain CDR
    True
    """
    order = _BYTE_ORDER.get(bytes(serialized[:2]))
    body = memoryview(serialized)[_ENCAPSULATION_BYTES:]
    if order is None or len(body) < _STRING_AT + 4:
        return None
    length = int.from_bytes(body[_STRING_AT:_STRING_AT + 4], order)     # with its NUL
    count_at = _STRING_AT + 4 + length
    count_at += -count_at % 4
    if count_at + 4 > len(body):
        return None
    return int.from_bytes(body[count_at:count_at + 4], order)


def check_pose_count(count: int, topic: str) -> None:
    """Refuse a path of more than :data:`MAX_PATH_POSES` poses.

    :raises TargetMessageError: naming the topic, the count and the limit
    """
    if count > MAX_PATH_POSES:
        raise TargetMessageError(TargetCause.TOO_MANY_POSES,
                                 f'{topic} has {count} poses, more than the {MAX_PATH_POSES} '
                                 f'a path may have: the arm keeps its current target')


@dataclass(frozen=True)
class PathRequest:
    """A target_path as it came in, and what preparing it needs from the node."""

    serialized: bytes
    topic: str
    frames: BaseFrames   # the poses' frames -> the arm's base frame (thread-safe lookups)
    start_m: Point       # where the tool is: the curve starts there
    speed_m_s: float
    arm: Arm             # every pose is checked for reach with it


@dataclass(frozen=True)
class PreparedPath:
    """A checked path, ready to be followed."""

    follower: PathFollower
    poses: int
    topic: str
    start_m: Point


def prepare_path(request: PathRequest) -> PreparedPath:
    """Deserialize, check and sample a path (on the worker thread; touches no node).

    A pose in another frame is looked up in tf here, waiting up to :data:`TF_WAIT_S` for its
    transform (the executor's thread keeps feeding tf meanwhile).

    :raises TargetError: for bytes that are no Path, too many poses, no poses, a frame with
        no transform, a non-finite pose or a pose out of the arm's reach
    """
    msg = deserialized(request.serialized, Path, topic=request.topic)
    check_pose_count(len(msg.poses), request.topic)
    targets = targets_from_path(msg, request.frames, topic=request.topic, wait_s=TF_WAIT_S)
    try:
        follower = PathFollower.through([request.start_m, *(t.position_m for t in targets)],
                                        speed_m_s=request.speed_m_s)
    except ValueError as error:     # finite poses, but too far out to draw a curve through
        raise TargetMessageError(TargetCause.NOT_FINITE, f'{request.topic}: {error}') from None
    check_reach(request.arm, [t.position_m for t in targets], request.topic)
    return PreparedPath(follower, len(targets), request.topic, request.start_m)


def check_reach(arm: Arm, positions_m: list[Point], topic: str) -> None:
    """Refuse a path with a pose the arm cannot reach, naming the poses and their misses.

    The poses are solved in one batch; the few it misses are solved once more one by one
    (:meth:`Arm.ik` also turns a roll that moves the tool, which the batch keeps at home).

    :raises TargetMessageError: naming the topic, the poses out of reach (index, position,
        how far the closest pose stays) and how many there are
    """
    batch = arm.ik_batch(np.array(positions_m, dtype=float))
    missed = []
    for index in np.flatnonzero(~batch.reached):
        result = arm.ik(positions_m[index])
        if not result.reached:
            missed.append((int(index), result.residual_m))
    if not missed:
        return
    named = ', '.join(f'poses[{index}] {_fmt(positions_m[index])} by {residual * 1e3:.1f} mm'
                      for index, residual in missed[:NAMED_POSES])
    more = f' and {len(missed) - NAMED_POSES} more' if len(missed) > NAMED_POSES else ''
    raise TargetMessageError(TargetCause.UNSOLVABLE,
                             f'{topic}: {len(missed)} of {len(positions_m)} poses out of the '
                             f"arm's reach, the closest pose misses {named}{more}: the arm "
                             'keeps its current target')


def _fmt(point: Point) -> str:
    return '(' + ', '.join(f'{v:.4g}' for v in point) + ')'


class PathIntake:
    """Prepare target paths on one worker thread; the node takes the newest when it is ready.

    The executor's thread submits and takes; only :func:`prepare_path` runs on the worker.
    fabrik_ik takes on its path timer, which runs while a path is prepared: rclpy's
    EventsExecutor supports no guard condition the worker could wake it with.
    """

    def __init__(self) -> None:
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix='target_path')
        self._lock = threading.Lock()
        self._generation = 0         # of the newest submission or cancel
        self._preparing = False
        self._outcome: Union[PreparedPath, Exception, None] = None

    def submit(self, request: PathRequest) -> None:
        """Start preparing ``request``, superseding any path still being prepared.

        :raises TargetMessageError: at once, without preparing anything, if the header says
            the path has too many poses
        """
        count = pose_count(request.serialized)
        if count is not None:
            check_pose_count(count, request.topic)
        with self._lock:
            self._generation += 1
            generation = self._generation
            self._preparing = True
            self._outcome = None
        self._worker.submit(self._prepare, generation, request)

    @property
    def pending(self) -> bool:
        """Return True while the newest submission is being prepared."""
        with self._lock:
            return self._preparing

    def take(self) -> Optional[PreparedPath]:
        """Return the newest path once it is prepared (once); None until then, or if none.

        :raises TargetError: if the path was refused (any other error of the preparation,
            a bug, is raised as it is)
        """
        with self._lock:
            outcome, self._outcome = self._outcome, None
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def cancel(self) -> None:
        """Drop the path being prepared, if any: :meth:`take` will not return it."""
        with self._lock:
            self._generation += 1
            self._preparing = False
            self._outcome = None

    def shutdown(self) -> None:
        """Drop what is being prepared and wait for the worker to stop."""
        self.cancel()
        self._worker.shutdown(wait=True, cancel_futures=True)

    def _prepare(self, generation: int, request: PathRequest) -> None:
        """Run on the worker thread: prepare, and keep the outcome if it is still wanted."""
        with self._lock:
            if generation != self._generation:
                return
        outcome: Union[PreparedPath, Exception]
        try:
            outcome = prepare_path(request)
        except Exception as error:     # raised in the executor's thread by take()
            outcome = error
        with self._lock:
            if generation == self._generation:
                self._outcome = outcome
                self._preparing = False
