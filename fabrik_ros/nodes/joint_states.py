"""Build and read sensor_msgs/JointState messages matched by joint name."""

from collections.abc import Sequence
import math
from typing import Optional

from builtin_interfaces.msg import Time
from sensor_msgs.msg import JointState


def joint_state_msg(names: Sequence[str], positions_rad: Sequence[float],
                    stamp: Time) -> JointState:
    """Return a JointState with the given names and positions [rad]."""
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(names)
    msg.position = [float(p) for p in positions_rad]
    return msg


def positions_by_name(msg: JointState, names: Sequence[str],
                      fallback: Sequence[float]) -> Optional[tuple[float, ...]]:
    """Return the positions of ``names`` in that order, or None if the message has none of them.

    Joints the message does not mention keep their ``fallback`` value, so a message for a
    subset of the joints moves only those. Joints the arm does not know are ignored, and so is
    a message whose positions do not match its names one to one or are not finite.
    """
    if len(msg.name) != len(msg.position):
        return None
    pairs = zip(msg.name, msg.position, strict=True)
    given = {name: float(p) for name, p in pairs if name in names}
    if not given or not all(math.isfinite(p) for p in given.values()):
        return None
    return tuple(given.get(name, float(old)) for name, old in zip(names, fallback, strict=True))
