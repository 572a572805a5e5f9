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
from fabrik_ros.kinematics.options import Bend, SolverOptions
from fabrik_ros.kinematics.reckoning import (
    RECKONING_M,
    rows_within_reckoning,
    within_reckoning,
)
from fabrik_ros.kinematics.roll_search import nearest_reaching_roll
from fabrik_ros.kinematics.single.arm_ik import (
    ArmIk,
    as_vec3,
    bend_side,
    best_answer,
    candidate_planes,
    first_plane,
    PlanarAnswer,
    planes_differ,
    stop_reason,
    turn_to_target,
    wanted_side,
)
from fabrik_ros.kinematics.single.arm_model import ArmModel, RollPlane
from fabrik_ros.kinematics.single.closed_form import closed_form
from fabrik_ros.kinematics.single.fabrik import FabrikSolver
from fabrik_ros.kinematics.single.planar_arm import PlanarArm
from fabrik_ros.kinematics.single.results import BatchIkResult, IkResult, StopReason
from fabrik_ros.kinematics.single.seed_step import step_to
from fabrik_ros.kinematics.single.yaw_branches import nearest_turn, turns_within
from fabrik_ros.kinematics.vec3 import Vec3

_LastStep = tuple[tuple[float, ...], float, RollPlane, list[float],
                  tuple[list[complex], complex]]
