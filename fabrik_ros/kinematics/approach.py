"""How far the tool's axis ends from an asked approach direction, and how much of that is forced.

The tool's axis is the direction its length is measured along (``geometry.tool_length_m``):
the roll axis on an arm with a roll joint, the last link's direction otherwise (D_n of the arm
model). It always lies in the arm's vertical plane, whatever the joints do: the yaw turns that
plane, the pitch joints turn the axis within it, and a roll joint turns the tool about the axis
without tilting it. So an asked direction at an angle ``beta`` from that plane is missed by at
least ``beta``; a joint limit or a position the axis cannot be laid from adds to it.

One definition of the miss for every solve that takes an approach (:meth:`Arm.ik`'s single
solve; the float paths and the batch solve take positions only).
"""

from collections.abc import Sequence
import math
from typing import NamedTuple


class ApproachMiss(NamedTuple):
    """The angle between an asked approach and the tool's axis, and its forced part.

    :param error_rad: the angle between the asked direction and the tool's axis [rad]
    :param out_of_plane_rad: the asked direction's angle from the arm's vertical plane at the
        answer's yaw [rad]: no pitch or roll joint can remove it (``error_rad`` >= it)
    """

    error_rad: float
    out_of_plane_rad: float


def angle_between(first: Sequence[float], second: Sequence[float]) -> float:
    """Return the angle between two non-zero 3-vectors [rad], accurate near 0 and pi.

    atan2 of the cross and dot products: acos of the dot product loses half the digits near 0
    (a miss of 1e-8 rad would read 0 or 1.5e-8).

    >>> round(math.degrees(angle_between((1.0, 0.0, 0.0), (1.0, 1.0, 0.0))), 9)
    45.0
    """
    ax, ay, az = first
    bx, by, bz = second
    cross = math.hypot(ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx)
    return math.atan2(cross, ax * bx + ay * by + az * bz)


def in_base(yaw_rad: float, direction: complex) -> tuple[float, float, float]:
    """Return a direction of the arm's vertical plane (along + i up) in the base frame.

    >>> [round(v, 9) + 0.0 for v in in_base(math.pi / 2, complex(0.6, 0.8))]
    [0.0, 0.6, 0.8]
    """
    return (direction.real * math.cos(yaw_rad), direction.real * math.sin(yaw_rad),
            direction.imag)


def approach_miss(asked: Sequence[float], axis: Sequence[float], yaw_rad: float) -> ApproachMiss:
    """Return how far the tool's ``axis`` is from the ``asked`` direction, and the forced part.

    :param asked: the asked approach direction (any length > 0), base frame
    :param axis: the tool's axis, base frame (in the vertical plane at ``yaw_rad``)
    :param yaw_rad: the arm's yaw, geometric (0.0 without a yaw joint) [rad]
    """
    x, y, z = asked
    across = -x * math.sin(yaw_rad) + y * math.cos(yaw_rad)     # along the plane's normal
    in_plane = math.hypot(x * math.cos(yaw_rad) + y * math.sin(yaw_rad), z)
    return ApproachMiss(angle_between(asked, axis), math.atan2(abs(across), in_plane))
