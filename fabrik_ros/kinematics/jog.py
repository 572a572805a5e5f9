"""Jogging: a tool twist or joint velocities integrated, tick by tick, into joint commands.

A twist (linear m/s, angular rad/s, base frame) moves an integrated goal (a tool point and an
approach direction) by one tick's worth, and the seeded solve turns it into joint positions
within limits. The goal is carried from tick to tick while the arm meets it, and re-anchored
on the pose the arm reached where it does not (the workspace edge, a joint limit): the tool
slides along what it can reach and the goal never runs away.

What of the angular part an arm of this family meets: the tool's axis (its approach, the
tool frame's x) always lies in the arm's vertical plane (:mod:`~.approach`). Of the angular
velocity, its part about the plane's normal tilts the axis within the plane (the pitch
joints meet it); its part about the axis turns the roll joint, where there is one; its part
about the third axis (in the plane, across the approach) would swing the axis out of the plane
and is dropped: only a yaw could, and the yaw is set by the tool point's position. As the
tool point moves sideways the plane turns with it, and the approach turns with the plane, so
its tilt is kept.

Each tick is solved from the arm's pose with ``Bend.ANY``: the elbow stays on the side it is
on, whatever ``solver.bend`` prefers for targets (a jog never flips it over). Every step is
bounded: no joint moves more than its speed limit times the tick; when one would, the whole
twist is scaled down uniformly (as MoveIt Servo does), and a step that even scaled down would
move a joint too far (near a stretched or folded arm) is not made at all.
"""

from collections.abc import Sequence
from dataclasses import dataclass
import difflib
import math
from typing import Optional

import numpy as np

from fabrik_ros.kinematics.aliases import FloatVector
from fabrik_ros.kinematics.arm import Arm
from fabrik_ros.kinematics.description.urdf_chain import rot_x, rot_y, rot_z
from fabrik_ros.kinematics.errors import TargetError
from fabrik_ros.kinematics.options import Bend
from fabrik_ros.kinematics.single.results import IkResult

MAX_COMPONENT = 1000.0
"""A twist or joint velocity component beyond this (m/s, rad/s) is refused as garbage; the
speed caps then bound what is kept."""
_SCALE_TRIES = 3
"""Solves per tick that scale the twist down by how far a joint exceeds its speed limit."""
_HALVINGS = 6
"""Then solves per tick that halve it (near a stretched arm a joint's speed grows faster than
the twist's)."""
_JUMP_RATIO = 10.0
"""A step asking a joint for this many times its speed limit (and that many times what the
point alone asks) goes to another pose of the arm (a yaw turned half round, an elbow flipped),
not faster along this one: the approach is what forces it, so it gives way instead, as at a
joint limit, and the point moves on."""
_SLOW_SCALE = 0.1
"""A tick that makes less of the twist than this is said: the arm is near a singular pose."""
_APPROACH_SLACK_RAD = 1e-4
"""An approach met within this is carried on as asked; a bigger miss re-anchors it."""
_HORIZONTAL_EPS_M = 1e-9


class JogError(TargetError):
    """A jog command that is not used, with the cause its warning is throttled by."""

    def __init__(self, cause: str, message: str) -> None:
        super().__init__(message)
        self.cause = cause


@dataclass(frozen=True)
class JogLimits:
    """How fast a jog may move.

    :param speeds_rad_s: each joint's speed limit, config order [rad/s]
    :param linear_m_s: the tool point's speed cap [m/s]
    :param angular_rad_s: the approach's turning speed cap [rad/s]
    """

    speeds_rad_s: tuple[float, ...]
    linear_m_s: float
    angular_rad_s: float


@dataclass(frozen=True)
class JogStep:
    """One tick of a jog.

    :param angles_rad: the joint command, within limits, config order [rad]
    :param goal_m: the tool point asked this tick [m]
    :param approach: the approach asked this tick (unit, base frame)
    :param scale: the fraction of the twist made (below 1: a joint at its speed limit)
    :param held: why the tool did not make all of the step: '' (it did), 'edge' (the point is
        out of reach, or the arm stretched: the tool slides along the edge), 'limit' (the
        approach or the roll cannot be kept: a joint limit, the reach; it gives way and the
        point moves on), 'slow' (near a singular pose the speed limits allow only a small
        part of the twist), 'jump' (no step within the speed limits: held still)
    """

    angles_rad: tuple[float, ...]
    goal_m: tuple[float, float, float]
    approach: tuple[float, float, float]
    scale: float
    held: str


