"""Joint constraints applied while FABRIK places each bone: free joints, arcs and hinges.

Every constraint answers two questions. ``limit(direction, reference)`` is asked by the
backward (base to tip) pass: the bone's wanted ``direction`` is turned, if needed, so that its
angle from the previous bone's ``reference`` lies in the joint range. ``limit_reverse`` is asked
by the forward (tip to base) pass, which places bones inward: there the outer bone is known and
the angle runs the other way, so the range is mirrored. Planar limits take one direction or a
numpy array of them (one per target), so the batch solver applies the very same rule.
"""

import cmath
from collections.abc import Callable
from dataclasses import dataclass, field
import math
from typing import Protocol, TypeVar

from fabrik_ros.kinematics.elementwise import pick, Scalar, TURN
from fabrik_ros.kinematics.vec3 import Vec3

D = TypeVar('D')


class Constraint(Protocol[D]):
    """What the FABRIK passes ask of a joint."""

    def limit(self, direction: D, reference: D) -> D:
        """Return ``direction`` turned into the joint range measured from ``reference``."""

    def limit_reverse(self, direction: D, reference: D) -> D:
        """Return ``direction`` turned so that ``reference`` is in range measured from it."""

    @property
    def min_rad(self) -> float:
        """Return the lower end of the joint range [rad]."""

    @property
    def max_rad(self) -> float:
        """Return the upper end of the joint range [rad]."""

    def contains(self, angle_rad: float, *, slack_rad: float = 1e-9) -> bool:
        """Return True when ``angle_rad`` lies in the range."""


class Free:
    """An unconstrained joint: any direction is allowed (the range is the whole circle)."""

    min_rad = -math.pi
    max_rad = math.pi

    def contains(self, angle_rad: float, *, slack_rad: float = 1e-9) -> bool:
        """Return True: every angle is allowed."""
        return True

    def limit(self, direction: D, reference: D) -> D:
        """Return ``direction`` unchanged."""
        return direction

    def limit_reverse(self, direction: D, reference: D) -> D:
        """Return ``direction`` unchanged."""
        return direction


FREE = Free()


def into_range(constraint: Constraint[complex], angle_rad: Scalar, *,
               slack_rad: float = 1e-9) -> Scalar:
    """Return ``angle_rad`` turned by whole turns into the constraint's range, where it fits.

    A bone direction fixes its angle only up to whole turns, and a phase reads in (-pi, pi]: a
    joint folded back to pi on a range of [0, pi] can read -pi, which a later clamp would move
    to the other end. An angle outside the range up to whole turns is returned as given, so
    its nearer limit stays the nearer. Arrays are turned row by row.

    >>> round(into_range(Hinge2D(0.0, math.pi), -math.pi), 6)
    3.141593
    >>> into_range(Hinge2D(-1.0, 1.0), -1.5)
    -1.5
    """
    turned = constraint.min_rad - slack_rad + (angle_rad - constraint.min_rad + slack_rad) % TURN
    inside = constraint.contains(angle_rad, slack_rad=slack_rad)
    return pick(inside, turned, angle_rad)


@dataclass(frozen=True)
class Arc:
    """A range of planar rotations, as unit complex numbers, tested without trigonometry."""

    min_rad: float
    max_rad: float
    to_centre: complex = field(init=False)
    cos_half: float = field(init=False)
    at_min: complex = field(init=False)
    at_max: complex = field(init=False)

    def __post_init__(self) -> None:
        """Precompute the rotation to the arc centre and its half width."""
        centre = 0.5 * (self.min_rad + self.max_rad)
        object.__setattr__(self, 'to_centre', cmath.rect(1.0, -centre))
        object.__setattr__(self, 'cos_half', math.cos(0.5 * (self.max_rad - self.min_rad)))
        object.__setattr__(self, 'at_min', cmath.rect(1.0, self.min_rad))
        object.__setattr__(self, 'at_max', cmath.rect(1.0, self.max_rad))

    def clamp(self, direction: D, reference: D) -> D:
        """Return ``direction`` turned onto the nearer end of the arc if it lies outside.

        The rotation from ``reference`` to ``direction``, turned to the arc centre, lies inside
        exactly when its cosine is at least the cosine of the half width; outside, the sign of
        its sine tells the nearer end. Works on one direction or an array of them.
        """
        turned = direction * reference.conjugate()  # type: ignore[attr-defined]
        centred = turned * self.to_centre
        end = pick(centred.imag >= 0.0, self.at_max, self.at_min)
        return pick(centred.real >= self.cos_half, direction, reference * end)  # type: ignore


