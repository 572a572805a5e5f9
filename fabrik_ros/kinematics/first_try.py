"""The first try of a single solve: most targets end here, without iterating.

Without a seed: the closed form in the plane facing the target (closed_form.py: the even arc,
the tool triangles; the stretched pose that comes closest to a target beyond reach, unless
another plane may come closer). From a seed (bend ``ANY``, no pole): the seed moved onto the
target by least motion (seed_step.py) in the plane nearest the seed's yaw, which keeps the
elbow's branch. A None answer leaves the target to the plane search (``Arm._solve``).
"""

from collections.abc import Sequence
import math

from fabrik_ros.kinematics.aliases import FloatVector
from fabrik_ros.kinematics.description.offsets import Offsets
from fabrik_ros.kinematics.joint_frame import JointFrame
from fabrik_ros.kinematics.options import Bend, SolverOptions
from fabrik_ros.kinematics.reckoning import RECKONING_M
from fabrik_ros.kinematics.single.arm_ik import bend_side, first_plane, planes_differ, wanted_side
from fabrik_ros.kinematics.single.arm_model import ArmModel, RollPlane
from fabrik_ros.kinematics.single.closed_form import closed_form
from fabrik_ros.kinematics.single.results import IkResult, StopReason
from fabrik_ros.kinematics.single.seed_step import step_to
from fabrik_ros.kinematics.single.yaw_branches import nearest_turn
from fabrik_ros.kinematics.vec3 import Vec3

_LastStep = tuple[tuple[float, ...], float, RollPlane, list[float],
                  tuple[list[complex], complex]]
"""A seeded try's answer: its positions, geometric yaw, plane, chain angles and their joints
and tip (:attr:`FirstTry.last_step`)."""