"""A seeded first try's answer: its positions, geometric yaw, plane, chain angles and their
joints and tip (:attr:`Arm._last_step`)."""


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
        return self.model.fk(self._geometric(self._angles_in('angles', angles)))

    def tool_axis(self, angles: FloatVector) -> np.ndarray:
        """Return the unit direction the tool points along for joint positions [rad].

        The roll axis on an arm with a roll joint, else the last link: the direction
        ``geometry.tool_length_m`` is measured along (:mod:`~fabrik_ros.kinematics.approach`).

        :raises TargetError: if the angles are not finite or not one per joint
        """
        return np.array(self.model.tool_axis(self._geometric(self._angles_in('angles', angles))))

    def approach_miss(self, angles: FloatVector, approach: FloatVector) -> ApproachMiss:
        """Return how far the tool's axis at ``angles`` is from ``approach``, and the forced part.

        ``error_rad`` is what :meth:`ik` reports as ``approach_error_rad``; ``out_of_plane_rad``
        the part no joint can remove (the approach's angle from the arm's vertical plane).

        :raises TargetError: if the angles or the approach are not finite, or the approach
            is zero
        """
        geometric = self._geometric(self._angles_in('angles', angles))
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
            tried, first = self._plain_first_try(target, seed, bend or self.options.bend)
            if first is not None:
                return first
        goal = as_vec3('target', target)
        aim = within_reckoning(goal if self._base is None else goal - self._base)
        pole_vec = None if pole is None else as_vec3('pole', pole)
        ask = _Ask(bend or self.options.bend,
                   pole_vec if pole_vec is None or self._base is None else pole_vec - self._base,
                   None if approach is None else _unit(as_vec3('approach', approach)))
        start = self.model.home if seed is None else self._seed_angles(seed)
        roll = self.model.roll_of(start)
        result = self._solve(aim, goal, start, seed is not None, roll, ask, first_tried=tried)
        if result.reached or not self._another_roll_may_reach(result):
            return result
        return self._other_rolls(aim, goal, start, seed is not None, roll, ask, result)

    def _plain_first_try(self, target: FloatVector, seed: FloatVector | None,
                         bend: Bend) -> tuple[bool, IkResult | None]:
        """Return whether the first try ran, and its answer (None: the search must run).

        Most solves end here, so a target of three finite floats and a seed of one finite
        float per joint are read as they are, without the checks that name what is wrong with
        other input (not run: :meth:`ik` runs those checks, then the first try).
        """
        try:
            x, y, z = target
            goal = (float(x), float(y), float(z))
        except (TypeError, ValueError):
            return False, None
        base_x, base_y, base_z = self.offsets.base_xyz_m
        x, y, z = goal[0] - base_x, goal[1] - base_y, goal[2] - base_z
        if not (abs(x) <= RECKONING_M and abs(y) <= RECKONING_M and abs(z) <= RECKONING_M):
            return False, None      # far or not finite: a stand-in target, or a refusal
        if seed is None:
            return True, self._cold_try(x, y, z, goal, self._home_positions, self._home_plane,
                                        bend, None)
        if bend is not Bend.ANY:
            return True, None
        last = self._last_step[0]
        if last is not None and seed.__class__ is tuple and seed == last[0]:
            _, yaw_rad, plane, chain_angles, fk = last
            return True, self._seeded_try(x, y, z, goal, seed, plane, yaw_rad, chain_angles, fk)
        read = self._seed_floats(seed)
        if read is None:
            return False, None
        positions, start = read
        model = self.model
        plane = model.plane_for(model.roll_of(start))
        return True, self._seeded_try(x, y, z, goal, positions, plane, start[0],
                                      self._planar_angles(start, plane), None)

    def _solve(self, aim: Vec3, goal: Vec3, start: Sequence[float], seeded: bool, roll: float,
               ask: '_Ask', *, first_tried: bool) -> IkResult:
        """Return the best answer with the roll joint at ``roll`` (geometric) [rad].

        The first try answers most targets at once (:meth:`_first_try`, unless it ran
        already); the plane search with FABRIK's attempts answers the rest.
        """
        plane = self.model.plane_for(roll)
        if ask.approach is None and not first_tried:
            first = self._first_try(aim.x, aim.y, aim.z, goal, start, self._positions(start),
                                    plane, seeded, ask.bend, ask.pole)
            if first is not None:
                return first
        ik = self._ik(roll, plane)
        yaw = self.model.yaw
        planes = candidate_planes(yaw, aim, float(start[0]) if seeded and yaw else None,
                                  plane.lateral_m)
        seed_points = plane.planar.points(self._planar_angles(start, plane)) if seeded else None
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

    def _first_try(self, x: float, y: float, z: float, goal: Sequence[float],
                   start: Sequence[float], positions: Sequence[float], plane: RollPlane,
                   seeded: bool, bend: Bend, pole: Vec3 | None) -> IkResult | None:
        """Return the first try's answer in the first plane, None if the search must run.

        Without a seed: the closed form in the plane facing the target (closed_form.py: the
        even arc, the tool triangles; the stretched pose that comes closest to a target
        beyond reach, unless another plane may come closer). From a seed (bend ``ANY``, no
        pole): the seed moved onto the target by least motion (seed_step.py) in the plane
        nearest the seed's yaw, which keeps the elbow's branch. Neither iterates.

        :param x: the target from the base point (``x``, ``y``, ``z``) [m]; ``goal`` the
            target itself [m]
        :param start: geometric angles the joints the try leaves keep; ``positions`` the same
            as joint positions; ``plane`` the chain at their roll
        """
        if not seeded:
            return self._cold_try(x, y, z, goal, positions, plane, bend, pole)
        if pole is not None or bend is not Bend.ANY:
            return None
        return self._seeded_try(x, y, z, goal, positions, plane, start[0],
                                self._planar_angles(start, plane), None)

    def _cold_try(self, x: float, y: float, z: float, goal: Sequence[float],
                  positions: Sequence[float], plane: RollPlane, bend: Bend,
                  pole: Vec3 | None) -> IkResult | None:
        """Return the closed form's answer in the plane facing the target, or None."""
        planar, lateral = plane.planar, plane.lateral_m
        tolerance = self.options.tolerance_m
        yaw = self.model.yaw
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
        result = self._first_answer(plane, positions, heading, math.cos(heading),
                                    math.sin(heading), pitches, tip, goal)
        if result.reached or yaw is None or not planes_differ(planar.chain, lateral):
            return result
        return None

    def _seeded_try(self, x: float, y: float, z: float, goal: Sequence[float],
                    positions: Sequence[float], plane: RollPlane, seed_yaw: float,
                    chain_angles: list[float],
                    fk: tuple[list[complex], complex] | None) -> IkResult | None:
        """Return the seed's least-motion steps onto the target, or None.

        In the plane nearest the seed's yaw (geometric ``seed_yaw``), from the seed's chain
        angles; ``fk`` their joints and tip when known (the last answer's). A reached answer
        is kept for the next target of a stream (:attr:`_last_step`).
        """
        lateral = plane.lateral_m
        tolerance = self.options.tolerance_m
        yaw = self.model.yaw
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
        result = self._first_answer(plane, positions, turn, cos, sin, pitches, tip, goal)
        if not result.reached:
            return None
        self._last_step[0] = (result.joint_angles_rad, turn, plane, pitches, (points, tip))
        return result

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

    def _first_answer(self, plane: RollPlane, positions: Sequence[float], yaw_rad: float,
                      cos: float, sin: float, pitches: list[float], tip: complex,
                      goal: Sequence[float]) -> IkResult:
        """Return the IkResult of a first try: the yaw and pitches set in ``positions``.

        Every try turns its angles into their joints' ranges (geometric, the tool's turn on
        the last pitch), so a position follows without a turn, a clamp taking the rounding.
        ``tip`` is the tool point in the plane, the forward kinematics of ``pitches``; ``cos``
        and ``sin`` those of the yaw.
        """
        angles = list(positions)
        solved = [yaw_rad, *pitches] if self.model.yaw is not None else list(pitches)
        solved[-1] -= plane.tool_turn_rad
        for angle, (index, zero, direction, lowest, highest) in zip(solved, self._solved_numbers,
                                                                    strict=True):
            value = (angle - zero) * direction
            angles[index] = lowest if value < lowest else highest if value > highest else value
        base_x, base_y, base_z = self.offsets.base_xyz_m      # model.to_base, on floats
        along, lateral = tip.real, plane.lateral_m
        position = (base_x + along * cos - lateral * sin, base_y + along * sin + lateral * cos,
                    base_z + tip.imag)
        error = math.dist(position, goal)
        reached = error <= self.options.tolerance_m
        return IkResult(tuple(angles), position, reached, error, 0,
                        StopReason.REACHED if reached else StopReason.UNREACHABLE)

    def _result(self, angles: list[float], goal: Vec3, iterations: int, answer: PlanarAnswer,
                approach: Vec3 | None) -> IkResult:
        """Return the IkResult of joint positions: the tool point they reach, residual."""
        geometric = self._geometric(angles)
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
        geometric = None if seeds is None else self._geometric_rows(
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

    def _geometric(self, positions: Sequence[float] | np.ndarray) -> list[float]:
        """Return the geometric angles of joint positions [rad]."""
        return [j.geometric(float(a)) for j, a in zip(self.joints, positions, strict=True)]

    def _geometric_rows(self, positions: np.ndarray) -> np.ndarray:
        """Return the geometric angles of (N, n_joints) joint positions [rad]."""
        zero = np.array([j.zero_rad for j in self.joints])
        direction = np.array([j.direction for j in self.joints])
        return np.asarray(zero + direction * positions)

    def _planar_angles(self, geometric: Sequence[float], plane: RollPlane) -> list[float]:
        """Return the planar chain's angles of geometric angles (the tool turn on the last)."""
        pitches = [geometric[i] for i in self.model.pitch_index]
        pitches[-1] += plane.tool_turn_rad
        return pitches

    def _angles_in(self, name: str, angles: FloatVector) -> np.ndarray:
        """Return ``angles`` as a finite float array with one entry per joint."""
        values = np.asarray(angles, dtype=float).reshape(-1)
        if values.shape != (len(self.joints),):
            raise TargetError(f'{name} has {values.size} values, need {len(self.joints)} '
                              f'(one per joint: {", ".join(self.joint_names)})')
        if not np.all(np.isfinite(values)):
            raise TargetError(f'{name} = {values.tolist()!r}, every angle must be finite')
        return values

    def _clamped_seed(self, seed: FloatVector) -> np.ndarray:
        """Return the seed within the joint limits (a current pose may sit a hair outside)."""
        values = self._angles_in('seed', seed)
        return np.array([j.clamp(float(a)) for j, a in zip(self.joints, values, strict=True)])

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
        return self._positions(geometric)

    def _positions(self, geometric: Sequence[float]) -> list[float]:
        """Return the joint positions of geometric angles [rad] (:meth:`Joint.position`)."""
        return [float(j.position(a)) for j, a in zip(self.joints, geometric, strict=True)]

    def _seed_angles(self, seed: FloatVector) -> list[float]:
        """Return the geometric angles of a seed, each position clamped into its limits.

        A current pose may sit a hair outside the limits.

        :raises TargetError: if the seed is not finite or not one value per joint
        """
        read = self._seed_floats(seed)
        return self._geometric(self._clamped_seed(seed)) if read is None else read[1]

    def _seed_floats(self, seed: FloatVector) -> tuple[list[float], list[float]] | None:
        """Return a flat seed of one finite number per joint clamped, and geometric; else None.

        Every seeded solve reads its seed here first, as plain floats.
        """
        try:
            positions = list(map(float, seed))
        except (TypeError, ValueError):
            return None
        if len(positions) != len(self.joints):
            return None
        for index, (lowest, highest, _, _) in enumerate(self._seed_numbers):
            value = positions[index]
            if not lowest <= value <= highest:
                if not math.isfinite(value):
                    return None
                positions[index] = lowest if value < lowest else highest
        geometric = [zero + direction * value
                     for value, (_, _, zero, direction) in zip(positions, self._seed_numbers,
                                                               strict=True)]
        return positions, geometric

    @cached_property
    def _seed_numbers(self) -> tuple[tuple[float, float, float, int], ...]:
        """Return each joint's limits, zero and direction."""
        return tuple((j.min_rad, j.max_rad, j.zero_rad, j.direction) for j in self.joints)

    @cached_property
    def _solved_numbers(self) -> tuple[tuple[int, float, int, float, float], ...]:
        """Return what turns a first try's angles into positions, for the yaw and pitch joints.

        Per joint: its index, zero, direction and limits.
        """
        indices = ((0,) if self.model.yaw is not None else ()) + self.model.pitch_index
        return tuple((i, self.joints[i].zero_rad, self.joints[i].direction,
                      self.joints[i].min_rad, self.joints[i].max_rad) for i in indices)

    @cached_property
    def _last_step(self) -> list[_LastStep | None]:
        """Return a one-entry list: the last seeded first try's answer, None before one.

        A stream seeds each target with the last answer: when the seed is that answer (its
        positions, a tuple as a node keeps its last command), its chain angles and forward
        pass are known already, and the seed need not be read or checked again.
        """
        return [None]

    @cached_property
    def _home_plane(self) -> RollPlane:
        """Return the chain at the home roll (every cold solve's)."""
        return self.model.plane_for(self.model.roll_of(self.model.home))

    @cached_property
    def _home_positions(self) -> tuple[float, ...]:
        """Return the home pose as joint positions [rad]."""
        return tuple(j.home_rad for j in self.joints)

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

