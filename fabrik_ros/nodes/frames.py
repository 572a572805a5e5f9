"""Targets and vectors from any tf frame into the arm's base frame, where tf2_ros is installed.

fabrik_ik builds one :class:`BaseFrames` (:meth:`BaseFrames.for_node`): a ``tf2_ros.Buffer``
fed by a ``tf2_ros.TransformListener`` on the node itself. A message in the base frame (or
with an empty frame_id) needs no tf at all. Any other frame is looked up at the message's
stamp, or at the latest transform tf has for a zero stamp; a frame tf does not know is
refused naming it and the frames tf has, a stamp outside tf's buffer saying so. Without
tf2_ros (it is in every ROS install, but not on PyPI) a target in another frame is refused
as before, saying tf2_ros is not installed.

Waiting for a transform: the listener's subscriptions are the node's own, so they run on the
node's executor thread. A callback on that thread that waited for a transform would keep the
listener from receiving it, so lookups there never wait (``wait_s`` 0). A target whose
transform tf does not have yet (stamped a little after tf's newest, as RViz stamps its
clicks "now"; a frame not heard yet) is kept instead by :class:`TransformWait` and tried
again on a timer, between the listener's callbacks, for up to :data:`TF_WAIT_S`; a newer
target replaces it. The path intake's worker thread waits in the lookup itself
(:data:`TF_WAIT_S`): the executor keeps receiving /tf meanwhile. That is safe: tf2's
BufferCore guards its frames with a mutex and tf2_py holds the GIL for each call, so the
worker's lookups and the listener's inserts interleave whole. (The listener's own
``spin_thread`` would put the whole node on a second executor, taking it off fabrik_ik's.)

The transforms are applied here with numpy (tf2_geometry_msgs needs the C++ tf2_ros).
"""

from collections.abc import Callable
from dataclasses import dataclass
import re
import time as monotonic_time
from typing import Any, Optional

import numpy as np
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.time import Time

from fabrik_ros.kinematics import TargetError
from fabrik_ros.nodes.targets import (
    cause_of,
    rotation_matrix,
    TargetCause,
    TargetMessageError,
    Vector,
)
from fabrik_ros.nodes.timers import create_timer

# How long a target waits for its transform to arrive in tf [s]: a path's lookup on the
# worker thread, a point or pose tried again on the executor's (TF_RETRY_S apart).
TF_WAIT_S = 0.2
TF_RETRY_S = 0.01
_WAITS_FOR_TF = (TargetCause.UNKNOWN_FRAME, TargetCause.NOT_AT_STAMP)
# A refusal names at most this many of the frames tf has, then says how many more there are.
LISTED_FRAMES = 12
# Frame names and tf's own error text in a refusal are cut to these many characters.
_NAME_CHARS = 64
_TF_TEXT_CHARS = 240
_LATEST = Time().to_msg()          # a zero stamp: tf's latest transform
_FRAME_LINE = re.compile(r'^Frame (.+) exists with parent (.+)\.$')


@dataclass(frozen=True)
class RigidTransform:
    """A rotation and then a translation: a point in one frame -> the same point in another."""

    rotation: np.ndarray          # 3x3, orthonormal
    translation: np.ndarray       # [m]
    is_identity: bool = False     # the base frame's own: points are taken as they are

    def apply(self, point: Vector) -> Vector:
        """Return ``point`` [m] in the target frame.

        >>> quarter = RigidTransform(rotation_matrix((0.0, 0.0, 0.5 ** 0.5, 0.5 ** 0.5)),
        ...                          np.array([1.0, 0.0, 0.0]))
        >>> [round(v, 12) + 0.0 for v in quarter.apply((1.0, 0.0, 0.0))]
        [1.0, 1.0, 0.0]
        """
        with np.errstate(over='ignore', invalid='ignore'):    # the caller checks the floats
            return _vector(self.rotation @ np.asarray(point, dtype=float) + self.translation)

    def rotate(self, vector: Vector) -> Vector:
        """Return the direction ``vector`` in the target frame (no translation)."""
        return _vector(self.rotation @ np.asarray(vector, dtype=float))


IDENTITY = RigidTransform(np.eye(3), np.zeros(3), is_identity=True)


