"""Serialized ROS messages as a publisher puts them on the wire, and markers found in them.

serialized_joint_states and serialized_points patch or read messages as bytes at offsets
found in a serialized template. rclpy's serialize_message leaves the template's alignment
padding as the buffer held it and may add bytes after the message (the middleware's size
estimate); a publisher zeroes the padding and sends nothing after the end. :func:`canonical`
makes a template so, so that it matches what other processes send byte for byte.
"""

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
