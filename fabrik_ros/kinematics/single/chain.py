"""A general FABRIK chain: a fixed base, bone lengths, and one constraint per joint.

Planar chains hold points and directions as Python ``complex`` numbers (x + iy); spatial chains
hold :class:`Vec3`. The solver in fabrik.py treats both alike.
"""

import cmath
from collections.abc import Sequence
from dataclasses import dataclass, field
import math
from typing import Any, Generic, TypeVar

from fabrik_ros.kinematics.elementwise import phase, rotation, Scalar
from fabrik_ros.kinematics.single.constraints import Constraint, FREE, Free, Hinge2D, Hinge3D
from fabrik_ros.kinematics.vec3 import Vec3

P = TypeVar('P', complex, Vec3)


@dataclass(frozen=True)
class Chain(Generic[P]):
    """Bones hanging off a fixed base; joint i sits at the start of bone i.

    :param base: position of the root joint [m]
    :param base_direction: unit direction the first joint's limits are measured from
    :param lengths: bone lengths, base bone first [m]
    :param constraints: one per joint (``FREE``, :class:`Hinge2D` or :class:`Hinge3D`)
    """

    base: P
    base_direction: P
    lengths: tuple[float, ...]
    constraints: tuple[Constraint[Any], ...]
    total_length: float = field(init=False)
    unconstrained: bool = field(init=False)

    def __post_init__(self) -> None:
        """Check lengths and constraints and cache the chain's reach."""
        if not self.lengths:
            raise ValueError('a chain needs at least one bone')
        if len(self.constraints) != len(self.lengths):
            raise ValueError(f'{len(self.constraints)} constraints for {len(self.lengths)} '
                             'bones, need one per bone')
        for index, length in enumerate(self.lengths):
            if not math.isfinite(length) or length <= 0.0:
                raise ValueError(f'lengths[{index}] = {length!r}, must be finite and > 0')
        object.__setattr__(self, 'total_length', math.fsum(self.lengths))
        object.__setattr__(self, 'unconstrained',
                           all(isinstance(c, Free) for c in self.constraints))

    @staticmethod
    def planar(lengths: Sequence[float], limits_rad: Sequence[tuple[float, float] | None] = (),
               *, base: tuple[float, float] = (0.0, 0.0),
               base_direction_rad: float = 0.0) -> 'Chain[complex]':
        """Build a 2D chain; ``limits_rad[i]`` is joint i's (min, max) or None for free.

        Joint i's angle is bone i's turn from bone i-1 (from ``base_direction_rad`` for i = 0).

        >>> chain = Chain.planar([1.0, 1.0], [(0.0, math.pi), None])
        >>> chain.total_length
        2.0
        """
        limits = list(limits_rad) or [None] * len(lengths)
        constraints = tuple(FREE if lim is None else Hinge2D(*lim) for lim in limits)
        return Chain(complex(*base), cmath.rect(1.0, base_direction_rad),
                     tuple(float(x) for x in lengths), constraints)

    @staticmethod
    def spatial(lengths: Sequence[float], *, base: Sequence[float] = (0.0, 0.0, 0.0),
                base_direction: Sequence[float] = (1.0, 0.0, 0.0),
                hinges: Sequence[tuple[Sequence[float], float, float] | None] = ()
                ) -> 'Chain[Vec3]':
        """Build a 3D chain; ``hinges[i]`` is joint i's (axis, min_rad, max_rad) or None."""
        direction = Vec3(*map(float, base_direction))
        if not abs(direction) > 1e-12:
            raise ValueError(f'base_direction {tuple(base_direction)!r} must be non-zero')
        limits = list(hinges) or [None] * len(lengths)
        constraints = tuple(FREE if h is None else Hinge3D(Vec3(*map(float, h[0])), h[1], h[2])
                            for h in limits)
        return Chain(Vec3(*map(float, base)), direction / abs(direction),
                     tuple(float(x) for x in lengths), constraints)

    def straight(self) -> tuple[P, ...]:
        """Return the joint positions of the chain stretched along its base direction."""
        return self.stretched(self.base_direction)

    def curled(self, turn_rad: float = 0.3) -> tuple[P, ...]:
        """Return an arc turning by ``turn_rad`` per joint, symmetric about the base direction.

        The default start pose: a straight chain cannot leave a target on its own axis, and
        the arc keeps every inner joint off the base direction's axis.

        >>> [round(abs(p), 6) for p in Chain.planar([1.0, 1.0]).curled(math.pi / 2)]
        [0.0, 1.0, 1.414214]
        """
        forward = self.base_direction
        sideways = _normal(forward)
        points = [self.base]
        first = -0.5 * turn_rad * (len(self.lengths) - 1)
        for index, length in enumerate(self.lengths):
            angle = first + turn_rad * index
            direction = forward * math.cos(angle) + sideways * math.sin(angle)
            points.append(points[-1] + direction * length)
        return tuple(points)

    def stretched(self, direction: P) -> tuple[P, ...]:
        """Return the joint positions of the chain stretched along a unit ``direction``."""
        points = [self.base]
        for length in self.lengths:
            points.append(points[-1] + direction * length)
        return tuple(points)


def _normal(direction: P) -> P:
    """Return a unit vector normal to a unit ``direction`` (counter-clockwise in 2D)."""
    if isinstance(direction, complex):
        return direction * 1j
    helper = Vec3(0.0, 0.0, 1.0) if abs(direction.z) < 0.9 else Vec3(1.0, 0.0, 0.0)
    normal = helper - direction * helper.dot(direction)
    return normal / abs(normal)


def planar_points(chain: 'Chain[complex]', angles_rad: Sequence[Scalar]) -> tuple[Scalar, ...]:
    """Return a planar chain's joint positions for relative joint angles [rad].

    Each angle may be one float or an array (one row per pose); the points follow suit.

    >>> points = planar_points(Chain.planar([1.0, 1.0]), [0.0, math.pi / 2])
    >>> [complex(round(p.real, 9), round(p.imag, 9)) for p in points]
    [0j, (1+0j), (1+1j)]
    """
    return planar_pose(chain, angles_rad)[0]


def planar_pose(chain: 'Chain[complex]',
                angles_rad: Sequence[Scalar]) -> tuple[tuple[Scalar, ...], tuple[Scalar, ...]]:
    """Return a planar chain's joint positions and bone directions for relative angles [rad]."""
    points = [chain.base]
    directions = []
    direction = chain.base_direction
    for length, angle in zip(chain.lengths, angles_rad, strict=True):
        direction = direction * rotation(angle)
        directions.append(direction)
        points.append(points[-1] + direction * length)
    return tuple(points), tuple(directions)


def planar_angles(chain: 'Chain[complex]', directions: Sequence[Scalar]) -> tuple[Scalar, ...]:
    """Return the relative joint angles [rad] of a planar chain's bone directions (or arrays)."""
    angles = []
    previous = chain.base_direction
    for direction in directions:
        angles.append(phase(direction * previous.conjugate()))
        previous = direction
    return tuple(angles)
