"""Build and read sensor_msgs/JointState messages matched by joint name."""

from array import array
from collections.abc import Sequence
from enum import Enum
import math

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


class JointStateMessage:
    """One JointState, refilled for each publish (a publisher serializes it at once).

    Building a message anew checks every name and every position in Python; a refilled one
    sets its names only when they change, and its positions as an array of doubles, which
    the message takes as it is.
    """

    def __init__(self) -> None:
        self.msg = JointState()
        self._names: tuple[str, ...] = ()

    def filled(self, names: Sequence[str], positions: Sequence[float],
               stamp: Time) -> JointState:
        """Return the message with these names, positions [rad] and stamp."""
        if tuple(names) != self._names:
            self._names = tuple(names)
            self.msg.name = list(self._names)
        self.msg.header.stamp = stamp
        self.msg.position = array('d', positions)
        return self.msg


class JointCommandCause(Enum):
    """Why a JointState could not be read; nodes throttle their warnings per cause."""

    LENGTHS = 'lengths differ'
    NO_KNOWN_JOINT = 'no known joint'
    NOT_FINITE = 'not finite'


class JointCommandError(ValueError):
    """A JointState a node cannot take, with the cause and a message naming the culprit."""

    def __init__(self, cause: JointCommandCause, message: str) -> None:
        super().__init__(message)
        self.cause = cause


def positions_by_name(msg: JointState, names: Sequence[str],
                      fallback: Sequence[float]) -> tuple[float, ...]:
    """Return the positions of ``names`` in that order.

    Joints the message does not mention keep their ``fallback`` value, so a message for a
    subset of the joints moves only those. Joints the arm does not know are ignored.

    :raises JointCommandError: if names and positions differ in length, no name is one of
        ``names``, or a position of one of ``names`` is not finite
    """
    if len(msg.name) != len(msg.position):
        raise JointCommandError(JointCommandCause.LENGTHS,
                                f'{len(msg.name)} names but {len(msg.position)} positions '
                                f'(lengths must match)')
    given = {name: float(p) for name, p in zip(msg.name, msg.position, strict=True)
             if name in names}
    if not given:
        raise JointCommandError(JointCommandCause.NO_KNOWN_JOINT,
                                f'names {list(msg.name)} hold none of the joints '
                                f'{list(names)}')
    bad = {name: p for name, p in given.items() if not math.isfinite(p)}
    if bad:
        raise JointCommandError(JointCommandCause.NOT_FINITE,
                                f'positions not finite: {bad}')
    return tuple(given.get(name, float(old)) for name, old in zip(names, fallback, strict=True))
