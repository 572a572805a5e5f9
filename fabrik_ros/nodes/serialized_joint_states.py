"""Serialize JointStates of fixed joint names by patching bytes, for publishing as they are.

fabrik_ik publishes one joint command per target, and each sat on the target's way to the
servos: building a fresh sensor_msgs/JointState and having rclpy convert it for the middleware
took about 0.15 ms per target in a process idle between targets (20 Hz, cold caches), a tenth
of the end-to-end budget. Only the stamp and the positions change from one command to the
next, so :class:`SerializedJointStates` serializes a template once, with marker values in
those fields, finds where the markers landed, and from then on writes each command's values
over them; the publisher takes the bytes as they are (``Publisher.publish(bytes)``). The
bytes are the middleware's own serialization of the same message, whatever its encoding and
byte order. Should a middleware lay the template out so that the markers cannot be found
once each, every message is serialized in full instead: slower, never wrong.
"""

from collections.abc import Callable, Sequence
import struct
from typing import Optional

from builtin_interfaces.msg import Time
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

_NS_PER_S = 1_000_000_000
# Marker values: a stamp and positions no real message has, each a distinct bit pattern.
_MARK_SEC, _MARK_NANOSEC = 0x5A17C0DE, 0x3B9AC9F7
_MARK_POSITION = -1.2345678901234567e-123


class SerializedJointStates:
    """Serialized JointStates of ``names``: stamp and positions [rad] per call, no velocity.

    :param names: the joint names every message carries, in order
    :param serialize: the middleware's serializer (a test may pass another)
    """

    def __init__(self, names: Sequence[str], *,
                 serialize: Callable[[JointState], bytes] = serialize_message) -> None:
        self.names = tuple(names)
        self._serialize = serialize
        count = len(self.names)
        template = JointState(name=list(self.names),
                              position=[_MARK_POSITION * (index + 1) for index in range(count)])
        template.header.stamp = Time(sec=_MARK_SEC, nanosec=_MARK_NANOSEC)
        self._template = bytes(serialize(template))
        self._layout = _layout(self._template, template)

    @property
    def patched(self) -> bool:
        """Return True if messages are patched from the template (else serialized in full)."""
        return self._layout is not None

    def serialize(self, positions: Sequence[float], stamp_ns: int) -> bytes:
        """Return the serialized JointState of ``positions`` stamped ``stamp_ns`` [ns].

        :raises ValueError: if there is not one position per name
        """
        if len(positions) != len(self.names):
            raise ValueError(f'positions = {list(positions)!r}, must hold {len(self.names)} '
                             f'values (one per name: {", ".join(self.names)})')
        sec, nanosec = divmod(stamp_ns, _NS_PER_S)
        if self._layout is None:
            msg = JointState(name=list(self.names), position=[float(p) for p in positions])
            msg.header.stamp = Time(sec=sec, nanosec=nanosec)
            return bytes(self._serialize(msg))
        stamp, stamp_at, position, position_at = self._layout
        data = bytearray(self._template)
        stamp.pack_into(data, stamp_at, sec, nanosec)
        position.pack_into(data, position_at, *positions)
        return bytes(data)


def _layout(data: bytes,
            template: JointState) -> Optional[tuple[struct.Struct, int, struct.Struct, int]]:
    """Return the stamp's and the positions' formats and offsets in ``data``, None if unsure.

    Unsure: a marker is not found in either byte order, or found more than once.
    """
    count = len(template.position)
    for order in '<>':
        stamp = struct.Struct(f'{order}iI')
        position = struct.Struct(f'{order}{count}d')
        stamp_at = _only(data, stamp.pack(template.header.stamp.sec,
                                          template.header.stamp.nanosec))
        position_at = _only(data, position.pack(*template.position))
        if stamp_at is not None and position_at is not None:
            return stamp, stamp_at, position, position_at
    return None


def _only(data: bytes, pattern: bytes) -> Optional[int]:
    """Return where ``pattern`` occurs in ``data`` if it occurs exactly once."""
    at = data.find(pattern)
    if at < 0 or data.find(pattern, at + 1) >= 0:
        return None
    return at
