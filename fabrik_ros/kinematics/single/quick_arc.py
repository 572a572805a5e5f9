"""The even-arc closed form for one target, on plain floats: the answer most solves take.

Most targets of a cold solve are met by the chain bent into an even arc in the plane that faces
them (closed_form.py; 90 % on the reference arm, 75 % on the SO-101). That path through the
general solver builds planes, vectors and candidate lists for each call; this is the same arc
on floats with every per-arm number read once, so a node answers the common target in a few
microseconds. It answers only when the arc is the answer the general solver would give: the
facing yaw within range, the target within the chain's length, bend ``any``, every angle in
its range and the tip within tolerance. Otherwise it returns None and the caller runs the
general solver, which tries the same arc first and then everything else.
"""

import cmath
from dataclasses import dataclass, field
import math

from fabrik_ros.kinematics.description.joint import Joint
from fabrik_ros.kinematics.elementwise import interpolate, TURN
from fabrik_ros.kinematics.single.planar_arm import PlanarArm


@dataclass(frozen=True)
class QuickArc:
    """The arc closed form of one arm at one roll.

    :param planar: the planar chain (its last link from the last pitch axis to the tool)
    :param yaw: the yaw joint's geometric view, or None for an arm that does not turn
    :param lateral_m: how far the arm's plane runs beside the yaw axis [m]
    :param base_xyz_m: the base point in the base frame [m]
    :param tolerance_m: the solver's tolerance [m]
    """

    planar: PlanarArm
    yaw: Joint | None
    lateral_m: float
    base_xyz_m: tuple[float, float, float]
    tolerance_m: float
    _chords: list[float] = field(init=False, repr=False, compare=False)
    _turns: list[float] = field(init=False, repr=False, compare=False)
    _hinges: list[tuple[float, float]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Read the arc table and every hinge's start and width once."""
        chords, turns = self.planar.arc_table
        object.__setattr__(self, '_chords', chords.tolist())
        object.__setattr__(self, '_turns', turns.tolist())
        object.__setattr__(self, '_hinges', [(c.min_rad, c.max_rad - c.min_rad)
                                             for c in self.planar.chain.constraints])

    def solve(self, x: float, y: float, z: float) -> tuple[float, list[float], complex] | None:
        """Return the yaw, the chain's angles and its tip in the plane [rad, m], or None.

        The yaw and every angle are turned into their ranges (by whole turns), so a joint's
        position follows from them without wrapping.

        :param x: the target in the base frame [m], finite (checked by the caller)
        """
        bx, by, bz = self.base_xyz_m
        x, y, z = x - bx, y - by, z - bz
        yaw, along = self._facing(x, y)
        if yaw is None:
            return None
        chain = self.planar.chain
        aim = complex(along, z) - chain.base
        distance = abs(aim)
        if distance > chain.total_length or distance < 1e-12:
            return None
        turn = (-1.0 if aim.real >= 0.0 else 1.0) * interpolate(distance, self._chords,
                                                                 self._turns)
        step = cmath.rect(1.0, turn)
        direction, chord = 1 + 0j, 0j
        for length in chain.lengths:
            chord += direction * length
            direction *= step
        reach = abs(chord)
        if abs(distance - reach) > self.tolerance_m:
            return None
        angle = cmath.phase(aim) - cmath.phase(chord)
        angles = []
        for low, width in self._hinges:
            offset = (angle - low) % TURN
            if offset > width:
                return None
            angles.append(low + offset)
            angle = turn
        return yaw, angles, chain.base + aim * (reach / distance)

    def _facing(self, x: float, y: float) -> tuple[float | None, float]:
        """Return the first plane's yaw (None: not one the arc can take) and the target along it.

        The first plane of the general solver (arm_ik.first_plane): facing the target when
        the yaw range allows, else reaching over the top to it (the target behind, at a
        negative distance along the plane), else a yaw limit, which is left to the solver.
        """
        lateral = self.lateral_m
        if self.yaw is None:
            return (0.0 if abs(y - lateral) <= 1e-12 else None), x
        distance = math.hypot(x, y)
        if distance <= abs(lateral):
            return None, 0.0
        azimuth = math.atan2(y, x)
        along, turn = distance, 0.0
        if lateral != 0.0:
            turn = math.asin(lateral / distance)
            along = math.sqrt(distance * distance - lateral * lateral)
        low, high = self.yaw.min_rad, self.yaw.max_rad
        facing = low + (azimuth - turn - low) % TURN
        if facing <= high:
            return facing, along
        over = low + (azimuth + math.pi + turn - low) % TURN
        return (over if over <= high else None), -along
