"""A joint trajectory as polynomial segments over time, sampled as ros2_control's JTC samples it.

Each segment joins two points and takes its degree from what *both* ends give: positions only
-> linear, with velocities -> cubic, with velocities and accelerations -> quintic (a point with
accelerations but no velocities is refused before it gets here). The first segment starts at
the pose the trajectory starts from, with velocity and acceleration 0 where the first point
gives them, so it has the first point's degree; a first point at time 0 has no such segment
(the sample jumps to it at the start, as the JTC's does). Before the start the start pose is
held, after the end the last point.

:func:`peaks` finds, per segment and joint, the lowest and highest position and the highest
speed of the polynomial (exactly: at the ends and at the real roots of its derivative), which
the goal-time checks compare with the joint limits and speed limits.
"""

import bisect
from dataclasses import dataclass
from functools import cached_property
import math
from typing import Optional

import numpy as np

Array = np.ndarray
_ORDER = 6                 # coefficients per segment and joint: up to the quintic's t**5
_POWERS = np.arange(_ORDER, dtype=float)


@dataclass(frozen=True)
class Spline:
    """Polynomial segments of every column (joint) of a trajectory, in local segment time.

    :param knots_s: segment boundaries [s] since the start, shape (segments + 1,)
    :param coefficients: shape (segments, joints, 6): position = sum c[k] * t**k, t the time
        since the segment's first knot [s]
    :param before: the pose held before the start [rad]
    :param after: the pose held after the end (the last point) [rad]
    :param towards: per segment, the index of the goal's point it moves towards
    :param point_count: the goal's number of points (the index after the end)
    """

    knots_s: Array
    coefficients: Array
    before: Array
    after: Array
    towards: Array
    point_count: int

    @property
    def end_s(self) -> float:
        """Return the time of the last point [s] since the start."""
        return float(self.knots_s[-1]) if len(self.knots_s) else 0.0

    def segment(self, at_s: float) -> Optional[int]:
        """Return the segment running at ``at_s`` [s since the start], None before or after."""
        knots = self._knots
        if len(knots) < 2 or at_s < knots[0] or at_s >= knots[-1]:
            return None
        return min(bisect.bisect_right(knots, at_s) - 1, len(knots) - 2)

    @cached_property
    def _knots(self) -> list[float]:
        return [float(k) for k in self.knots_s]

    def sample(self, at_s: float) -> Array:
        """Return every column's position [rad] at ``at_s`` [s since the start]."""
        index = self.segment(at_s)
        if index is None:
            return self.before if at_s < 0.0 else self.after
        local = at_s - self._knots[index]
        result: Array = self.coefficients[index] @ (local ** _POWERS)
        return result

    def sample_derivative(self, at_s: float, order: int) -> Array:
        """Return every column's ``order``-th time derivative at ``at_s`` (0 outside segments)."""
        index = self.segment(at_s)
        if index is None:
            return np.zeros(self.coefficients.shape[1])
        local = at_s - float(self.knots_s[index])
        derived = _derive(self.coefficients[index], order)
        result = np.zeros(self.coefficients.shape[1])
        for power in range(derived.shape[1] - 1, -1, -1):
            result = result * local + derived[:, power]
        return result

    def towards_point(self, at_s: float) -> int:
        """Return the index of the point the trajectory moves towards at ``at_s`` (JTC's)."""
        index = self.segment(at_s)
        if index is not None:
            return int(self.towards[index])
        return 0 if at_s < 0.0 else self.point_count


