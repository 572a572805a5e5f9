"""A stand-in for tf2_ros with the methods fabrik_ik calls, behaving as tf2 does.

tf2_ros is in every ROS install but not on PyPI, so CI lacks it. This module stands in for
what fabrik_ros/nodes/frames.py uses, with upstream's names, signatures and exception types
(ros2/geometry2: tf2_ros_py's buffer.py and transform_listener.py, tf2_py's tf2_py.cpp, tf2's
buffer_core.cpp and cache.cpp):

- ``Buffer(cache_time=None, node=None)``; ``lookup_transform(target_frame, source_frame,
  time, timeout=Duration())`` (``can_transform`` waiting up to ``timeout``, then the lookup);
  ``can_transform(...)``; ``all_frames_as_string()`` (a line ``Frame <child> exists with
  parent <parent>.`` per frame that has a parent, in the order tf numbered them);
  ``set_transform(transform, authority)`` and ``set_transform_static(transform, authority)``,
  which the listener calls for each /tf and /tf_static message (the tests call them instead).
- ``TransformListener(buffer, node, *, spin_thread=False, qos=None, static_qos=None,
  tf_topic='/tf', tf_static_topic='/tf_static')`` and ``unregister()``. The real one
  subscribes tf2_msgs/TFMessage, which the wheels do not have either: this one records
  what it was given.
- ``TransformException`` and its kinds ``LookupException`` (a frame tf does not know),
  ``ConnectivityException`` (two unconnected trees), ``ExtrapolationException`` (a time
  outside a transform's buffer; a single transform answers only its own stamp),
  ``InvalidArgumentException`` (an empty frame or one starting with '/'),
  ``TimeoutException``, with tf2's messages.

Lookups as tf2 does them: a chain of parent <- child transforms up to the frames' common
ancestor; static ones answer any time; a dynamic one is interpolated between the two stamps
around the time (translation linear, rotation slerp); time zero takes the latest time every
dynamic transform of the chain has (tf2's latest common time). The quaternion maths here is
written apart from the code under test (quaternion products; the node uses matrices).
"""

import bisect
import math
import sys
import threading
import types

from geometry_msgs.msg import TransformStamped
from rclpy.duration import Duration
from rclpy.time import Time


class TransformException(Exception):  # noqa: N818 (upstream's name)
    """tf2.TransformException: the base of every tf2 lookup error."""


class ConnectivityException(TransformException):
    """tf2.ConnectivityException."""


class LookupException(TransformException):
    """tf2.LookupException."""


class ExtrapolationException(TransformException):
    """tf2.ExtrapolationException."""


class InvalidArgumentException(TransformException):
    """tf2.InvalidArgumentException."""


class TimeoutException(TransformException):
    """tf2.TimeoutException."""


