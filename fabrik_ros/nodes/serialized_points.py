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
from typing import Optional

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, PointStamped
from rclpy.serialization import serialize_message

from fabrik_ros.nodes.wire_bytes import canonical, WireLayout

# Marker values: a stamp and a point no real message has, each a distinct bit pattern.
_MARK_SEC, _MARK_NANOSEC = 0x5A17C0DE, 0x3B9AC9F7
_MARK_POINT = (-1.2345678901234567e-123, 2.3456789012345678e-155, -3.4567890123456789e-177)


class SerializedPoints:
    """Read PointStamped messages of the given frames from their bytes.

    :param frames: the frame_ids whose messages are read from the bytes
    :param serialize: the middleware's serializer (a test may pass another)
    """

    def __init__(self, frames: Sequence[str], *,
                 serialize: Callable[[PointStamped], bytes] = serialize_message) -> None:
        self._layouts: list[WireLayout] = []
        for frame in dict.fromkeys(frames):
            template = PointStamped()
            template.header.frame_id = frame
            template.header.stamp = Time(sec=_MARK_SEC, nanosec=_MARK_NANOSEC)
            template.point = Point(x=_MARK_POINT[0], y=_MARK_POINT[1], z=_MARK_POINT[2])
            layout = WireLayout.find(canonical(bytes(serialize(template)), template),
                                     _MARK_SEC, _MARK_NANOSEC, _MARK_POINT)
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
            point = layout.values_of(data)
            if point is not None:
                x, y, z = point
                return x, y, z
        return None
