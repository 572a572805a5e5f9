"""The yaw angles that put a target in the arm's plane, and their turns within a yaw range.

With the arm's plane ``lateral_m`` off the yaw axis, a target at distance ``rho`` from the axis
lies in the plane at two yaws: facing it (``azimuth - asin(lateral / rho)``) and reaching over
the top (``azimuth + pi + asin(lateral / rho)``). Nearer the axis than the plane, no yaw puts
it in the plane; both branches then meet at the yaw that brings the plane closest. A yaw range
may lie anywhere on the circle (a joint's zero shifts it), so each heading is turned by whole
turns into the range. One value or numpy arrays (a row per target), for both solvers.
"""

import math

import numpy as np

from fabrik_ros.kinematics.elementwise import pick, Scalar, TINY, TURN, wrap


def branch_headings(x: Scalar, y: Scalar, lateral_m: float) -> tuple[Scalar, Scalar]:
    """Return the yaws [rad] facing a target and reaching over the top to it.

    >>> [round(h, 6) for h in branch_headings(0.0, 1.0, 0.0)]
    [1.570796, -1.570796]
    >>> [round(h, 6) for h in branch_headings(1.0, 0.0, 0.5)]
    [-0.523599, -2.617994]
    """
    arrays = isinstance(x, np.ndarray)
    azimuth = np.arctan2(y, x) if arrays else math.atan2(y, x)
    if lateral_m == 0.0:
        return azimuth, wrap(azimuth + math.pi)
    distance = np.hypot(x, y) if arrays else math.hypot(x, y)
    ratio = lateral_m / pick(distance > TINY, distance, TINY)
    if arrays:
        turn = np.arcsin(np.clip(ratio, -1.0, 1.0))
    else:
        turn = math.asin(min(1.0, max(-1.0, ratio)))
    return azimuth - turn, wrap(azimuth + math.pi + turn)


def first_turn(heading: Scalar, low: float) -> Scalar:
    """Return ``heading`` turned by whole turns into [low, low + 2 pi).

    >>> round(first_turn(-3.0, 0.0), 6)
    3.283185
    """
    return low + (heading - low) % TURN


def turns_within(heading: float, low: float, high: float) -> list[float]:
    """Return the yaws equal to ``heading`` modulo whole turns within [low, high].

    >>> [round(t, 6) for t in turns_within(-3.0, 0.0, 4.0)]
    [3.283185]
    >>> turns_within(0.5, 1.0, 2.0)
    []
    """
    first = first_turn(heading, low)
    return [turn for turn in (first, first + TURN) if turn <= high]


def nearest_turn(x: float, y: float, lateral_m: float, low: float, high: float,
                 preferred: float) -> float:
    """Return the in-range yaw of either branch nearest ``preferred``, else ``low``.

    The first plane of a seeded solve (arm_ik.candidate_planes, built without the list): on
    a tie the facing branch; where no branch is in range, the lower yaw limit.

    >>> round(nearest_turn(0.0, 1.0, 0.0, -3.0, 3.0, -1.0), 6)
    -1.570796
    >>> nearest_turn(0.0, 1.0, 0.0, -1.0, 1.0, 0.0)
    -1.0
    """
    azimuth = math.atan2(y, x)      # branch_headings, on floats: each solve of a stream
    turn = 0.0
    if lateral_m != 0.0:
        turn = math.asin(min(1.0, max(-1.0, lateral_m / max(math.hypot(x, y), TINY))))
    best, nearest = low, math.inf
    for heading in (azimuth - turn, azimuth + math.pi + turn):
        candidate = low + (heading - low) % TURN
        while candidate <= high:
            distance = abs((candidate - preferred + math.pi) % TURN - math.pi)
            if distance < nearest:
                best, nearest = candidate, distance
            candidate += TURN
    return best