class FirstTry:
    """Answer a target by a closed form or by the seed's least-motion steps (module docstring).

    :param model: the arm as the solvers see it
    :param frame: its joint positions <-> geometric angles
    :param options: the solver's tolerance
    :param offsets: where the base point sits
    :param home: the home pose as joint positions [rad] (every cold try's start)
    """

    def __init__(self, model: ArmModel, frame: JointFrame, options: SolverOptions,
                 offsets: Offsets, home: Sequence[float]) -> None:
        self._model, self._frame = model, frame
        self._tolerance = options.tolerance_m
        self._base = offsets.base_xyz_m
        self._home_plane = model.plane_for(model.roll_of(model.home))
        self._home_positions = tuple(home)
        self.last_step: _LastStep | None = None
        """The last reached seeded try. A stream seeds each target with the last answer: when
        the seed is that answer (its positions, a tuple as a node keeps its last command),
        its chain angles and forward pass are known already, and the seed need not be read
        or checked again."""

    def plain(self, target: FloatVector, seed: FloatVector | None,
              bend: Bend) -> tuple[bool, IkResult | None]:
        """Return whether the try ran on a plain target, and its answer (None: search on).

        A target of three finite floats and a seed of one finite float per joint are read as
        they are, without the checks that name what is wrong with other input (not run: the
        caller runs those checks, then :meth:`first`).
        """
        try:
            x, y, z = target
            goal = (float(x), float(y), float(z))
        except (TypeError, ValueError):
            return False, None
        base_x, base_y, base_z = self._base
        x, y, z = goal[0] - base_x, goal[1] - base_y, goal[2] - base_z
        if not (abs(x) <= RECKONING_M and abs(y) <= RECKONING_M and abs(z) <= RECKONING_M):
            return False, None      # far or not finite: a stand-in target, or a refusal
        if seed is None:
            return True, self.cold(x, y, z, goal, self._home_positions, self._home_plane,
                                   bend, None)
        if bend is not Bend.ANY:
            return True, None
        last = self.last_step
        if last is not None and seed.__class__ is tuple and seed == last[0]:
            _, yaw_rad, plane, chain_angles, fk = last
            return True, self.seeded(x, y, z, goal, seed, plane, yaw_rad, chain_angles, fk)
        read = self._frame.seed_floats(seed)
        if read is None:
            return False, None
        positions, start = read
        plane = self._model.plane_for(self._model.roll_of(start))
        return True, self.seeded(x, y, z, goal, positions, plane, start[0],
                                 self._frame.planar_angles(start, plane), None)

    def first(self, x: float, y: float, z: float, goal: Sequence[float],
              start: Sequence[float], positions: Sequence[float], plane: RollPlane,
              seeded: bool, bend: Bend, pole: Vec3 | None) -> IkResult | None:
        """Return the first try's answer in ``plane``, None if the search must run.

        :param x: the target from the base point (``x``, ``y``, ``z``) [m]; ``goal`` the
            target itself [m]
        :param start: geometric angles the joints the try leaves keep; ``positions`` the same
            as joint positions; ``plane`` the chain at their roll
        """
        if not seeded:
            return self.cold(x, y, z, goal, positions, plane, bend, pole)
        if pole is not None or bend is not Bend.ANY:
            return None
        return self.seeded(x, y, z, goal, positions, plane, start[0],
                           self._frame.planar_angles(start, plane), None)

    def cold(self, x: float, y: float, z: float, goal: Sequence[float],
             positions: Sequence[float], plane: RollPlane, bend: Bend,
             pole: Vec3 | None) -> IkResult | None:
        """Return the closed form's answer in the plane facing the target, or None."""
        planar, lateral = plane.planar, plane.lateral_m
        tolerance = self._tolerance
        yaw = self._model.yaw
        found = first_plane(yaw, x, y, z, lateral)
        off_plane = found.off_plane_m
        if off_plane >= tolerance:
            return None
        side = 0
        if pole is not None:
            side = wanted_side(bend, pole, found, planar.chain.base)
        elif bend is not Bend.ANY:
            side = bend_side(bend, found.target - planar.chain.base)
        pose = closed_form(planar, found.target, side,
                           math.sqrt(tolerance * tolerance - off_plane * off_plane))
        if pose is None:
            return None
        pitches, tip = pose
        heading = found.yaw_rad
        result = self._answer(plane, positions, heading, math.cos(heading), math.sin(heading),
                              pitches, tip, goal)
        if result.reached or yaw is None or not planes_differ(planar.chain, lateral):
            return result
        return None

    def seeded(self, x: float, y: float, z: float, goal: Sequence[float],
               positions: Sequence[float], plane: RollPlane, seed_yaw: float,
               chain_angles: list[float],
               fk: tuple[list[complex], complex] | None) -> IkResult | None:
        """Return the seed's least-motion steps onto the target, or None.

        In the plane nearest the seed's yaw (geometric ``seed_yaw``), from the seed's chain
        angles; ``fk`` their joints and tip when known (the last answer's). A reached answer
        is kept for the next target of a stream (:attr:`last_step`).
        """
        lateral = plane.lateral_m
        tolerance = self._tolerance
        yaw = self._model.yaw
        turn = 0.0 if yaw is None else nearest_turn(x, y, lateral, yaw.min_rad, yaw.max_rad,
                                                    seed_yaw)
        cos, sin = math.cos(turn), math.sin(turn)      # plane_coordinates, on floats
        off_plane = abs(y * cos - x * sin - lateral)
        if off_plane >= tolerance:
            return None
        moved = step_to(plane.planar.chain, chain_angles, complex(x * cos + y * sin, z),
                        math.sqrt(tolerance * tolerance - off_plane * off_plane), fk)
        if moved is None:
            return None
        pitches, tip, points = moved
        result = self._answer(plane, positions, turn, cos, sin, pitches, tip, goal)
        if not result.reached:
            return None
        self.last_step = (result.joint_angles_rad, turn, plane, pitches, (points, tip))
        return result

    def _answer(self, plane: RollPlane, positions: Sequence[float], yaw_rad: float,
                cos: float, sin: float, pitches: list[float], tip: complex,
                goal: Sequence[float]) -> IkResult:
        """Return the IkResult of a first try: the yaw and pitches set in ``positions``.

        Every try turns its angles into their joints' ranges (geometric, the tool's turn on
        the last pitch), so a position follows without a turn, a clamp taking the rounding.
        ``tip`` is the tool point in the plane, the forward kinematics of ``pitches``; ``cos``
        and ``sin`` those of the yaw.
        """
        angles = list(positions)
        solved = [yaw_rad, *pitches] if self._model.yaw is not None else list(pitches)
        solved[-1] -= plane.tool_turn_rad
        for angle, (index, zero, direction, lowest, highest) in zip(
                solved, self._frame.solved_numbers, strict=True):
            value = (angle - zero) * direction
            angles[index] = lowest if value < lowest else highest if value > highest else value
        base_x, base_y, base_z = self._base      # model.to_base, on floats
        along, lateral = tip.real, plane.lateral_m
        position = (base_x + along * cos - lateral * sin, base_y + along * sin + lateral * cos,
                    base_z + tip.imag)
        error = math.dist(position, goal)
        reached = error <= self._tolerance
        return IkResult(tuple(angles), position, reached, error, 0,
                        StopReason.REACHED if reached else StopReason.UNREACHABLE)
