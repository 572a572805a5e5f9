"""Decide at goal time whether a joint trajectory is accepted, and if not, say why.

The rules are those of ros2_control's joint_trajectory_controller (``validate_trajectory_msg``,
the tolerances), plus what a hobby servo needs: every point and every interpolated curve within
the joint limits, and no joint faster than its speed limit anywhere, the way from the start
pose to the first point included (refused, naming the joint and the speed it needs; a
trajectory is never slowed down behind its sender's back). The goal is hostile input: its
sizes are bounded before anything is built from it, and every number must be finite.

A first point at time 0 is, as in the JTC, jumped to at the start. The servos still never
jump (the slew limiter moves them at their speed limit), so such a point may be away from the
start pose by at most the joint's path tolerance: farther, the JTC would abort the goal on its
first sample with PATH_TOLERANCE_VIOLATED, and refusing it says why before anything moves.
With the path tolerance off, any distance is accepted and covered at the speed limit. A start
in the past is sampled from where the trajectory is now, and refused the same way if that is
beyond the path tolerance from the arm.
"""

from collections.abc import Sequence
from dataclasses import dataclass
import difflib
import math
from typing import Optional, Union

import numpy as np

from fabrik_ros.driver.trajectory_goal import (
    JointTolerance,
    MAX_JOINT_NAMES,
    MAX_NAME_LENGTH,
    MAX_POINTS,
    Outcome,
    Refusal,
    TrajectoryGoal,
    TrajectorySettings,
)
from fabrik_ros.driver.trajectory_spline import Array, build_spline, peaks, Spline
from fabrik_ros.kinematics import Joint

# The JTC's test for a zero velocity at the last point (a float's epsilon).
_ZERO_VELOCITY = float(np.finfo(np.float32).eps)
_LIMIT_SLACK_RAD = 1e-9                 # rounding of a point placed on a limit
_SPEED_SLACK = 1e-6                     # relative: rounding of a trajectory timed at the limit
_TOO_LARGE = ('the curve between the points cannot be computed (velocities or accelerations far '
              'too large for the times between the points): give velocities and accelerations '
              'the joints can follow')


@dataclass(frozen=True)
class CheckedGoal:
    """A goal that passed every check, as arrays (goal joints as columns).

    :param columns: each goal joint's index among the arm's joints
    :param times_s: each point's time from the start [s]
    :param positions: shape (points, goal joints) [rad]
    :param velocities: same shape [rad/s], NaN rows where a point has none; None if none has
    :param accelerations: as ``velocities`` [rad/s**2]
    :param start_s: when time 0 is, on the clock [s]
    :param path_tolerance_rad: per arm joint, inf where not checked
    :param goal_tolerance_rad: per arm joint, inf where not checked
    :param goal_time_tolerance_s: grace after the end [s], inf for no limit
    """

    columns: tuple[int, ...]
    times_s: Array
    positions: Array
    velocities: Optional[Array]
    accelerations: Optional[Array]
    start_s: float
    path_tolerance_rad: tuple[float, ...]
    goal_tolerance_rad: tuple[float, ...]
    goal_time_tolerance_s: float