def checked_components(where: str, values: Sequence[float]) -> np.ndarray:
    """Return ``values`` as floats, or refuse them when not finite or beyond MAX_COMPONENT.

    >>> checked_components('jog/twist linear', [0.1, 0.0, 0.0]).tolist()
    [0.1, 0.0, 0.0]
    """
    array = np.array([float(v) for v in values])
    if not np.all(np.isfinite(array)):
        raise JogError('not finite', f'{where} {array.tolist()} is not finite')
    if np.any(np.abs(array) > MAX_COMPONENT):
        raise JogError('huge', f'{where} {array.tolist()} exceeds {MAX_COMPONENT:g} per '
                               f'component')
    return array


def capped(vector: np.ndarray, cap: float) -> np.ndarray:
    """Return ``vector`` scaled down to length ``cap`` if longer.

    >>> capped(np.array([3.0, 4.0, 0.0]), 1.0).tolist()
    [0.6000000000000001, 0.8, 0.0]
    """
    length = float(np.linalg.norm(vector))
    return vector * (cap / length) if length > cap else vector


def tool_rotation(arm: Arm, angles: Sequence[float]) -> np.ndarray:
    """Return the orientation of ``tool_link`` (the generated URDF's) in the base frame.

    Columns: x the tool's axis (:meth:`Arm.tool_axis`), y the pitch axes' direction turned by
    the roll, z = x cross y. The yaw turns about z, each pitch about -y, the roll about x.
    """
    geometric = [j.geometric(float(a)) for j, a in zip(arm.joints, angles, strict=True)]
    model = arm.model
    yaw = geometric[0] if model.yaw is not None else 0.0
    pitch = math.fsum(geometric[i] for i in model.pitch_index)
    roll = geometric[model.roll_index] if model.roll_index is not None else 0.0
    return np.asarray(rot_z(yaw) @ rot_y(-pitch) @ rot_x(roll))


