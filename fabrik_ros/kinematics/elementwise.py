"""Primitives that take one value or a numpy array of values, so both solvers share them.

The single-target solver works on Python floats and complex numbers (fast for one value); the
batch solver works on numpy arrays with one row per target. The FABRIK passes, the joint
constraints, the start poses and the forward kinematics are each written once on top of these
helpers, which pick the scalar or the array form of each operation from the argument's type.
"""

import bisect
import cmath
import math
from typing import Any

import numpy as np

TINY = 1e-12
TURN = 2.0 * math.pi
"""A whole turn [rad]: angles that differ by it are one direction."""

Scalar = Any
"""A float, a complex, a Vec3, or a numpy array of floats or complex numbers (one per row)."""


def pick(condition: Scalar, when_true: Scalar, when_false: Scalar) -> Scalar:
    """Return ``when_true`` where ``condition`` holds, else ``when_false`` (row-wise for arrays).

    >>> pick(True, 1.0, 2.0), pick(np.array([True, False]), 1.0, 2.0).tolist()
    (1.0, [1.0, 2.0])
    """
    if isinstance(condition, np.ndarray):
        return np.where(condition, when_true, when_false)
    return when_true if condition else when_false


def unit_or(vector: Scalar, fallback: Scalar) -> Scalar:
    """Return ``vector`` scaled to unit length, or ``fallback`` where it has no length.

    >>> unit_or(3 + 4j, 1 + 0j)
    (0.6+0.8j)
    >>> unit_or(0j, 1j)
    1j
    """
    length = abs(vector)
    if isinstance(length, np.ndarray):
        usable = length > TINY
        if usable.all():
            return vector / length
        return np.where(usable, vector / np.where(usable, length, 1.0), fallback)
    return vector / length if length > TINY else fallback


def rotation(angle_rad: Scalar) -> Scalar:
    """Return the unit complex number(s) turning by ``angle_rad``.

    >>> rotation(0.0)
    (1+0j)
    """
    if isinstance(angle_rad, np.ndarray):
        turned = np.empty(angle_rad.shape, dtype=complex)
        turned.real, turned.imag = np.cos(angle_rad), np.sin(angle_rad)
        return turned
    return cmath.rect(1.0, angle_rad)


def phase(value: Scalar) -> Scalar:
    """Return the angle(s) of complex number(s) in (-pi, pi] [rad].

    >>> phase(1j) == math.pi / 2
    True
    """
    if isinstance(value, np.ndarray):
        return np.angle(value)
    return cmath.phase(value)


def interpolate(value: Scalar, xs: list[float], ys: list[float]) -> Scalar:
    """Return ys at ``value`` by linear interpolation over ascending xs (clamped at the ends).

    >>> interpolate(1.5, [1.0, 2.0], [10.0, 20.0]), interpolate(9.0, [1.0, 2.0], [10.0, 20.0])
    (15.0, 20.0)
    """
    if isinstance(value, np.ndarray):
        return np.interp(value, xs, ys)
    index = bisect.bisect_left(xs, value)
    if index == 0:
        return ys[0]
    if index == len(xs):
        return ys[-1]
    span = xs[index] - xs[index - 1]
    weight = (value - xs[index - 1]) / span if span > 0.0 else 0.0
    return ys[index - 1] + weight * (ys[index] - ys[index - 1])


def arccos(value: Scalar) -> Scalar:
    """Return the arc cosine [rad] of value(s) clipped into [-1, 1].

    >>> arccos(2.0)
    0.0
    """
    if isinstance(value, np.ndarray):
        return np.arccos(np.clip(value, -1.0, 1.0))
    return math.acos(min(1.0, max(-1.0, value)))


def wrap(angle_rad: Scalar) -> Scalar:
    """Return angle(s) wrapped into [-pi, pi).

    >>> round(wrap(3 * math.pi / 2), 6)
    -1.570796
    """
    return (angle_rad + math.pi) % TURN - math.pi