def build_spline(start: Optional[Array], times_s: Array, positions: Array,
                 velocities: Optional[Array], accelerations: Optional[Array]) -> Spline:
    """Return the spline through the points, from ``start`` if given.

    :param start: the pose the trajectory starts from [rad], shape (joints,); None: it starts
        at the first point (for checks that know no start pose)
    :param times_s: each point's time from the start [s], strictly increasing, >= 0
    :param positions: shape (points, joints) [rad]
    :param velocities: shape (points, joints) [rad/s], NaN rows for points without them; None
        when no point has any
    :param accelerations: as ``velocities`` [rad/s**2]
    """
    count, joints = positions.shape
    vel = np.full((count, joints), np.nan) if velocities is None else velocities
    acc = np.full((count, joints), np.nan) if accelerations is None else accelerations
    knots, pos, towards = times_s, positions, np.arange(1, count)
    if start is not None and times_s[0] > 0.0:
        zero = np.zeros((1, joints))
        knots = np.concatenate(([0.0], times_s))
        pos = np.concatenate((start[None, :], positions))
        vel = np.concatenate((np.where(np.isnan(vel[:1]), np.nan, zero), vel))
        acc = np.concatenate((np.where(np.isnan(acc[:1]), np.nan, zero), acc))
        towards = np.arange(0, count)
    durations = np.diff(knots)
    # Numbers a goal may hold can overflow here (unused branches of np.where too): the goal
    # checker refuses any spline that is not finite, so no warning need reach the log.
    with np.errstate(all='ignore'):
        coefficients = _coefficients(pos, vel, acc, durations)
    before = positions[0] if start is None else start
    return Spline(knots, coefficients, before.copy(), positions[-1].copy(), towards, count)


def _coefficients(pos: Array, vel: Array, acc: Array, durations: Array) -> Array:
    """Return shape (segments, joints, 6): each segment's polynomial from both of its ends."""
    segments, joints = len(durations), pos.shape[1]
    result = np.zeros((segments, joints, _ORDER))
    if not segments:
        return result
    p0, p1 = pos[:-1], pos[1:]
    v0, v1, a0, a1 = vel[:-1], vel[1:], acc[:-1], acc[1:]
    t = durations[:, None] * np.ones((1, joints))
    has_velocity = ~np.isnan(v0[:, :1]) & ~np.isnan(v1[:, :1])
    has_acceleration = has_velocity & ~np.isnan(a0[:, :1]) & ~np.isnan(a1[:, :1])
    cubic = np.broadcast_to(has_velocity & ~has_acceleration, p0.shape)
    quintic = np.broadcast_to(has_acceleration, p0.shape)
    v0, v1 = np.nan_to_num(v0), np.nan_to_num(v1)
    a0, a1 = np.nan_to_num(a0), np.nan_to_num(a1)
    d = p1 - p0
    result[:, :, 0] = p0
    result[:, :, 1] = d / t
    result[:, :, 1] = np.where(cubic | quintic, v0, result[:, :, 1])
    # Cubic: p0, v0 at 0 and p1, v1 at t (the duration).
    result[:, :, 2] = np.where(cubic, (3.0 * d - (2.0 * v0 + v1) * t) / t**2, 0.0)
    result[:, :, 3] = np.where(cubic, (-2.0 * d + (v0 + v1) * t) / t**3, 0.0)
    # Quintic: p, v, a at both ends.
    q2 = 0.5 * a0
    q3 = (20.0 * d - (8.0 * v1 + 12.0 * v0) * t - (3.0 * a0 - a1) * t**2) / (2.0 * t**3)
    q4 = (-30.0 * d + (14.0 * v1 + 16.0 * v0) * t + (3.0 * a0 - 2.0 * a1) * t**2) / (2.0 * t**4)
    q5 = (12.0 * d - 6.0 * (v1 + v0) * t - (a0 - a1) * t**2) / (2.0 * t**5)
    for power, value in ((2, q2), (3, q3), (4, q4), (5, q5)):
        result[:, :, power] = np.where(quintic, value, result[:, :, power])
    return result


def _derive(coefficients: Array, order: int) -> Array:
    """Return the coefficients (rows, k) of the ``order``-th derivative of each row."""
    result = coefficients
    for _ in range(order):
        powers = np.arange(1, result.shape[-1])
        result = result[..., 1:] * powers
    return result


@dataclass(frozen=True)
class Peaks:
    """Per segment and joint (arrays of shape (segments, joints)): extremes and their times.

    Times are since the trajectory's start [s].
    """

    low: Array
    low_s: Array
    high: Array
    high_s: Array
    speed: Array
    speed_s: Array