class TwistJog:
    """Integrate twists into joint commands for one arm (the goal carried between ticks).

    :param arm: the arm; :meth:`step` takes the current one (solver options may change)
    """

    def __init__(self, arm: Arm) -> None:
        self._arm = arm
        self._last: Optional[tuple[float, ...]] = None
        self._goal = np.zeros(3)
        self._approach = np.array([1.0, 0.0, 0.0])

    def step(self, arm: Arm, angles: Sequence[float], linear_m_s: FloatVector,
             angular_rad_s: FloatVector, dt_s: float, limits: JogLimits) -> JogStep:
        """Return the next joint command from ``angles`` for the twist held ``dt_s`` [s].

        :param angles: where the arm is (its last command): where the goal is re-anchored if
            it is not this jog's last answer
        :param linear_m_s: the tool point's velocity, base frame [m/s]
        :param angular_rad_s: the angular velocity, base frame [rad/s]
        """
        self._arm = arm
        current = tuple(min(max(float(a), j.min_rad), j.max_rad)       # joint states may
                        for j, a in zip(arm.joints, angles, strict=True))  # lie a hair out
        if current != self._last:
            self._anchor(current)
        linear = capped(np.asarray(linear_m_s, dtype=float), limits.linear_m_s)
        angular = capped(np.asarray(angular_rad_s, dtype=float), limits.angular_rad_s)
        allowed = np.asarray(limits.speeds_rad_s) * dt_s
        scale = 1.0
        first = None
        point_first = False
        for attempt in range(_SCALE_TRIES + _HALVINGS):
            goal, approach, seed, roll_held = self._asked(current, linear * scale * dt_s,
                                                          angular * scale * dt_s)
            result = arm.ik(goal, seed, approach=None if point_first else approach,
                            bend=Bend.ANY)
            along = not point_first
            if along and not result.reached:    # the point comes first: without the approach,
                alone = arm.ik(goal, seed, bend=Bend.ANY)                       # if closer
                if alone.residual_m < result.residual_m:
                    result, along = alone, False
            ratio = _speed_ratio(result, current, allowed)
            if along and ratio > _JUMP_RATIO:   # the approach kept only by another pose of the
                alone = arm.ik(goal, seed, bend=Bend.ANY)           # arm: the point first
                alone_ratio = _speed_ratio(alone, current, allowed)
                if alone.reached and alone_ratio < ratio / _JUMP_RATIO:
                    result, along, ratio, point_first = alone, False, alone_ratio, True
            if ratio <= 1.0 + 1e-9:
                return self._made(result, goal, approach, scale, roll_held or not along)
            first = first or (result, goal, ratio)
            scale /= ratio * 1.001 if attempt < _SCALE_TRIES - 1 else 2.0
        assert first is not None
        return self._toward(current, *first, step_m=float(np.linalg.norm(linear)) * dt_s)

    def _toward(self, current: tuple[float, ...], result: IkResult, goal: np.ndarray,
                ratio: float, *, step_m: float) -> JogStep:
        """Return a step toward ``result`` at the speed limits, if it brings the tool nearer.

        Near a stretched arm the answer of every scaled-down goal lies a joint step beyond the
        limits (the arm straightens); moving toward it at the speed limits brings the tool
        nearer the goal, no farther than a tick's asked distance. A step that would swing the
        tool away (a jump to another pose of the arm) is not made: the arm holds.
        """
        arm = self._arm
        partial = tuple(float(c + (r - c) / ratio) for c, r in
                        zip(current, result.joint_angles_rad, strict=True))
        here = arm.fk(current)[-1]
        there = arm.fk(partial)[-1]
        nearer = np.linalg.norm(there - goal) < np.linalg.norm(here - goal)
        if nearer and np.linalg.norm(there - here) <= step_m + arm.options.tolerance_m:
            self._anchor(partial)
            return JogStep(partial, _tuple(goal), _tuple(self._approach), 1.0 / ratio, 'edge')
        self._anchor(current)
        return JogStep(current, _tuple(self._goal), _tuple(self._approach), 0.0, 'jump')

    def _anchor(self, angles: tuple[float, ...]) -> None:
        """Take the goal from the pose at ``angles``: its tool point and axis."""
        self._goal = np.array(self._arm.fk(angles)[-1])
        self._approach = np.array(self._arm.tool_axis(angles))
        self._last = angles

    def _asked(self, angles: tuple[float, ...], move_m: np.ndarray,
               turn_rad: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[float], bool]:
        """Return the goal, approach and seed one step asks, and whether a roll limit held it."""
        arm = self._arm
        model = arm.model
        axis = self._approach
        normal = _plane_normal(arm, angles)
        goal = self._goal + move_m
        approach = _turned(axis, normal, float(turn_rad @ normal))
        if model.yaw is not None:
            heading = _heading(arm, angles, goal) - _heading(arm, angles, self._goal)
            approach = rot_z(heading) @ approach
        seed = list(angles)
        roll_held = False
        index = model.roll_index
        if index is not None:
            joint = arm.joints[index]
            wanted = seed[index] + joint.direction * float(turn_rad @ axis)
            seed[index] = min(max(wanted, joint.min_rad), joint.max_rad)
            roll_held = abs(seed[index] - wanted) > 1e-12
        return goal, approach / np.linalg.norm(approach), seed, roll_held

    def _made(self, result: IkResult, goal: np.ndarray, approach: np.ndarray, scale: float,
              dropped: bool) -> JogStep:
        """Carry the goal on where the arm met it, else from where it got; say what held it.

        :param dropped: the approach (or the roll) was not asked as the twist wanted it
        """
        angles = tuple(float(a) for a in result.joint_angles_rad)
        missed = dropped or (result.approach_error_rad or 0.0) > _APPROACH_SLACK_RAD
        held = 'edge' if not result.reached else ('limit' if missed else '')
        if not held and scale < _SLOW_SCALE:
            held = 'slow'
        self._goal = goal if result.reached else np.array(result.position_m)
        self._approach = np.array(self._arm.tool_axis(angles)) if missed else approach
        self._last = angles
        return JogStep(angles, _tuple(goal), _tuple(approach), scale, held)