@dataclass(frozen=True)
class Hinge2D:
    """A planar hinge: the bone turns from the previous one by an angle in [min, max] [rad].

    Directions are unit complex numbers; positive angles turn counter-clockwise.

    >>> hinge = Hinge2D(-math.pi / 2, math.pi / 2)
    >>> turned = hinge.limit(-1 + 1e-3j, 1 + 0j)
    >>> round(turned.real, 9), round(turned.imag, 9)
    (0.0, 1.0)
    >>> hinge.limit(0.6 + 0.8j, 1 + 0j)
    (0.6+0.8j)
    """

    min_rad: float
    max_rad: float
    arc: Arc = field(init=False, repr=False, compare=False)
    reverse_arc: Arc = field(init=False, repr=False, compare=False)
    _span: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the range and precompute both arcs."""
        if not (math.isfinite(self.min_rad) and math.isfinite(self.max_rad)):
            raise ValueError(f'hinge range [{self.min_rad!r}, {self.max_rad!r}] must be finite')
        if not self.min_rad < self.max_rad <= self.min_rad + TURN:
            raise ValueError(f'hinge range [{self.min_rad!r}, {self.max_rad!r}] must satisfy '
                             'min < max <= min + 2 pi')
        object.__setattr__(self, 'arc', Arc(self.min_rad, self.max_rad))
        object.__setattr__(self, '_span', self.max_rad - self.min_rad)
        object.__setattr__(self, 'reverse_arc', Arc(-self.max_rad, -self.min_rad))

    def limit(self, direction: complex, reference: complex) -> complex:
        """Return ``direction`` turned into [min, max] from ``reference``."""
        return self.arc.clamp(direction, reference)

    def limit_reverse(self, direction: complex, reference: complex) -> complex:
        """Return ``direction`` turned so that ``reference`` lies in [min, max] from it."""
        return self.reverse_arc.clamp(direction, reference)

    def contains(self, angle_rad: float, *, slack_rad: float = 1e-9) -> bool:
        """Return True when ``angle_rad`` lies in the range up to whole turns (with a slack).

        A turn is a direction: the range is an arc of the circle, which may cross +-pi (a
        joint's zero shifts it anywhere). Given an array of angles, answer with an array of
        bools (one per angle).

        >>> Hinge2D(2.0, 4.0).contains(-3.0), Hinge2D(2.0, 4.0).contains(0.0)
        (True, False)
        """
        inside: bool = (angle_rad - self.min_rad + slack_rad) % TURN <= self._span + 2 * slack_rad
        return inside


@dataclass(frozen=True)
class Hinge3D:
    """A hinge about a fixed world axis.

    The bone stays normal to ``axis`` and turns from the previous bone by an angle in
    [min, max] [rad], positive by the right-hand rule.

    >>> hinge = Hinge3D(Vec3(0.0, 0.0, 1.0), -math.pi / 4, math.pi / 4)
    >>> d = hinge.limit(Vec3(0.0, 1.0, 0.0), Vec3(1.0, 0.0, 0.0))
    >>> round(d.x, 6), round(d.y, 6), round(d.z, 6)
    (0.707107, 0.707107, 0.0)
    """

    axis: Vec3
    min_rad: float
    max_rad: float
    _planar: Hinge2D = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Normalise the axis and keep the planar hinge that does the angle work."""
        length = abs(self.axis)
        if not math.isfinite(length) or length < 1e-12:
            raise ValueError(f'hinge axis {tuple(self.axis)!r} must be a finite non-zero vector')
        object.__setattr__(self, 'axis', Vec3(*self.axis) / length)
        object.__setattr__(self, '_planar', Hinge2D(self.min_rad, self.max_rad))

    def contains(self, angle_rad: float, *, slack_rad: float = 1e-9) -> bool:
        """Return True when ``angle_rad`` lies in the range (with a rounding slack)."""
        return self._planar.contains(angle_rad, slack_rad=slack_rad)

    def limit(self, direction: Vec3, reference: Vec3) -> Vec3:
        """Return ``direction`` in the hinge plane, turned into range from ``reference``."""
        return self._apply(direction, reference, self._planar.limit)

    def limit_reverse(self, direction: Vec3, reference: Vec3) -> Vec3:
        """Return ``direction`` in the hinge plane with ``reference`` in range from it."""
        return self._apply(direction, reference, self._planar.limit_reverse)

    def _apply(self, direction: Vec3, reference: Vec3,
               planar_limit: Callable[[complex, complex], complex]) -> Vec3:
        """Express both vectors in the hinge plane, limit there, and map back to 3D."""
        e1 = _in_plane(reference, self.axis)
        if e1 is None:
            e1 = _any_normal(self.axis)
        e2 = self.axis.cross(e1)
        wanted = complex(direction.dot(e1), direction.dot(e2))
        wanted = wanted / abs(wanted) if abs(wanted) > 1e-12 else 1 + 0j
        limited = complex(planar_limit(wanted, 1 + 0j))
        return e1 * limited.real + e2 * limited.imag


def _in_plane(vector: Vec3, axis: Vec3) -> Vec3 | None:
    """Return the unit part of ``vector`` normal to ``axis``, or None if it has none."""
    normal = vector - axis * vector.dot(axis)
    length = abs(normal)
    return normal / length if length > 1e-12 else None


def _any_normal(axis: Vec3) -> Vec3:
    """Return some unit vector normal to ``axis``."""
    helper = Vec3(1.0, 0.0, 0.0) if abs(axis.x) < 0.9 else Vec3(0.0, 1.0, 0.0)
    normal = _in_plane(helper, axis)
    assert normal is not None
    return normal
