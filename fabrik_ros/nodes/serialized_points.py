"""Read the point of a serialized PointStamped straight from its bytes, when laid out as known.

fabrik_ik takes target_point as bytes: turning each message into a Python message took about
0.05 ms in a process idle between targets (20 Hz, cold caches), on every target's way to the
servos. :class:`SerializedPoints` serializes one template per frame the node takes (the empty
frame and the arm's base frame), with marker values in the stamp and the point, made canonical
as a publisher puts it on the wire (:mod:`.wire_bytes`). A message that is a template byte for
byte but for the stamp and the point gives its point straight from the bytes; any other
message (another frame, another encoding) is left to the caller to deserialize in full.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import struct
from typing import Optional

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, PointStamped
from rclpy.serialization import serialize_message

from fabrik_ros.nodes.wire_bytes import canonical, find_once

# Marker values: a stamp and a point no real message has, each a distinct bit pattern.
_MARK_SEC, _MARK_NANOSEC = 0x5A17C0DE, 0x3B9AC9F7
_MARK_POINT = (-1.2345678901234567e-123, 2.3456789012345678e-155, -3.4567890123456789e-177)


@dataclass(frozen=True)
class _Layout:
    """Where a template's stamp and point lie, and the bytes around them."""

    size: int
    before_stamp: bytes
    after_stamp_at: int
    between: bytes        # from the stamp's end to the point (the frame_id and padding)
    point: struct.Struct
    point_at: int
    after: bytes


class SerializedPoints:
    """Read PointStamped messages of the given frames from their bytes.

    :param frames: the frame_ids whose messages are read from the bytes
    :param serialize: the middleware's serializer (a test may pass another)
    """

    def __init__(self, frames: Sequence[str], *,
                 serialize: Callable[[PointStamped], bytes] = serialize_message) -> None:
        self._layouts: list[_Layout] = []
        for frame in dict.fromkeys(frames):
            template = PointStamped()
            template.header.frame_id = frame
            template.header.stamp = Time(sec=_MARK_SEC, nanosec=_MARK_NANOSEC)
            template.point = Point(x=_MARK_POINT[0], y=_MARK_POINT[1], z=_MARK_POINT[2])
            layout = _layout(canonical(bytes(serialize(template)), template))
            if layout is not None:
                self._layouts.append(layout)

    @property
    def frames_read(self) -> int:
        """Return how many frames' messages are read from the bytes (the others in full)."""
        return len(self._layouts)

    def point_of(self, data: bytes) -> Optional[tuple[float, float, float]]:
        """Return (x, y, z) of serialized PointStamped ``data`` of one of the frames, else None.

        None for any other message (another frame, another encoding, bytes cut short): the
        caller deserializes it in full.
        """
        for layout in self._layouts:
            if (len(data) == layout.size and data.startswith(layout.before_stamp)
                    and data.startswith(layout.between, layout.after_stamp_at)
                    and data.endswith(layout.after)):
                x, y, z = layout.point.unpack_from(data, layout.point_at)
                return x, y, z
        return None


def _layout(data: bytes) -> Optional[_Layout]:
    """Return the template's layout, None if a marker is not found once in either byte order."""
    for order in '<>':
        stamp = struct.Struct(f'{order}iI')
        point = struct.Struct(f'{order}3d')
        stamp_at = find_once(data, stamp.pack(_MARK_SEC, _MARK_NANOSEC))
        point_at = find_once(data, point.pack(*_MARK_POINT))
        if stamp_at is None or point_at is None or stamp_at + stamp.size > point_at:
            continue
        after_stamp_at = stamp_at + stamp.size
        return _Layout(len(data), data[:stamp_at], after_stamp_at,
                       data[after_stamp_at:point_at], point, point_at,
                       data[point_at + point.size:])
    return None