def peaks(spline: Spline, *, within: Optional[tuple[Array, Array, Array]] = None) -> Peaks:
    """Return each segment's lowest and highest position and highest speed, per joint.

    :param within: per joint the lowest and highest position [rad] and the highest speed
        [rad/s] that matter: where a segment's Bernstein hull (which holds the curve) keeps
        inside them, its roots are not sought and the hull's bounds are returned instead (no
        nearer the limits than the truth); None: exact everywhere
    """
    coefficients = spline.coefficients
    segments, joints, _ = coefficients.shape
    durations = np.diff(spline.knots_s)[:, None] * np.ones((1, joints))
    # In u = t / T on [0, 1] the coefficients are positions: better conditioned roots.
    scaled = coefficients * durations[:, :, None] ** np.arange(_ORDER)
    rows = scaled.reshape(-1, _ORDER)
    velocity = _derive(rows, 1)
    flat_t = durations.reshape(-1)
    hull, speed_hull = _hull(rows), _hull(velocity)
    inside = np.zeros(len(rows), dtype=bool)
    fast_inside = np.zeros(len(rows), dtype=bool)
    if within is not None:
        low_limit, high_limit, speed_limit = (np.tile(np.asarray(v, dtype=float), segments)
                                              for v in within)
        inside = (hull[0] >= low_limit) & (hull[1] <= high_limit)
        fast_inside = np.maximum(-speed_hull[0], speed_hull[1]) / flat_t <= speed_limit
    low, low_u, high, high_u = _extremes(rows, _candidates(velocity, skip=inside))
    low, high = np.where(inside, hull[0], low), np.where(inside, hull[1], high)
    speed_low, speed_low_u, speed_high, speed_high_u = _extremes(
        velocity, _candidates(_derive(rows, 2), skip=fast_inside))
    speed_low = np.where(fast_inside, speed_hull[0], speed_low)
    speed_high = np.where(fast_inside, speed_hull[1], speed_high)
    faster_down = -speed_low > speed_high
    speed = np.where(faster_down, -speed_low, speed_high) / flat_t
    speed_u = np.where(faster_down, speed_low_u, speed_high_u)
    first = (spline.knots_s[:-1, None] * np.ones((1, joints))).reshape(-1)

    def shaped(values: Array) -> Array:
        return values.reshape(segments, joints)

    return Peaks(shaped(low), shaped(first + low_u * flat_t), shaped(high),
                 shaped(first + high_u * flat_t), shaped(speed),
                 shaped(first + speed_u * flat_t))


def _hull(rows: Array) -> tuple[Array, Array]:
    """Return per row the least and greatest Bernstein coefficient: bounds of it on [0, 1]."""
    degree = rows.shape[1] - 1
    change = np.zeros((degree + 1, degree + 1))
    for i in range(degree + 1):
        for k in range(i + 1):
            change[i, k] = math.comb(i, k) / math.comb(degree, k)
    bernstein = rows @ change.T
    return bernstein.min(axis=1), bernstein.max(axis=1)


def _candidates(derivative: Array, *, skip: Array) -> Array:
    """Return per row the u in [0, 1] where a polynomial with this derivative may peak.

    The ends and the real parts of the derivative's roots (clipped into [0, 1]): a candidate
    that is no extreme is harmless, since the polynomial is then evaluated there. Rows in
    ``skip`` get the ends only.
    """
    rows, size = derivative.shape
    result = np.full((rows, size + 1), 0.0)
    result[:, 1] = 1.0
    scale = np.abs(derivative).max(axis=1, initial=0.0)
    significant = np.abs(derivative) > 1e-12 * scale[:, None]
    top = np.where(significant.any(axis=1),
                   size - 1 - np.argmax(significant[:, ::-1], axis=1), 0)
    for degree in range(1, size):
        chosen = np.nonzero((top == degree) & ~skip)[0]
        if not chosen.size:
            continue
        leading = derivative[chosen, degree:degree + 1]
        companion = np.zeros((chosen.size, degree, degree))
        companion[:, np.arange(1, degree), np.arange(degree - 1)] = 1.0
        companion[:, :, -1] = -derivative[chosen, :degree] / leading
        roots = np.linalg.eigvals(companion)
        result[chosen, 2:2 + degree] = np.clip(roots.real, 0.0, 1.0)
    return result


def _extremes(rows: Array, candidates: Array) -> tuple[Array, Array, Array, Array]:
    """Return the lowest value, its u, the highest value and its u of each row's polynomial."""
    values = np.zeros(candidates.shape)
    for power in range(rows.shape[1] - 1, -1, -1):
        values = values * candidates + rows[:, power:power + 1]
    lowest, highest = np.argmin(values, axis=1), np.argmax(values, axis=1)
    index = np.arange(len(rows))
    return (values[index, lowest], candidates[index, lowest],
            values[index, highest], candidates[index, highest])
