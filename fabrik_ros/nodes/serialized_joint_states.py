"""Serialize and read JointStates of fixed joint names as bytes, without building messages.

fabrik_ik publishes one joint command per target, and each sat on the target's way to the
servos: building a fresh sensor_msgs/JointState and having rclpy convert it for the middleware
took about 0.15 ms per target in a process idle between targets (20 Hz, cold caches), a tenth
of the end-to-end budget. Only the stamp and the positions change from one command to the
next, so :class:`SerializedJointStates` serializes a template once, with marker values in
those fields, finds where the markers landed, and from then on writes each command's values
over them; the publisher takes the bytes as they are (``Publisher.publish(bytes)``). The
bytes are the middleware's own serialization of the same message, whatever its encoding and
byte order, made canonical as a publisher puts it on the wire (:mod:`.wire_bytes`). Should a
middleware lay the template out so that the markers cannot be found once each, every message
is serialized in full instead: slower, never wrong.

servo_driver takes joint_commands as bytes the same way: turning each into a Python message
took about 0.05 ms in an idle process. A message that is the template byte for byte but for
the stamp and the positions (the same names in the same order, no frame, velocities or
efforts: what fabrik_ik publishes for the same arm) gives its positions straight from the
bytes; any other message is deserialized in full, as before.
"""

from collections.abc import Callable, Sequence
from typing import Optional

from builtin_interfaces.msg import Time
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from fabrik_ros.nodes.wire_bytes import canonical, WireLayout

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
        template_bytes = canonical(bytes(serialize(template)), template)
        self._layout = WireLayout.find(template_bytes, _MARK_SEC, _MARK_NANOSEC,
                                       tuple(template.position))

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
        return self._layout.patched(sec, nanosec, positions)

    def positions_of(self, data: bytes) -> Optional[tuple[float, ...]]:
        """Return the positions of serialized JointState ``data`` of the template's layout.

        None for any other message (other names, a frame_id, velocities, another encoding,
        bytes cut short): the caller deserializes it in full.
        """
        return None if self._layout is None else self._layout.values_of(data)
