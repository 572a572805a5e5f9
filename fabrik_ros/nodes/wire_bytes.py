"""Serialized ROS messages as a publisher puts them on the wire, and markers found in them.

serialized_joint_states and serialized_points patch or read messages as bytes at offsets
found in a serialized template (:class:`WireLayout`). rclpy's serialize_message leaves the
template's alignment padding as the buffer held it and may add bytes after the message (the
middleware's size estimate); a publisher zeroes the padding and sends nothing after the end.
:func:`canonical` makes a template so, so that it matches what other processes send byte for
byte.
"""

import struct
from typing import Any, Optional

from rclpy.serialization import deserialize_message

ENCAPSULATION_BYTES = 4       # the encoding's identifier and options, before the message


def canonical(data: bytes, msg: Any) -> bytes:
    """Return ``data`` cut at the end of ``msg``, with the padding ``msg`` leaves zeroed.

    Padding: a byte whose value ``msg`` does not depend on. Only bytes off the 4-byte grid of
    the encoding are tried: alignment padding after a string lies there, while the counts
    and lengths start on it (zeroing one of those would make the middleware's deserializer
    complain on stderr). ``data`` as it is if it does not deserialize to ``msg`` (another
    serializer).
    """
    msg_type = type(msg)

    def same(candidate: bytes) -> bool:
        try:
            return bool(deserialize_message(candidate, msg_type) == msg)
        except RuntimeError:       # cut short, or not this middleware's encoding
            return False

    end = len(data)
    while end > 0 and same(data[:end - 1]):
        end -= 1
    result = bytearray(data[:end])
    for index in range(ENCAPSULATION_BYTES, end):
        value = result[index]
        if value and (index - ENCAPSULATION_BYTES) % 4:
            result[index] = 0
            if not same(bytes(result)):
                result[index] = value
    return bytes(result)


def find_once(data: bytes, pattern: bytes) -> Optional[int]:
    """Return where ``pattern`` occurs in ``data`` if it occurs exactly once."""
    at = data.find(pattern)
    if at < 0 or data.find(pattern, at + 1) >= 0:
        return None
    return at


class WireLayout:
    """Where a canonical template's stamp and block of doubles lie, and the bytes around them.

    A message is of this layout when it is the template byte for byte but for the stamp and
    the doubles: those are read from it, or patched into a copy of the template.
    """

    def __init__(self, template: bytes, stamp: struct.Struct, stamp_at: int,
                 values: struct.Struct, values_at: int) -> None:
        self.template = template
        self.stamp, self.stamp_at = stamp, stamp_at
        self.values, self.values_at = values, values_at
        self._after_stamp_at = stamp_at + stamp.size
        self._before = template[:stamp_at]
        self._between = template[self._after_stamp_at:values_at]
        self._after = template[values_at + values.size:]

    @classmethod
    def find(cls, template: bytes, sec: int, nanosec: int,
             values: tuple[float, ...]) -> Optional['WireLayout']:
        """Return the layout of ``template``, whose stamp and doubles hold the given markers.

        None if unsure: a marker is not found once in either byte order, or the doubles come
        before the stamp (the header comes first).
        """
        for order in '<>':
            stamp = struct.Struct(f'{order}iI')
            block = struct.Struct(f'{order}{len(values)}d')
            stamp_at = find_once(template, stamp.pack(sec, nanosec))
            values_at = find_once(template, block.pack(*values))
            if (stamp_at is not None and values_at is not None
                    and stamp_at + stamp.size <= values_at):
                return cls(template, stamp, stamp_at, block, values_at)
        return None

    def values_of(self, data: bytes) -> Optional[tuple[float, ...]]:
        """Return the doubles of ``data`` if it is of this layout, else None."""
        if (len(data) == len(self.template) and data.startswith(self._before)
                and data.startswith(self._between, self._after_stamp_at)
                and data.endswith(self._after)):
            return self.values.unpack_from(data, self.values_at)
        return None

    def patched(self, sec: int, nanosec: int, values) -> bytes:
        """Return the template with this stamp and these doubles."""
        data = bytearray(self.template)
        self.stamp.pack_into(data, self.stamp_at, sec, nanosec)
        self.values.pack_into(data, self.values_at, *values)
        return bytes(data)
