"""The two answers most solves take, on plain floats: a cold target's arc, a seed's steps.

A node solves one target at a time, hundreds a second: a clicked or dragged target (cold, or
seeded after a pause) and the targets of a stream (each seeded from the last answer). The
general solver's first try for a cold target is the even arc in the plane facing it
(quick_arc.py), and for a seeded one the seed's least-motion steps in the plane nearest the
seed's yaw (seed_step.py). Through the general solver each try costs the building of planes,
vectors and candidate lists; here the same try runs on floats with every per-arm number read
once. It answers only where the general solver would answer with that same try, and otherwise
returns None (the caller then runs the general solver, which tries it again and goes on).
"""

from collections.abc import Sequence
import math
from math import isfinite
from typing import Any

import numpy as np

from fabrik_ros.kinematics.description.joint import Joint
from fabrik_ros.kinematics.elementwise import wrap
from fabrik_ros.kinematics.options import SolverOptions
from fabrik_ros.kinematics.reckoning import RECKONING_M
from fabrik_ros.kinematics.single.arm_ik import plane_coordinates
from fabrik_ros.kinematics.single.arm_model import ArmModel, RollPlane
from fabrik_ros.kinematics.single.quick_arc import QuickArc
from fabrik_ros.kinematics.single.results import IkResult, StopReason
from fabrik_ros.kinematics.single.seed_step import step_to
from fabrik_ros.kinematics.single.yaw_branches import branch_headings, turns_within


class QuickSolver:
    """The arc of a cold solve and the steps of a seeded one, for one arm and its options.

    :param joints: the arm's joints (positions: the arm file's convention)
    :param model: the arm as the solvers see it
    :param options: the solver options (their tolerance)
    """

    def __init__(self, joints: tuple[Joint, ...], model: ArmModel,
                 options: SolverOptions) -> None:
        """Read every per-arm number the two tries use."""
        self._joints = joints
        self._model = model
        self._tolerance = options.tolerance_m
        self._limits = [(j.min_rad, j.max_rad, j.zero_rad, j.direction) for j in joints]
        self._home = [j.home_rad for j in joints]
        self._set = [(index, *self._limits[index]) for index
                     in ((0,) if model.yaw is not None else ()) + model.pitch_index]
        self._home_plane = model.plane_for(model.roll_of(model.home))
        self._arc = QuickArc(self._home_plane.planar, model.yaw, self._home_plane.lateral_m,
                             model.offsets.base_xyz_m, options.tolerance_m)

    def cold(self, target: Any) -> IkResult | None:
        """Return the even-arc answer of a cold solve, or None."""
        goal = _coordinates(target)
        if goal is None:
            return None
        found = self._arc.solve(*goal)
        if found is None:
            return None
        yaw, chain_angles, tip = found
        return self._answer(goal, list(self._home), yaw, chain_angles, tip, self._home_plane)

    def seeded(self, target: Any, seed: Any) -> IkResult | None:
        """Return the seed moved onto the target by least joint motion, or None."""
        goal = _coordinates(target)
        start = self._positions(seed)
        if goal is None or start is None:
            return None
        model = self._model
        geometric = [zero + direction * value
                     for value, (_, _, zero, direction) in zip(start, self._limits, strict=True)]
        plane = model.plane_for(model.roll_of(geometric))
        base_x, base_y, base_z = model.offsets.base_xyz_m
        x, y, z = goal[0] - base_x, goal[1] - base_y, goal[2] - base_z
        yaw = self._nearest_yaw(x, y, plane.lateral_m, geometric[0])
        if yaw is None:
            return None
        target_in_plane, off_plane = plane_coordinates(yaw, x, y, z, plane.lateral_m)
        return self.step(goal, start, geometric, plane, yaw, target_in_plane, off_plane)

    def step(self, goal: tuple[float, float, float], positions: list[float],
             geometric: Sequence[float], plane: RollPlane, yaw: float, target_in_plane: complex,
             off_plane_m: float) -> IkResult | None:
        """Return the seed's least-motion steps onto the target in one plane, or None.

        :param positions: the seed's joint positions (the joints the steps leave keep theirs)
        :param geometric: the same as geometric angles
        :param yaw: the plane's yaw; ``target_in_plane`` and ``off_plane_m`` the target in it
        """
        tolerance = self._tolerance
        if off_plane_m >= tolerance:
            return None
        chain_angles = [geometric[i] for i in self._model.pitch_index]
        chain_angles[-1] += plane.tool_turn_rad
        found = step_to(plane.planar.chain, chain_angles, target_in_plane,
                        math.sqrt(tolerance * tolerance - off_plane_m * off_plane_m))
        if found is None:
            return None
        moved, tip = found
        return self._answer(goal, positions, yaw, moved, tip, plane)

    def _nearest_yaw(self, x: float, y: float, lateral: float, seed_yaw: float) -> float | None:
        """Return the first plane's yaw of a seeded solve, None where it is a yaw limit.

        As arm_ik.candidate_planes orders them: the in-range branches, the one nearest the
        seed's yaw first (the facing one on a tie).
        """
        yaw = self._model.yaw
        if yaw is None:
            return 0.0
        low, high = yaw.min_rad, yaw.max_rad
        best, nearest = None, math.inf
        for heading in branch_headings(x, y, lateral):
            for turn in turns_within(heading, low, high):
                distance = abs(wrap(turn - seed_yaw))
                if distance < nearest:
                    best, nearest = turn, distance
        return best

    def _positions(self, seed: Any) -> list[float] | None:
        """Return the seed's positions within the limits, None unless one finite per joint."""
        try:
            values = [float(v) for v in seed]
        except (TypeError, ValueError):
            return None
        if len(values) != len(self._limits):
            return None
        for index, (low, high, _, _) in enumerate(self._limits):
            value = values[index]
            if not isfinite(value):
                return None
            if value < low:
                values[index] = low
            elif value > high:
                values[index] = high
        return values

    def _answer(self, goal: tuple[float, float, float], positions: list[float], yaw: float,
                chain_angles: Sequence[float], tip: complex, plane: RollPlane) -> IkResult | None:
        """Return the IkResult of a try's yaw and chain angles (each within its range).

        None if rounding put the tool a hair beyond the tolerance (the general solver decides).
        """
        values = list(chain_angles)
        values[-1] -= plane.tool_turn_rad
        if self._model.yaw is not None:
            values.insert(0, yaw)
        for (index, low, high, zero, direction), geometric in zip(self._set, values, strict=True):
            value = (geometric - zero) * direction
            positions[index] = low if value < low else high if value > high else value
        tool = self._model.to_base(tip.real, plane.lateral_m, tip.imag, yaw)
        error = math.dist(tool, goal)
        if error > self._tolerance:
            return None
        return IkResult(np.array(positions), np.array(tool), True, error, 0, StopReason.REACHED)


def _coordinates(target: Any) -> tuple[float, float, float] | None:
    """Return a target's three coordinates, None unless three floats within the reckoning.

    Farther, the general solver aims at a stand-in target (reckoning.py).
    """
    try:
        x, y, z = target
        x, y, z = float(x), float(y), float(z)
    except (TypeError, ValueError):
        return None
    if not (abs(x) <= RECKONING_M and abs(y) <= RECKONING_M and abs(z) <= RECKONING_M):
        return None
    return x, y, z
