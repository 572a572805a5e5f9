"""The arm description (joints, links, servos, solver options) and its IK/FK entry points."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
import math
from pathlib import Path
from typing import Any

import numpy as np

from fabrik_ros.kinematics.aliases import FloatVector
from fabrik_ros.kinematics.batch.batch_solve import solve_batch
from fabrik_ros.kinematics.description import arm_file
from fabrik_ros.kinematics.description.joint import Joint, JointKind, Link
from fabrik_ros.kinematics.description.servo_map import ServoMap
from fabrik_ros.kinematics.errors import ArmConfigError, TargetError
from fabrik_ros.kinematics.options import Bend, SolverOptions
from fabrik_ros.kinematics.single.arm_ik import (
    ArmIk,
    as_vec3,
    best_answer,
    candidate_planes,
    PlanarAnswer,
    Plane,
    stop_reason,
)
from fabrik_ros.kinematics.single.chain import Chain
from fabrik_ros.kinematics.single.constraints import Hinge2D
from fabrik_ros.kinematics.single.fabrik import FabrikSolver
from fabrik_ros.kinematics.single.planar_arm import PlanarArm
from fabrik_ros.kinematics.single.results import BatchIkResult, IkResult, StopReason
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
    """

    base_frame: str
    joints: tuple[Joint, ...]
    shoulder_height_m: float
    links: tuple[Link, ...]
    servo_map: ServoMap
    options: SolverOptions = SolverOptions()

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> 'Arm':
        """Build an Arm from the mapping under ``ros__parameters`` (the only validator).

        :raises ArmConfigError: naming the first key whose value breaks a rule
        """
        if not isinstance(params, Mapping):
            raise ArmConfigError('ros__parameters', params, 'must be a mapping of keys')
        arm_file.reject_unknown(params, arm_file.TOP_KEYS, '')
        names = arm_file.read_joint_names(params)
        joints = arm_file.read_joints(params, names)
        height, links = arm_file.read_geometry(params, joints)
        calibrations = arm_file.read_servos(params, joints)
        aux = arm_file.read_aux_servos(params)
        arm_file.check_channels(calibrations, aux)
        base_frame = arm_file.read_str(params, 'base_frame', '', 'base_link')
        return cls(base_frame, joints, height, links, ServoMap(joints, calibrations, aux),
                   arm_file.read_solver(params))

    def with_options(self, **changes: Any) -> 'Arm':
        """Return a copy solving with some options changed (e.g. ``tolerance_m=0.001``).

        :raises SolverOptionsError: if a changed option breaks its rule
        """
        return replace(self, options=replace(self.options, **changes))

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the joint names in config order."""
        return tuple(j.name for j in self.joints)

    @property
    def home(self) -> np.ndarray:
        """Return the home pose [rad]."""
        return np.array([j.home_rad for j in self.joints])

    @cached_property
    def planar(self) -> PlanarArm:
        """Return the pitch joints as a planar chain in the arm's vertical plane."""
        pitch = [j for j in self.joints if j.kind is JointKind.PITCH]
        chain = Chain(complex(0.0, self.shoulder_height_m), 1 + 0j,
                      tuple(link.length_m for link in self.links),
                      tuple(Hinge2D(j.min_rad, j.max_rad) for j in pitch))
        return _shared_planar(chain)

    @cached_property
    def _home(self) -> tuple[float, ...]:
        return tuple(j.home_rad for j in self.joints)

    @cached_property
    def _pitch_index(self) -> list[int]:
        return [i for i, j in enumerate(self.joints) if j.kind is JointKind.PITCH]

    @cached_property
    def _yaw(self) -> Joint | None:
        return self.joints[0] if self.joints[0].kind is JointKind.YAW else None

    def within_limits(self, angles: FloatVector) -> bool:
        """Return True when every angle is finite and within its joint's limits."""
        return all(j.contains(float(a)) for j, a in zip(self.joints, angles, strict=True))

    def fk(self, angles: FloatVector) -> np.ndarray:
        """Return the (n_joints + 1, 3) joint positions [m] for joint angles [rad].

        Row i is joint i (a roll joint shares its row with the joint before it); the last row
        is the tool point.

        :raises TargetError: if the angles are not finite or not one per joint
        """
        values = self._angles_in('angles', angles)
        yaw = values[0] if self._yaw is not None else 0.0
        planar = self.planar.points([values[i] for i in self._pitch_index])
        cos, sin = math.cos(yaw), math.sin(yaw)
        rows = []
        pitch_seen = 0
        for joint in self.joints:
            if joint.kind is JointKind.YAW:
                rows.append((0.0, 0.0, 0.0))
                continue
            if joint.kind is JointKind.PITCH:
                pitch_seen += 1
            point = planar[pitch_seen - 1]
            rows.append((point.real * cos, point.real * sin, point.imag))
        tip = planar[-1]
        rows.append((tip.real * cos, tip.real * sin, tip.imag))
        return np.array(rows)

    def ik(self, target: FloatVector, seed: FloatVector | None = None, *,
           approach: FloatVector | None = None, bend: Bend | None = None,
           pole: FloatVector | None = None) -> IkResult:
        """Return joint angles within limits that bring the tool point to ``target``.

        :param target: (x, y, z) in the base frame [m]
        :param seed: current joint angles [rad] to warm-start from; with bend ``ANY`` the
            solve stays on the seed's elbow branch whenever that branch reaches the target,
            so a tracked target never makes the elbow flip; roll joints keep the seed's angle
            (the home angle without a seed)
        :param approach: (x, y, z) direction the tool should point along, or None; only its
            part in the arm's vertical plane can be met, the miss is ``approach_error_rad``
        :param bend: elbow side preference, None for ``options.bend``; ``UP`` / ``DOWN`` win
            over the seed's branch whenever a pose on the asked side reaches the target
        :param pole: (x, y, z) point the elbow should turn toward (overrides ``bend``) [m]
        :raises TargetError: (a ValueError) if target, seed, approach or pole is not finite
        """
        goal = as_vec3('target', target)
        aim = _within_reckoning(goal)
        bend = bend or self.options.bend
        pole_vec = None if pole is None else as_vec3('pole', pole)
        if seed is None and approach is None:
            quick = self._solver.quick(self._yaw, aim, bend=bend, pole=pole_vec)
            if quick is not None:
                return self._closed_form_result(*quick, goal)
        seed_angles = None if seed is None else self._clamped_seed(seed)
        planes = candidate_planes(self._yaw, aim,
                                  None if seed_angles is None else float(seed_angles[0]))
        seed_points = None if seed_angles is None else self.planar.points(
            [seed_angles[i] for i in self._pitch_index])
        approach_vec = None if approach is None else _unit(as_vec3('approach', approach))
        answer, iterations = best_answer(self._solver, planes, seed_points=seed_points,
                                         bend=bend, pole=pole_vec, approach=approach_vec)
        start = self.home if seed_angles is None else seed_angles
        return self._result(answer, start, goal, iterations, approach_vec)

    def _closed_form_result(self, plane: Plane, pitches: list[float], tip: complex,
                            goal: Vec3) -> IkResult:
        """Return the IkResult of a closed-form answer (within limits by construction).

        ``tip`` is the tool point in the plane, the forward kinematics of ``pitches``.
        """
        angles = list(self._home)
        if self._yaw is not None:
            angles[0] = plane.yaw_rad
        for index, angle in zip(self._pitch_index, pitches, strict=True):
            angles[index] = angle
        cos, sin = math.cos(plane.yaw_rad), math.sin(plane.yaw_rad)
        position = (tip.real * cos, tip.real * sin, tip.imag)
        error = math.dist(position, goal)
        reached = error <= self.options.tolerance_m
        return IkResult(np.array(angles), np.array(position), reached, error, 0,
                        StopReason.REACHED if reached else StopReason.UNREACHABLE)

    def _result(self, answer: PlanarAnswer, start: np.ndarray, goal: Vec3, iterations: int,
                approach: Vec3 | None) -> IkResult:
        """Return the IkResult of a planar answer: angles, the tool point they reach, residual."""
        angles = self._angles_of(answer, start)
        position = self._tool_point(angles)
        error = math.dist(position, goal)
        reached = error <= self.options.tolerance_m
        approach_error = 0.0 if approach is None else _approach_error(approach, self.fk(angles))
        return IkResult(np.array(angles), np.array(position), reached, error, iterations,
                        stop_reason(answer, reached), approach_error)

    def ik_batch(self, targets: Sequence[Sequence[float]] | np.ndarray,
                 seeds: Sequence[Sequence[float]] | np.ndarray | None = None) -> BatchIkResult:
        """Solve many targets at once, vectorised (workspace maps, trajectory tables).

        Each row takes the steps :meth:`ik` takes for that target (without approach, pole or a
        per-call bend), on numpy arrays.

        :param targets: (N, 3) points in the base frame [m]
        :param seeds: (N, n_joints) angles [rad] to warm-start each target from, as
            :meth:`ik`'s ``seed``, or None
        :raises TargetError: if a target or seed is not finite or a shape is wrong
        """
        goals = np.asarray(targets, dtype=float)
        result = solve_batch(self, _rows_within_reckoning(goals),
                             None if seeds is None else np.asarray(seeds, dtype=float))
        with np.errstate(over='ignore'):
            residual = np.hypot.reduce(result.positions_m - goals, axis=-1)
        return replace(result, residual_m=residual,
                       reached=residual <= self.options.tolerance_m)

    @cached_property
    def _solver(self) -> ArmIk:
        return ArmIk(self.planar, FabrikSolver(self.options))

    def _tool_point(self, angles: Sequence[float]) -> tuple[float, float, float]:
        """Return the tool point [m] of angles already checked (the fast path of fk)."""
        yaw = angles[0] if self._yaw is not None else 0.0
        tip = self.planar.points([angles[i] for i in self._pitch_index])[-1]
        return (tip.real * math.cos(yaw), tip.real * math.sin(yaw), tip.imag)

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

    def _angles_of(self, answer: PlanarAnswer, start: FloatVector) -> list[float]:
        """Return config-order angles: the plane's yaw, solved pitches, rolls kept from start."""
        angles = [float(a) for a in start]
        if self._yaw is not None:
            angles[0] = self._yaw.clamp(answer.plane.yaw_rad)
        pitches = self.planar.angles(answer.solution.directions)
        for index, angle in zip(self._pitch_index, pitches, strict=True):
            angles[index] = self.joints[index].clamp(angle)
        return angles