class BaseFrames:
    """Transforms from the frames of incoming messages into the arm's base frame.

    Built without a buffer, it knows the base frame only (and an empty frame_id, which
    means the base frame): that is fabrik_ik without tf2_ros.
    """

    def __init__(self, base_frame: str, *, tf2_ros: Any = None, buffer: Any = None,
                 listener: Any = None) -> None:
        """Use ``buffer`` (a tf2_ros.Buffer) and the exceptions of module ``tf2_ros``."""
        self.base_frame = base_frame
        self._tf2_ros = tf2_ros
        self._buffer = buffer
        self._listener = listener      # kept: the listener unsubscribes when collected

    @classmethod
    def for_node(cls, node: Node, base_frame: str) -> 'BaseFrames':
        """Listen to /tf and /tf_static on ``node``; without tf2_ros, log once and take none."""
        try:
            import tf2_ros
        except ImportError:
            node.get_logger().info(f"tf2_ros is not installed: targets are taken in the arm's "
                                   f"base frame '{base_frame}' only (or an empty frame_id)")
            return cls(base_frame)
        buffer = tf2_ros.Buffer()
        listener = tf2_ros.TransformListener(buffer, node)
        return cls(base_frame, tf2_ros=tf2_ros, buffer=buffer, listener=listener)

    @property
    def uses_tf(self) -> bool:
        """Return True when frames other than the base frame are looked up in tf."""
        return self._buffer is not None

    def to_base(self, where: str, frame_id: str, stamp, *, wait_s: float = 0.0
                ) -> RigidTransform:
        """Return the transform from ``frame_id`` at ``stamp`` into the base frame.

        :param where: the topic (or field) the frame came in, named in a refusal
        :param stamp: a builtin_interfaces/Time; zero takes the latest transform tf has
        :param wait_s: how long to wait for the transform (only off the executor's thread)
        :raises TargetMessageError: without tf2_ros, for a frame tf does not know or cannot
            connect to the base frame, a stamp outside tf's buffer, or a negative stamp
        """
        if frame_id in ('', self.base_frame):
            return IDENTITY
        if self._buffer is None:
            raise TargetMessageError(
                TargetCause.WRONG_FRAME,
                f"{where}: frame_id {_shown(frame_id)} is not the arm's base frame "
                f"'{self.base_frame}' (tf2_ros is not installed: send targets in "
                f"'{self.base_frame}')")
        time = _lookup_time(where, stamp)
        try:
            transform = self._buffer.lookup_transform(self.base_frame, frame_id, time,
                                                      Duration(nanoseconds=int(wait_s * 1e9)))
        except self._tf2_ros.TransformException as error:
            raise self._refusal(where, frame_id, time, error) from None
        return _rigid(where, frame_id, transform.transform)

    def rotation_to_base(self, frame_id: str, stamp, *, where: str = 'jog/twist') -> np.ndarray:
        """Return the 3x3 rotation taking vectors in ``frame_id`` into the base frame.

        A vector is a command for now (a jog twist): where tf has no transform at ``stamp``
        (a stream stamped "now" runs a little ahead of a moving frame's transforms), the
        latest transform is taken.

        :raises TargetMessageError: as :meth:`to_base`, but for the stamp
        """
        try:
            return self.to_base(where, frame_id, stamp).rotation
        except TargetMessageError as error:
            if error.cause is not TargetCause.NOT_AT_STAMP:
                raise
        return self.to_base(where, frame_id, _LATEST).rotation

    def shutdown(self) -> None:
        """Stop listening to /tf and /tf_static."""
        if self._listener is not None:
            self._listener.unregister()
            self._listener = None

    def _refusal(self, where: str, frame_id: str, time: Time,
                 error: Exception) -> TargetMessageError:
        """Return the refusal of a failed lookup, naming the frames tf has where they help."""
        tf = self._tf2_ros
        base, shown, text = f"'{self.base_frame}'", _shown(frame_id), _cut(str(error))
        if isinstance(error, tf.ExtrapolationException):
            return TargetMessageError(
                TargetCause.NOT_AT_STAMP,
                f'{where}: tf has no transform from {shown} to {base} at the stamp '
                f'{_fmt_time(time)} ({text}); a zero stamp takes the latest transform')
        if isinstance(error, tf.LookupException):
            known = self._frames()
            missing = frame_id if frame_id not in known else self.base_frame
            what = " (the arm's base frame)" if missing == self.base_frame else ''
            message = f'{where}: tf knows no frame {_shown(missing)}{what}; {_listing(known)}'
        elif isinstance(error, tf.ConnectivityException):
            message = (f'{where}: tf has no chain of transforms from {shown} to {base} (they '
                       f'are in two unconnected trees); {_listing(self._frames())}')
        else:
            message = f'{where}: tf cannot transform {shown} into {base}: {text}'
        return TargetMessageError(TargetCause.UNKNOWN_FRAME, message)

    def _frames(self) -> list[str]:
        """Return the frames tf has, each once, in the order tf lists them."""
        frames: dict[str, None] = {}
        for line in self._buffer.all_frames_as_string().splitlines():
            match = _FRAME_LINE.match(line)
            if match:
                frames.update(dict.fromkeys(match.groups()))
        return list(frames)


