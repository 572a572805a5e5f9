"""Joint positions as the arm file gives them <-> the geometric angles the solvers work in.

A joint's position is its URDF value: zero and direction are the arm file's. The solvers see
each joint through :meth:`Joint.geometric_view`: ``geometric = zero + direction * position``.
Every solve reads its seed here and turns its answer back here, so the rule lives once.
"""

from collections.abc import Sequence
import math

import numpy as np

from fabrik_ros.kinematics.aliases import FloatVector
from fabrik_ros.kinematics.description.joint import Joint
from fabrik_ros.kinematics.errors import TargetError
from fabrik_ros.kinematics.single.arm_model import ArmModel, RollPlane


class JointFrame:
    """Convert between joint positions and geometric angles for one arm's joints.

    :param joints: the arm's joints, config order
    :param model: the arm as the solvers see it (which joints yaw and pitch)
    """

    def __init__(self, joints: Sequence[Joint], model: ArmModel) -> None:
        self._joints = tuple(joints)
        self._names = ', '.join(j.name for j in self._joints)
        self._pitch_index = model.pitch_index
        # Per joint: limits, zero and direction, read as floats on every seeded solve.
        self._numbers = tuple((j.min_rad, j.max_rad, j.zero_rad, j.direction)
                              for j in self._joints)
        solved = ((0,) if model.yaw is not None else ()) + model.pitch_index
        self.solved_numbers = tuple((i, self._joints[i].zero_rad, self._joints[i].direction,
                                     self._joints[i].min_rad, self._joints[i].max_rad)
                                    for i in solved)
        """What turns a first try's yaw and pitches into positions: per joint its index,
        zero, direction and limits."""

    def geometric(self, positions: Sequence[float] | np.ndarray) -> list[float]:
        """Return the geometric angles of joint positions [rad]."""
        return [j.geometric(float(a)) for j, a in zip(self._joints, positions, strict=True)]

    def geometric_rows(self, positions: np.ndarray) -> np.ndarray:
        """Return the geometric angles of (N, n_joints) joint positions [rad]."""
        zero = np.array([j.zero_rad for j in self._joints])
        direction = np.array([j.direction for j in self._joints])
        return np.asarray(zero + direction * positions)

    def positions(self, geometric: Sequence[float]) -> list[float]:
        """Return the joint positions of geometric angles [rad] (:meth:`Joint.position`)."""
        return [float(j.position(a)) for j, a in zip(self._joints, geometric, strict=True)]

    def planar_angles(self, geometric: Sequence[float], plane: RollPlane) -> list[float]:
        """Return the planar chain's angles of geometric angles (the tool turn on the last)."""
        pitches = [geometric[i] for i in self._pitch_index]
        pitches[-1] += plane.tool_turn_rad
        return pitches

    def checked(self, name: str, angles: FloatVector) -> np.ndarray:
        """Return ``angles`` as a finite float array with one entry per joint.

        :raises TargetError: naming ``name``, if they are not finite or not one per joint
        """
        values = np.asarray(angles, dtype=float).reshape(-1)
        if values.shape != (len(self._joints),):
            raise TargetError(f'{name} has {values.size} values, need {len(self._joints)} '
                              f'(one per joint: {self._names})')
        if not np.all(np.isfinite(values)):
            raise TargetError(f'{name} = {values.tolist()!r}, every angle must be finite')
        return values

    def seed(self, seed: FloatVector) -> tuple[list[float], list[float]]:
        """Return a seed's positions clamped into the limits, and their geometric angles.

        A current pose may sit a hair outside the limits.

        :raises TargetError: if the seed is not finite or not one value per joint
        """
        read = self.seed_floats(seed)
        if read is None:
            read = self.seed_floats(self.checked('seed', seed))
            assert read is not None     # checked: flat, finite, one per joint
        return read

    def seed_floats(self, seed: FloatVector) -> tuple[list[float], list[float]] | None:
        """Return :meth:`seed`'s answer for a flat seed of finite numbers, else None.

        Every seeded solve reads its seed here first, as plain floats; None leaves the
        checks that name what is wrong to :meth:`seed`.
        """
        try:
            positions = list(map(float, seed))
        except (TypeError, ValueError):
            return None
        if len(positions) != len(self._joints):
            return None
        for index, (lowest, highest, _, _) in enumerate(self._numbers):
            value = positions[index]
            if not lowest <= value <= highest:
                if not math.isfinite(value):
                    return None
                positions[index] = lowest if value < lowest else highest
        geometric = [zero + direction * value
                     for value, (_, _, zero, direction) in zip(positions, self._numbers,
                                                               strict=True)]
        return positions, geometric