def load_arm(path: str | Path) -> Arm:
    """Read, unwrap and validate an arm parameter file.

    :raises ArmConfigError: if the file cannot be read, is not YAML, or breaks a rule
    """
    return Arm.from_params(arm_file.read_params_file(path))


@lru_cache(maxsize=32)
def _shared_planar(chain: Chain[complex]) -> PlanarArm:
    """Return one PlanarArm per chain, so Arm variants share its lazily built tables."""
    return PlanarArm(chain)


# Beyond this distance from the base the solver aims at a stand-in target in the same direction:
# squares of its coordinates stay finite, and the closest pose is the same to double precision
# (at 1e12 m, the arm's own offsets turn the direction by less than 1e-12 rad).
_RECKONING_M = 1e12


def _within_reckoning(goal: Vec3) -> Vec3:
    """Return ``goal``, or for a far one (up to the float maximum) a stand-in along its line."""
    largest = max(abs(goal.x), abs(goal.y), abs(goal.z))
    return goal if largest <= _RECKONING_M else goal * (_RECKONING_M / largest)


def _rows_within_reckoning(goals: np.ndarray) -> np.ndarray:
    """Return ``goals`` (N, 3) with :func:`_within_reckoning` applied to each row."""
    if goals.ndim != 2 or not np.all(np.isfinite(goals)):
        return goals    # the solver refuses these with the reason
    largest = np.max(np.abs(goals), axis=1, keepdims=True)
    return np.where(largest > _RECKONING_M, goals * (_RECKONING_M / np.maximum(largest, 1.0)),
                    goals)


def _unit(vector: Vec3) -> Vec3:
    """Return ``vector`` scaled to unit length or raise TargetError for a zero vector."""
    length = abs(vector)
    if length < 1e-12:
        raise TargetError(f'approach = {tuple(vector)!r}, must be a non-zero direction')
    return vector / length


def _approach_error(approach: Vec3, points: np.ndarray) -> float:
    """Return the angle between the asked and the reached tool direction [rad]."""
    tool = points[-1] - points[-2]
    cosine = float(np.dot(tool, np.array(approach)) / np.linalg.norm(tool))
    return math.acos(min(1.0, max(-1.0, cosine)))
