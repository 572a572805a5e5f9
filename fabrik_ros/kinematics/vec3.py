"""A small immutable 3-vector with the operators the FABRIK passes use.

Planar chains use Python ``complex`` numbers for points and directions; this type gives 3D
chains the same operators (``+``, ``-``, ``*`` by a scalar, ``/`` by a scalar, ``abs``), so the
passes in fabrik.py are written once for both.
"""

import math
from typing import NamedTuple


class Vec3(NamedTuple):
    """A point or direction in 3D [m or unitless].

    >>> abs(Vec3(3.0, 0.0, 4.0))
    5.0
    >>> Vec3(1.0, 2.0, 3.0) - Vec3(1.0, 1.0, 1.0)
    Vec3(x=0.0, y=1.0, z=2.0)
    """

    x: float
    y: float
    z: float

    def __add__(self, other: object) -> 'Vec3':
        """Return the component-wise sum."""
        assert isinstance(other, Vec3)
        return Vec3(self.x + other.x, self.y + other.y, self.z + other.z)

    def __sub__(self, other: 'Vec3') -> 'Vec3':
        """Return the component-wise difference."""
        return Vec3(self.x - other.x, self.y - other.y, self.z - other.z)

    def __mul__(self, scale: object) -> 'Vec3':
        """Return the vector scaled by a float."""
        assert isinstance(scale, (int, float))
        return Vec3(self.x * scale, self.y * scale, self.z * scale)

    def __rmul__(self, scale: object) -> 'Vec3':
        """Return the vector scaled by a float (scalar on the left)."""
        return self.__mul__(scale)

    def __truediv__(self, scale: float) -> 'Vec3':
        """Return the vector divided by a float."""
        return Vec3(self.x / scale, self.y / scale, self.z / scale)

    def __neg__(self) -> 'Vec3':
        """Return the opposite vector."""
        return Vec3(-self.x, -self.y, -self.z)

    def __abs__(self) -> float:
        """Return the Euclidean length."""
        return math.sqrt(self.x * self.x + self.y * self.y + self.z * self.z)

    def dot(self, other: 'Vec3') -> float:
        """Return the scalar product."""
        return self.x * other.x + self.y * other.y + self.z * other.z

    def cross(self, other: 'Vec3') -> 'Vec3':
        """Return the vector product ``self x other``."""
        return Vec3(self.y * other.z - self.z * other.y,
                    self.z * other.x - self.x * other.z,
                    self.x * other.y - self.y * other.x)
