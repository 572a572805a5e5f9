"""The arm description (joints, links, servos, solver options) and its IK/FK entry points."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
import math
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from fabrik_ros.kinematics.aliases import FloatVector
from fabrik_ros.kinematics.approach import angle_between, approach_miss, ApproachMiss
from fabrik_ros.kinematics.batch.batch_arm import BatchArm
from fabrik_ros.kinematics.batch.batch_solve import checked_seeds, checked_targets, solve_batch
from fabrik_ros.kinematics.description import arm_file, arm_sections
from fabrik_ros.kinematics.description.joint import Joint, Link
from fabrik_ros.kinematics.description.offsets import Offsets
from fabrik_ros.kinematics.description.servo_map import ServoMap
from fabrik_ros.kinematics.errors import TargetError
from fabrik_ros.kinematics.first_try import FirstTry
from fabrik_ros.kinematics.joint_frame import JointFrame
from fabrik_ros.kinematics.options import Bend, SolverOptions
from fabrik_ros.kinematics.reckoning import (
    rows_within_reckoning,
    within_reckoning,
)
from fabrik_ros.kinematics.roll_search import nearest_reaching_roll
from fabrik_ros.kinematics.single.arm_ik import (
    ArmIk,
    as_vec3,
    best_answer,
    candidate_planes,
    PlanarAnswer,
    stop_reason,
    turn_to_target,
)
from fabrik_ros.kinematics.single.arm_model import ArmModel, RollPlane
from fabrik_ros.kinematics.single.fabrik import FabrikSolver
from fabrik_ros.kinematics.single.planar_arm import PlanarArm
from fabrik_ros.kinematics.single.results import BatchIkResult, IkResult
from fabrik_ros.kinematics.single.yaw_branches import turns_within
from fabrik_ros.kinematics.vec3 import Vec3


@dataclass(frozen=True)
class Arm:
    """A yaw + pitch (+ roll) servo arm: what it is made of and how to solve it.

    Build it with :meth:`from_params` (or ``load_arm``); change solver options with
    :meth:`with_options`, which returns a new Arm and leaves this one as it is.

    :param base_frame: frame the targets and joint positions are expressed in
    :param joints: every actuated joint, config order
    :param shoulder_height_m: height of the first pitch joint above the base origin [m]
    :param links: one per pitch joint, out to the next pitch joint (the last: to the tool)
    :param servo_map: angle <-> pulse calibration of every joint, plus auxiliary channels
    :param options: FABRIK stopping rules and default bend preference
    :param offsets: where the base, shoulder, plane and tool sit off the ideal chain
    """

    base_frame: str
    joints: tuple[Joint, ...]
    shoulder_height_m: float
    links: tuple[Link, ...]
    servo_map: ServoMap
    options: SolverOptions = SolverOptions()
    offsets: Offsets = Offsets()

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> 'Arm':
        """Build an Arm from the mapping under ``ros__parameters`` (the only validator).

        :raises ArmConfigError: naming the first key whose value breaks a rule
        """
        arm_sections.check_top_keys(params)
        names = arm_sections.read_joint_names(params)
        joints = arm_sections.read_joints(params, names)
        height, links, offsets = arm_sections.read_geometry(params, joints)
        calibrations = arm_sections.read_servos(params, joints)
        aux = arm_sections.read_aux_servos(params)
        arm_sections.check_channels(calibrations, aux)
        base_frame = arm_sections.read_base_frame(params)
        return cls(base_frame, joints, height, links, ServoMap(joints, calibrations, aux),
                   arm_sections.read_solver(params), offsets)

    def with_options(self, **changes: Any) -> 'Arm':
        """Return a copy solving with some options changed (e.g. ``tolerance_m=0.001``).

        The copy shares this arm's model (its chains and their tables): the geometry is the
        same, and rebuilding the tables would cost a run-time ``ros2 param set`` milliseconds.

        :raises SolverOptionsError: if a changed option breaks its rule
        """
        changed = replace(self, options=replace(self.options, **changes))
        changed.__dict__['model'] = self.model
        return changed

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the joint names in config order."""
        return tuple(j.name for j in self.joints)

    @property
    def home(self) -> np.ndarray:
        """Return the home pose [rad]."""
        return np.array([j.home_rad for j in self.joints])

    @cached_property
    def model(self) -> ArmModel:
        """Return the arm as the solvers see it: geometric angles, offsets, planar chains."""
        pitch = [link.length_m for link in self.links]
        return ArmModel(tuple(j.geometric_view() for j in self.joints),
                        complex(self.offsets.shoulder_offset_m, self.shoulder_height_m),
                        tuple(pitch[:-1]), pitch[-1], self.offsets)

    @property
    def planar(self) -> PlanarArm:
        """Return the pitch joints and tool as a planar chain, at the home roll."""
        return self.model.plane_for(self.model.roll_of(self.model.home)).planar

    def within_limits(self, angles: FloatVector) -> bool:
        """Return True when every angle is finite and within its joint's limits."""
        return all(j.contains(float(a)) for j, a in zip(self.joints, angles, strict=True))

    def fk(self, angles: FloatVector) -> np.ndarray:
        """Return the (n_joints + 1, 3) joint positions [m] for joint positions [rad].

        Row i is joint i (a roll joint: where its axis passes nearest the last pitch axis);
        the last row is the tool point. Positions in the base frame.

        :raises TargetError: if the angles are not finite or not one per joint
        """
        return self.model.fk(self._frame.geometric(self._frame.checked('angles', angles)))

    def tool_axis(self, angles: FloatVector) -> np.ndarray:
        """Return the unit direction the tool points along for joint positions [rad].

        The roll axis on an arm with a roll joint, else the last link: the direction
        ``geometry.tool_length_m`` is measured along (:mod:`~fabrik_ros.kinematics.approach`).

        :raises TargetError: if the angles are not finite or not one per joint
        """
        geometric = self._frame.geometric(self._frame.checked('angles', angles))
        return np.array(self.model.tool_axis(geometric))

    def approach_miss(self, angles: FloatVector, approach: FloatVector) -> ApproachMiss:
        """Return how far the tool's axis at ``angles`` is from ``approach``, and the forced part.

        ``error_rad`` is what :meth:`ik` reports as ``approach_error_rad``; ``out_of_plane_rad``
        the part no joint can remove (the approach's angle from the arm's vertical plane).

        :raises TargetError: if the angles or the approach are not finite, or the approach
            is zero
        """
        geometric = self._frame.geometric(self._frame.checked('angles', angles))
        yaw = geometric[0] if self.model.yaw is not None else 0.0
        return approach_miss(_unit(as_vec3('approach', approach)),
                             self.model.tool_axis(geometric), yaw)

    def ik(self, target: FloatVector, seed: FloatVector | None = None, *,
           approach: FloatVector | None = None, bend: Bend | None = None,
           pole: FloatVector | None = None) -> IkResult:
        """Return joint positions within limits that bring the tool point to ``target``.

        :param target: (x, y, z) in the base frame [m]
        :param seed: current joint positions [rad] to warm-start from; with bend ``ANY`` the
            solve stays on the seed's elbow branch whenever that branch reaches the target,
            so a tracked target never makes the elbow flip; roll joints keep the seed's angle
            (the home angle without a seed), unless the tool sits off the roll axis and only
            another roll reaches the target
        :param approach: (x, y, z) direction the tool's axis (:meth:`tool_axis`) should point
            along, or None; only its part in the arm's vertical plane can be met (the axis
            never leaves that plane), the miss is the result's ``approach_error_rad``
        :param bend: elbow side preference, None for ``options.bend``; ``UP`` / ``DOWN`` win
            over the seed's branch whenever a pose on the asked side reaches the target
        :param pole: (x, y, z) point the elbow should turn toward (overrides ``bend``) [m]
        :raises TargetError: (a ValueError) if target, seed, approach or pole is not finite
        """
        tried = False
        if approach is None and pole is None:
            tried, first = self._first.plain(target, seed, bend or self.options.bend)
            if first is not None:
                return first
        goal = as_vec3('target', target)
        aim = within_reckoning(goal if self._base is None else goal - self._base)
        pole_vec = None if pole is None else as_vec3('pole', pole)
        ask = _Ask(bend or self.options.bend,
                   pole_vec if pole_vec is None or self._base is None else pole_vec - self._base,
                   None if approach is None else _unit(as_vec3('approach', approach)))
        start = self.model.home if seed is None else self._frame.seed(seed)[1]
        roll = self.model.roll_of(start)
        result = self._solve(aim, goal, start, seed is not None, roll, ask, first_tried=tried)
        if result.reached or not self._another_roll_may_reach(result):
            return result
        return self._other_rolls(aim, goal, start, seed is not None, roll, ask, result)

    def _solve(self, aim: Vec3, goal: Vec3, start: Sequence[float], seeded: bool, roll: float,
               ask: '_Ask', *, first_tried: bool) -> IkResult:
        """Return the best answer with the roll joint at ``roll`` (geometric) [rad].

        The first try answers most targets at once (:meth:`_first_try`, unless it ran
        already); the plane search with FABRIK's attempts answers the rest.
        """
        plane = self.model.plane_for(roll)
        if ask.approach is None and not first_tried:
            first = self._first.first(aim.x, aim.y, aim.z, goal, start,
                                      self._frame.positions(start), plane, seeded, ask.bend,
                                      ask.pole)
            if first is not None:
                return first
        ik = self._ik(roll, plane)
        yaw = self.model.yaw
        planes = candidate_planes(yaw, aim, float(start[0]) if seeded and yaw else None,
                                  plane.lateral_m)
        seed_points = (plane.planar.points(self._frame.planar_angles(start, plane)) if seeded
                       else None)
        answer, iterations = best_answer(ik, planes, seed_points=seed_points, bend=ask.bend,
                                         pole=ask.pole, approach=ask.approach)
        if (yaw is not None and plane.lateral_m != 0.0
                and answer.error_m > self.options.tolerance_m):
            answer, more = turn_to_target(ik, yaw, aim, answer, bend=ask.bend, pole=ask.pole,
                                          approach=ask.approach)
            iterations += more
        angles = self._angles_of(answer.plane.yaw_rad,
                                 plane.planar.angles(answer.solution.directions), plane, start)
        return self._result(angles, goal, iterations, answer, ask.approach)

    def _another_roll_may_reach(self, kept: IkResult) -> bool:
        """Return True when turning the roll could bring the tool onto the target.

        Turning the roll moves the tool point by at most twice its offset from the roll axis,
        whatever the other joints: a target farther than that beyond the kept roll's closest
        pose is out of every roll's reach (and answered at once, the roll kept).
        """
        reach = 2.0 * self.offsets.tool_offset_m + self.options.tolerance_m
        return self.model.roll_moves_tool and kept.residual_m <= reach

    def _other_rolls(self, aim: Vec3, goal: Vec3, start: Sequence[float], seeded: bool,
                     roll: float, ask: '_Ask', kept: IkResult) -> IkResult:
        """Return the answer at the roll nearest ``roll`` that reaches, else the closest.

        See :mod:`roll_search`. Without a yaw joint the roll alone sets how far beside the
        arm's plane the tool is: the rolls that put it in line with the target are tried too.
        """
        index = self.model.roll_index
        assert index is not None
        joint = self.model.joints[index]

        def solve_at(other: float) -> IkResult:
            moved = list(start)
            moved[index] = other
            return self._solve(aim, goal, moved, seeded, other, ask, first_tried=False)

        return nearest_reaching_roll(solve_at, joint.min_rad, joint.max_rad, roll, kept,
                                     tolerance_m=self.options.tolerance_m,
                                     exact=self._rolls_in_line(aim, joint))

    def _rolls_in_line(self, aim: Vec3, roll: Joint) -> list[float]:
        """Return the rolls that put the tool beside the plane as far as the target is.

        Only for an arm without a yaw joint; its plane cannot turn toward the target.
        """
        offsets = self.model.offsets
        if self.model.yaw is not None:
            return []
        sine = (offsets.lateral_offset_m - aim.y) / offsets.tool_offset_m
        if abs(sine) > 1.0:
            return []
        first = math.asin(sine)
        return [turn for heading in (first, math.pi - first)
                for turn in turns_within(heading, roll.min_rad, roll.max_rad)]

    def _result(self, angles: list[float], goal: Vec3, iterations: int, answer: PlanarAnswer,
                approach: Vec3 | None) -> IkResult:
        """Return the IkResult of joint positions: the tool point they reach, residual."""
        geometric = self._frame.geometric(angles)
        position = self.model.tool_point(geometric)
        error = math.dist(position, goal)
        reached = error <= self.options.tolerance_m
        approach_error = (None if approach is None
                          else angle_between(approach, self.model.tool_axis(geometric)))
        return IkResult(tuple(angles), position, reached, error, iterations,
                        stop_reason(answer, reached), approach_error)

    def ik_batch(self, targets: Sequence[Sequence[float]] | np.ndarray,
                 seeds: Sequence[Sequence[float]] | np.ndarray | None = None) -> BatchIkResult:
        """Solve many targets at once, vectorised (workspace maps, trajectory tables).

        Each row takes the steps :meth:`ik` takes for that target (without approach, pole or a
        per-call bend, and keeping the seed's roll), on numpy arrays. On an arm whose tool
        sits off the roll axis, seeds holding more than a few rolls are solved row by row
        with :meth:`ik` (each roll has a chain of its own).

        :param targets: (N, 3) points in the base frame [m]
        :param seeds: (N, n_joints) positions [rad] to warm-start each target from, as
            :meth:`ik`'s ``seed``, or None
        :raises TargetError: if a target or seed is not finite or a shape is wrong
        """
        goals = checked_targets(np.asarray(targets, dtype=float))
        geometric = None if seeds is None else self._frame.geometric_rows(
            checked_seeds(self.joints, np.asarray(seeds, dtype=float), len(goals)))
        base = np.array(self.offsets.base_xyz_m)
        aims = rows_within_reckoning(goals - base if base.any() else goals)
        groups = self._roll_groups(geometric, len(goals))
        if len(groups) > _ROLL_GROUPS_BATCHED:
            return self._row_by_row(goals, seeds)
        angles = np.empty((len(goals), len(self.joints)))
        positions = np.empty((len(goals), 3))
        iterations = np.zeros(len(goals), dtype=int)
        for roll, rows in groups:
            plane = self.model.plane_for(roll)
            view = BatchArm(self.model.joints, self.options, np.array(self.model.home),
                            plane.planar, plane.lateral_m, plane.tool_turn_rad)
            solved = solve_batch(view, aims[rows], None if geometric is None else geometric[rows])
            angles[rows], iterations[rows] = solved.angles_rad, solved.iterations
            positions[rows] = solved.positions_m + base
        for index, joint in enumerate(self.joints):     # each within its range already
            if joint.zero_rad != 0.0 or joint.direction != 1:
                angles[:, index] = np.clip((angles[:, index] - joint.zero_rad) * joint.direction,
                                           joint.min_rad, joint.max_rad)
        with np.errstate(over='ignore'):
            residual = np.hypot.reduce(positions - goals, axis=-1)
        return BatchIkResult(angles, positions, residual <= self.options.tolerance_m, residual,
                             iterations)

    def _row_by_row(self, goals: np.ndarray, seeds: Any) -> BatchIkResult:
        """Return :meth:`ik`'s answer for each row (seeds of many rolls: a chain each)."""
        answers = [self.ik(goal, seed) for goal, seed in zip(goals, seeds, strict=True)]
        return BatchIkResult(np.array([a.angles_rad for a in answers]),
                             np.array([a.position_m for a in answers]),
                             np.array([a.reached for a in answers]),
                             np.array([a.residual_m for a in answers]),
                             np.array([a.iterations for a in answers]))

    def _roll_groups(self, geometric: np.ndarray | None,
                     count: int) -> list[tuple[float, np.ndarray]]:
        """Return (roll, rows) pairs: the rows whose chain is built at that roll angle."""
        if geometric is None or not self.model.roll_moves_tool:
            return [(self.model.roll_of(self.model.home), np.arange(count))]
        rolls = geometric[:, self.model.roll_index]
        return [(float(roll), np.flatnonzero(rolls == roll)) for roll in np.unique(rolls)]

    @cached_property
    def _frame(self) -> JointFrame:
        return JointFrame(self.joints, self.model)

    @cached_property
    def _first(self) -> FirstTry:
        """Return this arm's first try (it keeps the last seeded answer of a stream)."""
        return FirstTry(self.model, self._frame, self.options, self.offsets,
                        tuple(j.home_rad for j in self.joints))

    @cached_property
    def _solver(self) -> FabrikSolver:
        return FabrikSolver(self.options)

    def _ik(self, roll: float, plane: RollPlane) -> ArmIk:
        """Return the single-target solver of one roll's plane (kept: one per roll)."""
        ik = self._iks.get(roll)
        if ik is None:
            if len(self._iks) >= _IKS_KEPT:
                self._iks.clear()
            ik = self._iks[roll] = ArmIk(plane.planar, self._solver, plane.lateral_m,
                                         plane.tool_turn_rad)
        return ik

    @cached_property
    def _iks(self) -> dict[float, ArmIk]:
        return {}

    @cached_property
    def _base(self) -> Vec3 | None:
        """Return the base point, None at the origin (nothing to subtract)."""
        base = Vec3(*self.offsets.base_xyz_m)
        return None if base == Vec3(0.0, 0.0, 0.0) else base

    def _angles_of(self, yaw_rad: float, planar_angles: Sequence[float], plane: RollPlane,
                   start: Sequence[float]) -> list[float]:
        """Return config-order joint positions: the yaw, the solved pitches, rolls from start.

        ``planar_angles`` are the chain's (the tool turn on the last); ``start`` is geometric.
        """
        geometric = list(start)
        if self.model.yaw is not None:
            geometric[0] = yaw_rad
        for index, angle in zip(self.model.pitch_index, planar_angles, strict=True):
            geometric[index] = angle
        geometric[self.model.pitch_index[-1]] -= plane.tool_turn_rad
        return self._frame.positions(geometric)

class _Ask(NamedTuple):
    """What a solve is asked besides the target: elbow side, pole, tool direction."""

    bend: Bend
    pole: Vec3 | None
    approach: Vec3 | None


_IKS_KEPT = 64
_ROLL_GROUPS_BATCHED = 8
"""A batch whose seeds hold more rolls than this (on an arm whose tool sits off the roll axis,
where each roll has a chain of its own) is solved row by row: a chain per row costs more than
the arrays save."""


def load_arm(path: str | Path) -> Arm:
    """Read, unwrap and validate an arm parameter file.

    :raises ArmConfigError: if the file cannot be read, is not YAML, or breaks a rule
    """
    return Arm.from_params(arm_file.read_params_file(path))


def _unit(vector: Vec3) -> Vec3:
    """Return ``vector`` scaled to unit length or raise TargetError for a zero vector."""
    length = abs(vector)
    if length < 1e-12:
        raise TargetError(f'approach = {tuple(vector)!r}, must be a non-zero direction')
    return vector / length