def _listing(frames: list[str]) -> str:
    """Return 'the frames tf has: ...', at most LISTED_FRAMES of them.

    >>> _listing([])
    'tf has no frames (nothing heard on /tf or /tf_static)'
    >>> _listing([f'f{i}' for i in range(LISTED_FRAMES + 2)]).endswith('f11 and 2 more')
    True
    """
    if not frames:
        return 'tf has no frames (nothing heard on /tf or /tf_static)'
    named = ', '.join(_cut(f, _NAME_CHARS) for f in frames[:LISTED_FRAMES])
    more = len(frames) - LISTED_FRAMES
    return f'the frames tf has: {named}' + (f' and {more} more' if more > 0 else '')


def _lookup_time(where: str, stamp) -> Time:
    """Return ``stamp`` as a Time tf looks up (zero: the latest).

    :raises TargetMessageError: for a stamp before 1970 (no transform is stamped so)
    """
    nanoseconds = int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)
    if nanoseconds < 0:
        raise TargetMessageError(TargetCause.NOT_AT_STAMP,
                                 f'{where}: stamp {stamp.sec} s {stamp.nanosec} ns is '
                                 f'negative; a zero stamp takes the latest transform')
    return Time(nanoseconds=nanoseconds)


def _rigid(where: str, frame_id: str, transform) -> RigidTransform:
    """Return tf's geometry_msgs/Transform as a RigidTransform (checked: tf is input too)."""
    t, r = transform.translation, transform.rotation
    translation = np.array([t.x, t.y, t.z], dtype=float)
    try:
        if not np.all(np.isfinite(translation)):
            raise ValueError(f'translation {tuple(translation)} is not finite')
        rotation = rotation_matrix((r.x, r.y, r.z, r.w))
    except ValueError as error:
        raise TargetMessageError(TargetCause.UNKNOWN_FRAME,
                                 f'{where}: the transform tf has from {_shown(frame_id)} is '
                                 f'unusable: {error}') from None
    return RigidTransform(rotation, translation)


def _vector(values: np.ndarray) -> Vector:
    x, y, z = (float(v) for v in values)
    return (x, y, z)


def _fmt_time(time: Time) -> str:
    seconds, nanoseconds = divmod(time.nanoseconds, 1_000_000_000)
    return f'{seconds}.{nanoseconds:09d} s'


def _shown(name: str) -> str:
    """Return ``name`` quoted for a log line, cut if long (a frame_id is input)."""
    return repr(_cut(name, _NAME_CHARS))


def _cut(text: str, limit: int = _TF_TEXT_CHARS) -> str:
    return text if len(text) <= limit else f'{text[:limit]}... ({len(text)} characters)'


Retry = Callable[[], Any]


class TransformWait:
    """The newest target whose transform tf did not have, tried again until it has it.

    ``accept(read, source)`` is the node's: it calls ``read()`` and, when that raises, asks
    :meth:`hold` whether to keep the target. A kept one is accepted again every
    :data:`TF_RETRY_S` (a timer on the node, running only while a target waits) until it
    reads, is refused for another reason, or :data:`TF_WAIT_S` has passed since it came;
    then its refusal is the node's to log.
    """

    def __init__(self, node: Node, frames: BaseFrames,
                 accept: Callable[[Retry, str], None]) -> None:
        """Keep targets for ``node`` when ``frames`` looks them up in tf."""
        self._uses_tf = frames.uses_tf
        self._accept = accept
        self._waiting: Optional[tuple[Retry, str, float]] = None    # read, source, until
        # Without tf no target waits: then no timer either.
        self._timer = create_timer(node, TF_RETRY_S, self._on_timer) if self._uses_tf else None
        if self._timer is not None:
            self._timer.cancel()

    @property
    def waiting(self) -> bool:
        """Return True while a target waits for its transform."""
        return self._waiting is not None

    def hold(self, error: TargetError, read: Retry, source: str) -> bool:
        """Return True if the target ``read`` waits for tf (the error is not to be logged).

        A target refused for a transform tf does not have is kept, replacing any kept
        before; the one kept is let go once its time is up.
        """
        waits = self._uses_tf and cause_of(error) in _WAITS_FOR_TF
        now_s = monotonic_time.monotonic()
        if self._waiting is not None and self._waiting[0] is read:
            if waits and now_s < self._waiting[2]:
                return True
            self.drop()
            return False
        self.drop()             # a newer target replaces the one waiting
        if not waits:
            return False
        self._waiting = (read, source, now_s + TF_WAIT_S)
        if self._timer is not None:
            self._timer.reset()
        return True

    def drop(self) -> None:
        """Forget the waiting target (it was read, or a newer target or a path came)."""
        if self._waiting is not None:
            self._waiting = None
            if self._timer is not None:
                self._timer.cancel()

    def _on_timer(self) -> None:
        if self._waiting is not None:        # drop() cancels the timer: always, in practice
            read, source, _ = self._waiting
            self._accept(read, source)