class GoalChecker:
    """Check goals against one arm's joints, speed limits and the server's settings.

    :param joints: the arm's joints, in joint order (names and limits)
    :param speeds_rad_s: the fastest each joint may move [rad/s], joint order
    :param settings: the default tolerances and whether partial goals are allowed
    :param aux_names: the arm's auxiliary servos (a gripper), named in refusals
    :param speed_parameter: the host's parameter holding the speed limits, named in refusals
    """

    def __init__(self, joints: Sequence[Joint], speeds_rad_s: Sequence[float],
                 settings: TrajectorySettings, *, aux_names: Sequence[str] = (),
                 speed_parameter: str = 'max_speed_rad_s') -> None:
        self.joints = tuple(joints)
        self.speed_parameter = speed_parameter
        self.names = tuple(joint.name for joint in self.joints)
        self.speeds_rad_s = tuple(float(s) for s in speeds_rad_s)
        self.settings = settings
        self.aux_names = tuple(aux_names)

    def check(self, goal: TrajectoryGoal, *, now_s: float,
              current: Optional[Sequence[float]] = None) -> Union[CheckedGoal, Refusal]:
        """Return the goal as arrays, or why it is refused.

        :param now_s: the time now, on the clock of ``goal.start_s`` [s]
        :param current: every joint's pose the trajectory would start from [rad, joint
            order]; None: the checks that need it (the way to the first point) are left out
        """
        refusal = self._check_names(goal) or self._check_points(goal)
        if refusal is None:
            refusal = self._check_time(goal, now_s) or self._check_tolerance_names(goal)
        if refusal is not None:
            return refusal
        columns = tuple(self.names.index(name) for name in goal.joint_names)
        checked = self._arrays(goal, columns, now_s)
        start = None if current is None else np.asarray(current, dtype=float)[list(columns)]
        return self._check_limits(checked) or self._check_curves(checked, start, now_s) or checked

    # -- names ---------------------------------------------------------------------------------

    def _check_names(self, goal: TrajectoryGoal) -> Optional[Refusal]:
        names = goal.joint_names
        if len(names) > MAX_JOINT_NAMES or any(len(n) > MAX_NAME_LENGTH for n in names):
            return Refusal(Outcome.INVALID_JOINTS, f'joint_names holds {len(names)} names, '
                           f'at most {MAX_JOINT_NAMES} of at most {MAX_NAME_LENGTH} characters '
                           f'each are taken (this arm has {len(self.names)} joints)')
        if not names:
            return Refusal(Outcome.INVALID_JOINTS, 'joint_names is empty: name the joints the '
                           f'points give, of {list(self.names)}')
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            return Refusal(Outcome.INVALID_JOINTS, f'joint_names names {duplicates} more than '
                           'once: each joint once')
        for name in names:
            if name not in self.names:
                return Refusal(Outcome.INVALID_JOINTS, self._unknown(name))
        missing = [n for n in self.names if n not in names]
        if missing and not self.settings.allow_partial_joints_goal:
            return Refusal(Outcome.INVALID_JOINTS, f'the goal leaves out {missing}: name every '
                           f'joint of the arm {list(self.names)} (partial goals are off: '
                           'parameter allow_partial_joints_goal)')
        return None

    def _unknown(self, name: str) -> str:
        if name in self.aux_names:
            return (f'{name!r} is an auxiliary servo, not an arm joint: it is driven by the '
                    "gripper controller's action (gripper_controller/gripper_cmd), not by "
                    f'the arm trajectory (joints {list(self.names)})')
        close = difflib.get_close_matches(name, self.names, n=1)
        hint = f'; did you mean {close[0]!r}?' if close else ''
        return f'joint {name!r} is not a joint of this arm (its joints: {list(self.names)}){hint}'

    def _check_tolerance_names(self, goal: TrajectoryGoal) -> Optional[Refusal]:
        for field in ('path_tolerance', 'goal_tolerance'):
            tolerances: tuple[JointTolerance, ...] = getattr(goal, field)
            if len(tolerances) > MAX_JOINT_NAMES:
                return Refusal(Outcome.INVALID_GOAL, f'{field} holds {len(tolerances)} '
                               f'entries, at most {MAX_JOINT_NAMES} are taken')
            names = [t.name for t in tolerances]
            for tolerance in tolerances:
                if tolerance.name not in self.names:
                    return Refusal(Outcome.INVALID_JOINTS, f'{field}: '
                                   f'{self._unknown(tolerance.name[:MAX_NAME_LENGTH])}')
                if names.count(tolerance.name) > 1:
                    return Refusal(Outcome.INVALID_GOAL, f'{field} names {tolerance.name!r} '
                                   'more than once')
                if not math.isfinite(tolerance.position):
                    return Refusal(Outcome.INVALID_GOAL, f'{field} of {tolerance.name} = '
                                   f'{tolerance.position!r}, must be finite (0 = default, '
                                   '-1 = no limit)')
        if not math.isfinite(goal.goal_time_tolerance_s):
            return Refusal(Outcome.INVALID_GOAL, 'goal_time_tolerance = '
                           f'{goal.goal_time_tolerance_s!r} s, must be finite (0 = default)')
        return None

    # -- points ----------------------------------------------------------------------------

    def _check_points(self, goal: TrajectoryGoal) -> Optional[Refusal]:
        points, count = goal.points, len(goal.joint_names)
        if not points:
            return Refusal(Outcome.INVALID_GOAL, 'the trajectory has no points')
        if len(points) > MAX_POINTS:
            return Refusal(Outcome.INVALID_GOAL, f'the trajectory has {len(points)} points, at '
                           f'most {MAX_POINTS} are taken: send it in parts')
        previous = -math.inf
        for index, point in enumerate(points):
            for field in ('positions', 'velocities', 'accelerations'):
                values = getattr(point, field)
                if len(values) != count and (field == 'positions' or values):
                    allowed = f'{count}' if field == 'positions' else f'0 or {count}'
                    return Refusal(Outcome.INVALID_GOAL, f'point {index} has {len(values)} '
                                   f'{field}, must have {allowed} (one per joint of '
                                   f'joint_names)')
                if not all(math.isfinite(v) for v in values):
                    return Refusal(Outcome.INVALID_GOAL, f'point {index} {field} '
                                   f'{list(values)} not all finite')
            if point.accelerations and not point.velocities:
                return Refusal(Outcome.INVALID_GOAL, f'point {index} has accelerations but no '
                               'velocities: the quintic needs both (or give positions only)')
            refusal = self._check_time_from_start(index, point.time_from_start_s, previous)
            if refusal is not None:
                return refusal
            previous = point.time_from_start_s
        return self._check_last_velocity(goal)

    @staticmethod
    def _check_time_from_start(index: int, time_s: float, previous_s: float) -> Optional[Refusal]:
        if not math.isfinite(time_s) or time_s < 0.0:
            return Refusal(Outcome.INVALID_GOAL, f'point {index} time_from_start = {time_s!r} '
                           's, must be finite and >= 0')
        if time_s <= previous_s:
            return Refusal(Outcome.INVALID_GOAL, f'time_from_start is not strictly increasing: '
                           f'point {index - 1} at {previous_s:.6g} s, point {index} at '
                           f'{time_s:.6g} s')
        return None

    @staticmethod
    def _check_last_velocity(goal: TrajectoryGoal) -> Optional[Refusal]:
        last = goal.points[-1]
        for name, velocity in zip(goal.joint_names, last.velocities, strict=False):
            if abs(velocity) > _ZERO_VELOCITY:
                return Refusal(Outcome.INVALID_GOAL, f'the last point gives {name} a velocity '
                               f'of {velocity:.6g} rad/s: a trajectory must end at rest')
        return None

    @staticmethod
    def _check_time(goal: TrajectoryGoal, now_s: float) -> Optional[Refusal]:
        if goal.start_s is None:
            return None
        if not math.isfinite(goal.start_s):
            return Refusal(Outcome.INVALID_GOAL, f'the start time (header.stamp) is '
                           f'{goal.start_s!r}, must be finite (0 = now)')
        end_s = goal.start_s + goal.points[-1].time_from_start_s
        if end_s < now_s:
            return Refusal(Outcome.OLD_HEADER_TIMESTAMP, 'the trajectory ended '
                           f'{now_s - end_s:.3f} s ago (header.stamp plus the last '
                           'time_from_start is in the past): stamp it now, or 0 to start '
                           'on arrival')
        return None

    # -- arrays, limits and speeds ------------------------------------------------------------

    def _arrays(self, goal: TrajectoryGoal, columns: tuple[int, ...], now_s: float) -> CheckedGoal:
        points, count = goal.points, len(columns)

        def optional(field: str) -> Optional[Array]:
            if not any(getattr(p, field) for p in points):
                return None
            return np.array([getattr(p, field) or (math.nan,) * count for p in points],
                            dtype=float)

        path, goal_tolerance, goal_time = self._tolerances(goal)
        return CheckedGoal(columns, np.array([p.time_from_start_s for p in points], dtype=float),
                           np.array([p.positions for p in points], dtype=float),
                           optional('velocities'), optional('accelerations'),
                           now_s if goal.start_s is None else goal.start_s,
                           path, goal_tolerance, goal_time)

    def _tolerances(self, goal: TrajectoryGoal) -> tuple[tuple[float, ...], tuple[float, ...],
                                                         float]:
        settings = self.settings

        def resolved(default: float, given: tuple[JointTolerance, ...]) -> tuple[float, ...]:
            by_name = {t.name: t.position for t in given}
            values = []
            for name in self.names:
                value = by_name.get(name, 0.0)
                value = default if value == 0.0 else value
                values.append(value if value > 0.0 else math.inf)
            return tuple(values)

        goal_time = goal.goal_time_tolerance_s or settings.goal_time_tolerance_s
        return (resolved(settings.path_tolerance_rad, goal.path_tolerance),
                resolved(settings.goal_tolerance_rad, goal.goal_tolerance),
                goal_time if goal_time > 0.0 else math.inf)

    def _check_limits(self, checked: CheckedGoal) -> Optional[Refusal]:
        for column, index in enumerate(checked.columns):
            joint = self.joints[index]
            values = checked.positions[:, column]
            outside = np.nonzero((values < joint.min_rad - _LIMIT_SLACK_RAD)
                                 | (values > joint.max_rad + _LIMIT_SLACK_RAD))[0]
            if outside.size:
                point = int(outside[0])
                return Refusal(Outcome.INVALID_GOAL, f'point {point} puts {joint.name} at '
                               f'{values[point]:.4f} rad, outside its limits '
                               f'{_limits(joint)}')
        return None

    def _check_jump(self, checked: CheckedGoal, spline: Spline, start: Array,
                    now_s: float) -> Optional[Refusal]:
        """Refuse a trajectory that asks, once accepted, for a pose beyond the path tolerance.

        A first point at time 0 (jumped to at the start), or a start in the past (sampled from
        the middle of the way).
        """
        since_start = max(now_s - checked.start_s, 0.0)
        if since_start == 0.0 and checked.times_s[0] > 0.0:
            return None
        asked = spline.sample(since_start)
        for column, index in enumerate(checked.columns):
            gap = abs(float(asked[column] - start[column]))
            tolerance = checked.path_tolerance_rad[index]
            if gap <= tolerance:
                continue
            name, where = self.names[index], f'{start[column]:.4f} rad'
            if since_start == 0.0:
                return Refusal(Outcome.INVALID_GOAL, f'the first point is at time 0 but '
                               f'{name} is {gap:.4f} rad away from it (at {where}; path '
                               f'tolerance {tolerance:.4f} rad): start the trajectory where '
                               'the arm is, or give its first point a time to get there')
            return Refusal(Outcome.INVALID_GOAL, f'the trajectory started {since_start:.3f} s '
                           f'ago (header.stamp): it asks for {name} at {float(asked[column]):.4f}'
                           f' rad now, {gap:.4f} rad away from the arm (at {where}; path '
                           f'tolerance {tolerance:.4f} rad): stamp it now, or 0 to start on '
                           'arrival')
        return None

    def _check_curves(self, checked: CheckedGoal, start: Optional[Array],
                      now_s: float) -> Optional[Refusal]:
        # Finite numbers can still overflow the polynomials (an acceleration of 1e308, a
        # nanosecond between points): such a curve is refused below, never followed.
        spline = build_spline(start, checked.times_s, checked.positions, checked.velocities,
                              checked.accelerations)
        if not np.all(np.isfinite(spline.coefficients)):
            return Refusal(Outcome.INVALID_GOAL, _TOO_LARGE)
        jumped = None if start is None else self._check_jump(checked, spline, start, now_s)
        if jumped is not None:
            return jumped
        if not len(spline.coefficients):
            return None
        joints = [self.joints[i] for i in checked.columns]
        with np.errstate(all='ignore'):
            found = peaks(spline, within=(
                np.array([j.min_rad - _LIMIT_SLACK_RAD for j in joints]),
                np.array([j.max_rad + _LIMIT_SLACK_RAD for j in joints]),
                np.array([self.speeds_rad_s[i] for i in checked.columns])))
        if not all(np.all(np.isfinite(values)) for values in (found.low, found.high,
                                                              found.speed)):
            return Refusal(Outcome.INVALID_GOAL, _TOO_LARGE)
        for column, index in enumerate(checked.columns):
            refusal = self._check_column(spline, found.low[:, column], found.low_s[:, column],
                                         found.high[:, column], found.high_s[:, column], index)
            if refusal is not None:
                return refusal
            speeds = found.speed[:, column]
            limit = self.speeds_rad_s[index]
            fast = np.nonzero(speeds > limit * (1.0 + _SPEED_SLACK) + 1e-12)[0]
            if fast.size:
                segment = int(fast[np.argmax(speeds[fast])])
                at_s = found.speed_s[segment, column]
                return Refusal(Outcome.INVALID_GOAL, f'{self.names[index]} would need '
                               f'{speeds[segment]:.3f} rad/s at {at_s:.3f} s '
                               f'({_between(spline, segment)}); its limit is {limit:.3f} '
                               f'rad/s ({self.speed_parameter}): time the trajectory with that '
                               'limit')
        return None

    def _check_column(self, spline: Spline, low: Array, low_s: Array, high: Array,
                      high_s: Array, index: int) -> Optional[Refusal]:
        joint = self.joints[index]
        for values, times, beyond in ((low, low_s, low < joint.min_rad - _LIMIT_SLACK_RAD),
                                      (high, high_s, high > joint.max_rad + _LIMIT_SLACK_RAD)):
            outside = np.nonzero(beyond)[0]
            if outside.size:
                segment = int(outside[0])
                return Refusal(Outcome.INVALID_GOAL, f'{joint.name} would reach '
                               f'{values[segment]:.4f} rad at {times[segment]:.3f} s, outside '
                               f'its limits {_limits(joint)}: the curve '
                               f'{_between(spline, segment)} overshoots (add points, or give '
                               'velocities that keep it inside)')
        return None


def _limits(joint: Joint) -> str:
    return f'[{joint.min_rad:.4f}, {joint.max_rad:.4f}] rad'


def _between(spline: Spline, segment: int) -> str:
    """Say which points a segment joins, for a person."""
    towards = int(spline.towards[segment])
    if segment == 0 and towards == 0:
        return 'from the start pose to point 0'
    return f'between points {towards - 1} and {towards}'