def joint_velocities(names: Sequence[str], asked: Sequence[str], velocities: Sequence[float],
                     *, topic: str) -> dict[int, float]:
    """Return joint index -> velocity of a JointJog's names and velocities [rad/s].

    :raises JogError: for more names than joints, sizes that differ, a name twice, a name
        the arm does not have (with the closest one), or a velocity that is not finite or
        beyond MAX_COMPONENT
    """
    if len(asked) > len(names):
        raise JogError('sizes', f'{topic}: {len(asked)} joint_names, more than the arm has '
                                f'({len(names)}: {", ".join(names)})')
    if len(asked) != len(velocities):
        raise JogError('sizes', f'{topic}: {len(asked)} joint_names but {len(velocities)} '
                                f'velocities; need one velocity per name')
    unknown = [name for name in asked if name not in names]
    if unknown:
        hints = ''.join(f'; {name!r}: did you mean {close[0]!r}?' for name in unknown
                        for close in [difflib.get_close_matches(name, names, n=1)] if close)
        raise JogError('unknown joint', f'{topic}: unknown joint names {unknown} (the arm '
                                        f'has {", ".join(names)}){hints}')
    if len(set(asked)) != len(asked):
        raise JogError('sizes', f'{topic}: joint_names {list(asked)} name a joint twice')
    values = checked_components(f'{topic} velocities', velocities)
    return {names.index(name): float(v) for name, v in zip(asked, values, strict=True)}


def joint_step(arm: Arm, angles: Sequence[float], velocities: dict[int, float], dt_s: float,
               speeds_rad_s: Sequence[float]) -> tuple[tuple[float, ...], list[str]]:
    """Return the joints moved by ``velocities`` for ``dt_s``, and the joints a limit holds.

    The velocities are scaled down uniformly so that none exceeds its joint's speed limit;
    each joint is clamped within its limits.
    """
    ratio = max((abs(v) / speeds_rad_s[i] for i, v in velocities.items()), default=0.0)
    scale = 1.0 / ratio if ratio > 1.0 else 1.0
    moved = [min(max(float(a), j.min_rad), j.max_rad) for j, a in zip(arm.joints, angles,
                                                                         strict=True)]
    held = []
    for index, velocity in velocities.items():
        joint = arm.joints[index]
        wanted = moved[index] + velocity * scale * dt_s
        moved[index] = min(max(wanted, joint.min_rad), joint.max_rad)
        if velocity != 0.0 and moved[index] != wanted:
            held.append(joint.name)
    return tuple(moved), held


def _speed_ratio(result: IkResult, current: Sequence[float], allowed: np.ndarray) -> float:
    """Return the most any joint's step to ``result`` asks of its allowed step (1: at it)."""
    return float(np.max(np.abs(np.subtract(result.joint_angles_rad, current)) / allowed))


def _plane_normal(arm: Arm, angles: Sequence[float]) -> np.ndarray:
    """Return the arm's vertical plane's normal (the pitch axes' direction)."""
    if arm.model.yaw is None:
        return np.array([0.0, 1.0, 0.0])
    yaw = arm.joints[0].geometric(float(angles[0]))
    return np.array([-math.sin(yaw), math.cos(yaw), 0.0])


def _heading(arm: Arm, angles: Sequence[float], point: np.ndarray) -> float:
    """Return the yaw that puts ``point`` in the arm's plane (the tool's lateral offset aside)."""
    model = arm.model
    base = np.asarray(arm.offsets.base_xyz_m)
    x, y = float(point[0] - base[0]), float(point[1] - base[1])
    radius = math.hypot(x, y)
    if radius < _HORIZONTAL_EPS_M:
        return 0.0
    lateral = model.lateral_m(model.roll_of([j.geometric(float(a)) for j, a in
                                             zip(arm.joints, angles, strict=True)]))
    return math.atan2(y, x) - math.asin(max(-1.0, min(1.0, lateral / radius)))


def _turned(vector: np.ndarray, axis: np.ndarray, angle_rad: float) -> np.ndarray:
    """Return ``vector`` turned by ``angle_rad`` about the unit ``axis`` (Rodrigues)."""
    cos, sin = math.cos(angle_rad), math.sin(angle_rad)
    return (vector * cos + np.cross(axis, vector) * sin
            + axis * float(axis @ vector) * (1.0 - cos))


def _tuple(vector: np.ndarray) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in vector)
    return (x, y, z)