def _multiply(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def _conjugate(q):
    return (-q[0], -q[1], -q[2], q[3])


def _rotate(q, v):
    x, y, z, _ = _multiply(_multiply(q, (*v, 0.0)), _conjugate(q))
    return (x, y, z)


def _normalised(q):
    length = math.sqrt(sum(c * c for c in q))
    return tuple(c / length for c in q)


def _slerp(a, b, s):
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    if dot < 0.0:
        b, dot = tuple(-c for c in b), -dot
    if dot > 0.9995:
        return _normalised(tuple(x + s * (y - x) for x, y in zip(a, b, strict=True)))
    theta = math.acos(dot)
    wa, wb = math.sin((1 - s) * theta) / math.sin(theta), math.sin(s * theta) / math.sin(theta)
    return tuple(wa * x + wb * y for x, y in zip(a, b, strict=True))


class _Pose:
    """parent <- child: rotate a child point by ``q``, then add ``t``."""

    def __init__(self, t, q):
        self.t, self.q = tuple(t), _normalised(tuple(q))

    def then(self, outer: '_Pose') -> '_Pose':
        """Return ``outer`` after ``self``: outer.parent <- self.child."""
        rotated = _rotate(outer.q, self.t)
        return _Pose(tuple(a + b for a, b in zip(rotated, outer.t, strict=True)),
                     _multiply(outer.q, self.q))

    def inverse(self) -> '_Pose':
        q = _conjugate(self.q)
        return _Pose(tuple(-c for c in _rotate(q, self.t)), q)


_IDENTITY = _Pose((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
_NO_WAIT = Duration()          # tf2_ros's default timeout: no waiting


def _time_text(ns: int) -> str:
    return f'{ns / 1e9:.6f}'


class _Link:
    """One child frame's transforms to its parent: static, or stamped and sorted."""

    def __init__(self, parent: str, static: bool):
        self.parent, self.static = parent, static
        self.stamps: list[int] = []
        self.poses: list[_Pose] = []

    def insert(self, ns: int, pose: _Pose) -> None:
        if self.static:
            self.stamps, self.poses = [0], [pose]
            return
        at = bisect.bisect_left(self.stamps, ns)
        if at < len(self.stamps) and self.stamps[at] == ns:
            self.poses[at] = pose
        else:
            self.stamps.insert(at, ns)
            self.poses.insert(at, pose)

    def at(self, ns: int) -> _Pose:
        """Return the pose at ``ns`` (0: the latest), as tf2's TimeCache finds it."""
        if self.static:
            return self.poses[0]
        if ns == 0:
            return self.poses[-1]
        if len(self.stamps) == 1:
            if self.stamps[0] == ns:
                return self.poses[0]
            raise ExtrapolationException(
                f'Lookup would require extrapolation at time {_time_text(ns)}, but only time '
                f'{_time_text(self.stamps[0])} is in the buffer')
        if ns > self.stamps[-1]:
            raise ExtrapolationException(
                f'Lookup would require extrapolation into the future.  Requested time '
                f'{_time_text(ns)} but the latest data is at time {_time_text(self.stamps[-1])}')
        if ns < self.stamps[0]:
            raise ExtrapolationException(
                f'Lookup would require extrapolation into the past.  Requested time '
                f'{_time_text(ns)} but the earliest data is at time {_time_text(self.stamps[0])}')
        after = bisect.bisect_left(self.stamps, ns)
        if self.stamps[after] == ns:
            return self.poses[after]
        t0, t1 = self.stamps[after - 1], self.stamps[after]
        p0, p1 = self.poses[after - 1], self.poses[after]
        s = (ns - t0) / (t1 - t0)
        moved = tuple(a + s * (b - a) for a, b in zip(p0.t, p1.t, strict=True))
        return _Pose(moved, _slerp(p0.q, p1.q, s))


class Buffer:
    """tf2_ros.Buffer: transforms as the listener hands them in; lookups between frames."""

    def __init__(self, cache_time=None, node=None):
        self.cache_time, self.node = cache_time, node
        self._links: dict[str, _Link] = {}
        self._numbered: list[str] = []       # frames in the order tf numbers them
        self._changed = threading.Condition()    # tf2's frame_mutex_, and new data
        self.lookups: list[tuple] = []           # (target, source, time ns, timeout ns)
        BUFFERS.append(self)

    def set_transform(self, transform: TransformStamped, authority: str) -> None:
        self._set(transform, static=False)

    def set_transform_static(self, transform: TransformStamped, authority: str) -> None:
        self._set(transform, static=True)

    def _set(self, transform: TransformStamped, *, static: bool) -> None:
        parent = transform.header.frame_id.lstrip('/')
        child = transform.child_frame_id.lstrip('/')
        if not child or not parent or child == parent:
            return       # tf2 logs TF_SELF_TRANSFORM / TF_NO_..._FRAME_ID and drops it
        t, r = transform.transform.translation, transform.transform.rotation
        ns = Time.from_msg(transform.header.stamp).nanoseconds
        with self._changed:
            for frame in (child, parent):
                if frame not in self._numbered:
                    self._numbered.append(frame)
            link = self._links.get(child)
            if link is None or link.static != static:
                link = self._links[child] = _Link(parent, static)
            link.parent = parent
            link.insert(ns, _Pose((t.x, t.y, t.z), (r.x, r.y, r.z, r.w)))
            self._changed.notify_all()

    def all_frames_as_string(self) -> str:
        with self._changed:
            return ''.join(f'Frame {frame} exists with parent {self._links[frame].parent}.\n'
                           for frame in self._numbered if frame in self._links)

    def can_transform(self, target_frame: str, source_frame: str, time: Time,
                      timeout: Duration = _NO_WAIT, return_debug_tuple: bool = False):
        def possible():
            try:
                self._lookup(target_frame, source_frame, time.nanoseconds)
            except TransformException as error:
                return False, str(error)
            return True, ''

        with self._changed:
            if timeout != _NO_WAIT:
                self._changed.wait_for(lambda: possible()[0], timeout.nanoseconds / 1e9)
            result = possible()
        return result if return_debug_tuple else result[0]

    def lookup_transform(self, target_frame: str, source_frame: str, time: Time,
                         timeout: Duration = _NO_WAIT) -> TransformStamped:
        self.lookups.append((target_frame, source_frame, time.nanoseconds,
                             timeout.nanoseconds))
        self.can_transform(target_frame, source_frame, time, timeout)
        with self._changed:
            pose, ns = self._lookup(target_frame, source_frame, time.nanoseconds)
        msg = TransformStamped()
        msg.header.frame_id, msg.child_frame_id = target_frame, source_frame
        msg.header.stamp = Time(nanoseconds=ns).to_msg()
        tr, ro = msg.transform.translation, msg.transform.rotation
        tr.x, tr.y, tr.z = pose.t
        ro.x, ro.y, ro.z, ro.w = pose.q
        return msg

    def _lookup(self, target: str, source: str, ns: int) -> tuple[_Pose, int]:
        if target == source:
            return _IDENTITY, ns
        for frame, argument in ((target, 'target_frame'), (source, 'source_frame')):
            if not frame:
                raise InvalidArgumentException(
                    f'Invalid argument "{frame}" passed to lookupTransform argument '
                    f'{argument} - in tf2 frame_ids cannot be empty')
            if frame.startswith('/'):
                raise InvalidArgumentException(
                    f'Invalid argument "{frame}" passed to lookupTransform argument '
                    f"{argument} - in tf2 frame_ids cannot start with a '/'")
            if frame not in self._numbered:
                raise LookupException(f'"{frame}" passed to lookupTransform argument '
                                      f'{argument} does not exist. ')
        up_source, up_target = self._chain(source), self._chain(target)
        common = next((f for f in (s for s, _ in up_source) if f in dict(up_target)), None)
        if common is None:
            raise ConnectivityException(
                f"Could not find a connection between '{target}' and '{source}' because "
                'they are not part of the same tree.Tf has two or more unconnected trees.')
        links = ([link for frame, link in up_source[:_index(up_source, common)]]
                 + [link for frame, link in up_target[:_index(up_target, common)]])
        if ns == 0:
            latest = [link.stamps[-1] for link in links if not link.static]
            ns = min(latest) if latest else 0
        try:
            source_to_common = self._compose(up_source, common, ns)
            target_to_common = self._compose(up_target, common, ns)
        except ExtrapolationException as error:
            raise ExtrapolationException(f'{error}, when looking up transform from frame '
                                         f'[{source}] to frame [{target}]') from None
        return source_to_common.then(target_to_common.inverse()), ns

    def _chain(self, frame: str) -> list[tuple[str, '_Link | None']]:
        """Return (frame, its link to its parent) from ``frame`` up to its root."""
        chain, seen = [], set()
        while frame not in seen:
            seen.add(frame)
            link = self._links.get(frame)
            chain.append((frame, link))
            if link is None:
                break
            frame = link.parent
        return chain

    def _compose(self, chain, common: str, ns: int) -> _Pose:
        pose = _IDENTITY
        for _frame, link in chain[:_index(chain, common)]:
            pose = pose.then(link.at(ns))
        return pose


def _index(chain, frame: str) -> int:
    return [f for f, _ in chain].index(frame)


class TransformListener:
    """tf2_ros.TransformListener: records its buffer and node (no TFMessage here)."""

    def __init__(self, buffer: Buffer, node, *, spin_thread: bool = False, qos=None,
                 static_qos=None, tf_topic: str = '/tf', tf_static_topic: str = '/tf_static'):
        self.buffer, self.node, self.spin_thread = buffer, node, spin_thread
        self.tf_topic, self.tf_static_topic = tf_topic, tf_static_topic
        self.unregistered = False
        LISTENERS.append(self)

    def unregister(self) -> None:
        self.unregistered = True


BUFFERS: list[Buffer] = []
LISTENERS: list[TransformListener] = []


def install(monkeypatch) -> types.ModuleType:
    """Put this stand-in in sys.modules as ``tf2_ros`` for one test; return the module."""
    BUFFERS.clear()
    LISTENERS.clear()
    module = types.ModuleType('tf2_ros')
    for name in ('Buffer', 'TransformListener', 'TransformException', 'LookupException',
                 'ConnectivityException', 'ExtrapolationException',
                 'InvalidArgumentException', 'TimeoutException'):
        setattr(module, name, globals()[name])
    monkeypatch.setitem(sys.modules, 'tf2_ros', module)
    return module
