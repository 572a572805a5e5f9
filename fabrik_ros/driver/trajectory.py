"""Execute joint trajectories as ros2_control's joint_trajectory_controller does, without ROS.

A :class:`TrajectoryExecutor` takes FollowJointTrajectory goals (and JointTrajectory topic
messages, as goals nobody waits for), refuses at goal time what the JTC refuses and what the
servos cannot do (:mod:`.trajectory_check`), and runs one goal at a time: the host asks for
the :meth:`~TrajectoryExecutor.desired` pose every control tick, follows it (servo_driver and
sim_arm through their speed-limited motion) and reports the actual pose to
:meth:`~TrajectoryExecutor.update`, which checks the tolerances and ends the goal. The host
collects the endings with :meth:`~TrajectoryExecutor.take_ends`.

The rules, as the JTC's (where this differs, it says so):

- Sampling (:mod:`.trajectory_spline`): linear, cubic or quintic per segment, from the pose
  the trajectory starts from (the host's current command: a hobby servo tracks its command,
  as the JTC's ``interpolate_from_desired_state``); the last point is held after the end.
  A start in the future holds the start pose until then (the JTC already moves towards the
  first point while it waits); a first point at time 0 is jumped to (see
  :mod:`.trajectory_check` for how far it may be).
- Joints a partial goal leaves out hold at their current command.
- The path tolerance is checked against the actual pose from the first update until the last
  point's time; from then on the goal tolerance: SUCCESSFUL once every joint is within it,
  GOAL_TOLERANCE_VIOLATED once the goal time tolerance has passed without.
- A new goal replaces the running one, which ends ABORTED (INVALID_GOAL, as the JTC's
  preemption); a cancel ends it CANCELED. After an abort or a cancel the arm holds where it
  is: the next :meth:`~TrajectoryExecutor.desired` returns that pose once, then None.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
import enum
import math
from typing import Optional

import numpy as np

from fabrik_ros.driver.trajectory_check import CheckedGoal, GoalChecker
from fabrik_ros.driver.trajectory_goal import (
    DEFAULT_GOAL_TIME_TOLERANCE_S,
    DEFAULT_GOAL_TOLERANCE_RAD,
    DEFAULT_PATH_TOLERANCE_RAD,
    JointTolerance,
    MAX_JOINT_NAMES,
    MAX_NAME_LENGTH,
    MAX_POINTS,
    Outcome,
    Refusal,
    TrajectoryGoal,
    TrajectoryPoint,
    TrajectorySettings,
)
from fabrik_ros.driver.trajectory_spline import build_spline, Spline
from fabrik_ros.kinematics import Joint

__all__ = [
    'DEFAULT_GOAL_TIME_TOLERANCE_S', 'DEFAULT_GOAL_TOLERANCE_RAD', 'DEFAULT_PATH_TOLERANCE_RAD',
    'Ending', 'JointTolerance', 'MAX_JOINT_NAMES', 'MAX_NAME_LENGTH', 'MAX_POINTS', 'Outcome',
    'Refusal', 'TrajectoryEnd', 'TrajectoryExecutor', 'TrajectoryFeedback', 'TrajectoryGoal',
    'TrajectoryPoint', 'TrajectorySettings',
]

REPLACED = 'replaced by a newer goal'
CANCELED = 'canceled: holding where the arm is'
SUCCEEDED = 'goal reached: every joint within its goal tolerance'

Pose = tuple[float, ...]


class Ending(enum.Enum):
    """How a goal ended: the action's terminal states."""

    SUCCEEDED = 'succeeded'
    ABORTED = 'aborted'
    CANCELED = 'canceled'


@dataclass(frozen=True)
class TrajectoryEnd:
    """A goal that ended: which, how, the result code and a message a person can act on."""

    goal_id: Hashable
    ending: Ending
    code: Outcome
    message: str


@dataclass(frozen=True)
class TrajectoryFeedback:
    """Where a running goal is, for the goal's joints in the goal's order.

    :param desired: the sampled trajectory now [rad]
    :param actual: where the joints are (measured where the servos report, else commanded)
    :param error: desired - actual [rad]
    :param index: the point the trajectory is executed towards (the number of points after
        the end, as the JTC's)
    """

    joint_names: tuple[str, ...]
    desired: Pose
    actual: Pose
    error: Pose
    index: int


@dataclass
class _Running:
    """The goal being executed."""

    goal_id: Hashable
    checked: CheckedGoal
    spline: Spline          # every arm joint, joint order
    updated: bool = False   # whether update() has seen it (the first check is always a path one)


class TrajectoryExecutor:
    """Run one trajectory goal at a time for an arm (see the module docstring).

    Host-neutral: times are on the host's monotonic clock [s], poses every arm joint's
    position in joint order [rad].

    :param joints: the arm's joints (names, limits), joint order
    :param speeds_rad_s: the fastest each joint may move [rad/s], joint order
    :param settings: the default tolerances, and whether partial goals are allowed
    :param aux_names: the arm's auxiliary servos, named in refusals (driven by the gripper
        action instead)
    :param speed_parameter: the host's parameter holding the speed limits, named in refusals
    """

    def __init__(self, joints: Sequence[Joint], speeds_rad_s: Sequence[float],
                 settings: TrajectorySettings, *, aux_names: Sequence[str] = (),
                 speed_parameter: str = 'max_speed_rad_s') -> None:
        self._checker = GoalChecker(joints, speeds_rad_s, settings, aux_names=aux_names,
                                    speed_parameter=speed_parameter)
        self._running: Optional[_Running] = None
        self._hold: Optional[Pose] = None
        self._actual: Optional[Pose] = None
        self._ends: list[TrajectoryEnd] = []

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the arm's joint names, in joint order."""
        return self._checker.names

    @property
    def active_goal(self) -> Optional[Hashable]:
        """Return the id of the goal running, None if none is."""
        return None if self._running is None else self._running.goal_id

    def set_speeds(self, speeds_rad_s: Sequence[float]) -> None:
        """Change the speed limits [rad/s] that goals are checked against, from the next goal."""
        self._checker.speeds_rad_s = tuple(float(s) for s in speeds_rad_s)

    def set_settings(self, settings: TrajectorySettings) -> None:
        """Change the default tolerances and the partial-goal rule, from the next goal on."""
        self._checker.settings = settings

    # -- goals ---------------------------------------------------------------------------------

    def check(self, goal: TrajectoryGoal, *, now_s: float,
              current: Optional[Sequence[float]] = None) -> Optional[Refusal]:
        """Return why ``goal`` would be refused, None if it would be accepted.

        :param current: the pose it would start from [rad, joint order]; None leaves out the
            checks of the way from there to the first point (:meth:`start` makes them)
        """
        checked = self._checker.check(goal, now_s=now_s, current=current)
        return checked if isinstance(checked, Refusal) else None

    def start(self, goal_id: Hashable, goal: TrajectoryGoal, *, now_s: float,
              current: Sequence[float]) -> Optional[Refusal]:
        """Run ``goal`` from ``current``, replacing the running goal; or say why not.

        A refused goal leaves the running one running.

        :param current: the pose the trajectory starts from [rad, joint order]: the host's
            current command
        :raises ValueError: if ``current`` does not hold one finite position per joint
        """
        pose = self._pose(current, 'current')
        checked = self._checker.check(goal, now_s=now_s, current=pose)
        if isinstance(checked, Refusal):
            return checked
        self._end(Ending.ABORTED, Outcome.INVALID_GOAL, REPLACED, hold=None)
        self._hold, self._actual = None, None
        self._running = _Running(goal_id, checked, _full_spline(checked, pose))
        return None

    def cancel(self, goal_id: Hashable, *, now_s: float,
               actual: Optional[Sequence[float]] = None) -> bool:
        """End the goal ``goal_id`` CANCELED if it runs, holding where the arm is.

        :param actual: where the arm is [rad, joint order]; default: the pose the last
            :meth:`update` was given, else the trajectory's desired pose now
        :return: True if it was running
        """
        running = self._running
        if running is None or running.goal_id != goal_id:
            return False
        self._end(Ending.CANCELED, Outcome.SUCCESSFUL, CANCELED,
                  hold=self._where(now_s, actual))
        return True

    def abort(self, message: str, *, now_s: Optional[float] = None,
              actual: Optional[Sequence[float]] = None, hold: bool = True) -> None:
        """End the running goal ABORTED (INVALID_GOAL, as the JTC's deactivation) with ``message``.

        For the host's reasons: the driver disabled, the board lost, a joint command took over.

        :param actual: where the arm is, as for :meth:`cancel`
        :param hold: False when the host follows something else at once (a joint command), so
            :meth:`desired` gives no pose to hold
        """
        if self._running is None:
            return
        where = self._where(now_s, actual) if hold else None
        self._end(Ending.ABORTED, Outcome.INVALID_GOAL, message, hold=where)

    # -- control ticks ---------------------------------------------------------------------------

    def desired(self, now_s: float) -> Optional[Pose]:
        """Return the pose to follow now [rad, joint order], None when there is nothing to follow.

        While a goal runs: the sampled trajectory. Once, after an abort or a cancel: the pose
        to hold (where the arm was then).
        """
        running = self._running
        if running is not None:
            return _pose_of(running.spline.sample(now_s - running.checked.start_s))
        hold, self._hold = self._hold, None
        return hold

    def update(self, now_s: float, actual: Sequence[float], measured: bool) -> None:
        """Check the running goal's tolerances against ``actual`` and end it if it is done.

        :param actual: where the joints are [rad, joint order]
        :param measured: True if ``actual`` is measured (the servos report it), False if it is
            the command (named so in the messages)
        :raises ValueError: if ``actual`` does not hold one finite position per joint
        """
        pose = self._pose(actual, 'actual')
        self._actual = pose
        running = self._running
        if running is None:
            return
        checked = running.checked
        since_start = now_s - checked.start_s
        desired = running.spline.sample(since_start)
        error = desired - np.asarray(pose)
        end_s = running.spline.end_s
        first, running.updated = not running.updated, True
        source = 'measured' if measured else 'commanded'
        if since_start < end_s or first:
            strayed = self._outside(desired, pose, error, checked.path_tolerance_rad, source)
            if strayed:
                self._end(Ending.ABORTED, Outcome.PATH_TOLERANCE_VIOLATED,
                          f'path tolerance violated at {since_start:.3f} s: {strayed}; holding '
                          'where the arm is', hold=pose)
                return
        if since_start < end_s:
            return
        missed = self._outside(desired, pose, error, checked.goal_tolerance_rad, source)
        if not missed:
            self._end(Ending.SUCCEEDED, Outcome.SUCCESSFUL, SUCCEEDED, hold=None)
        elif since_start - end_s > checked.goal_time_tolerance_s:
            self._end(Ending.ABORTED, Outcome.GOAL_TOLERANCE_VIOLATED,
                      f'goal tolerance not met {since_start - end_s:.3f} s after the end '
                      f'(goal_time_tolerance {checked.goal_time_tolerance_s:.3f} s): {missed}; '
                      'holding where the arm is', hold=pose)

    def feedback(self, now_s: float,
                 actual: Sequence[float]) -> Optional[tuple[Hashable, TrajectoryFeedback]]:
        """Return the running goal's id and feedback, None if no goal runs.

        :param actual: where the joints are [rad, joint order]
        """
        running = self._running
        if running is None:
            return None
        since_start = now_s - running.checked.start_s
        desired = running.spline.sample(since_start)
        columns = running.checked.columns
        names = tuple(self._checker.names[i] for i in columns)
        wanted = tuple(float(desired[i]) for i in columns)
        where = tuple(float(actual[i]) for i in columns)
        return running.goal_id, TrajectoryFeedback(
            names, wanted, where, tuple(d - a for d, a in zip(wanted, where, strict=True)),
            running.spline.towards_point(since_start))

    def take_ends(self) -> list[TrajectoryEnd]:
        """Return the goals that ended since the last call, oldest first."""
        ends, self._ends = self._ends, []
        return ends

    # -- internals ---------------------------------------------------------------------------

    def _end(self, ending: Ending, code: Outcome, message: str, *, hold: Optional[Pose]) -> None:
        running = self._running
        if running is None:
            return
        self._running = None
        self._hold = hold
        self._ends.append(TrajectoryEnd(running.goal_id, ending, code, message))

    def _where(self, now_s: Optional[float], actual: Optional[Sequence[float]]) -> Pose:
        """Return where the arm is: ``actual``, else the last update's, else the desired pose."""
        if actual is not None:
            return self._pose(actual, 'actual')
        if self._actual is not None:
            return self._actual
        running = self._running
        if running is None:
            return ()
        since_start = -math.inf if now_s is None else now_s - running.checked.start_s
        return _pose_of(running.spline.sample(since_start))

    def _pose(self, values: Sequence[float], name: str) -> Pose:
        pose = tuple(float(v) for v in values)
        names = self._checker.names
        if len(pose) != len(names) or not all(math.isfinite(v) for v in pose):
            raise ValueError(f'{name} = {pose!r}, must hold {len(names)} finite positions (one '
                             f'per joint: {", ".join(names)})')
        return pose

    def _outside(self, desired: np.ndarray, actual: Pose, error: np.ndarray,
                 tolerances: Sequence[float], source: str) -> str:
        """Say which joints are beyond their tolerance ('' if none)."""
        parts = []
        for index, (name, tolerance) in enumerate(zip(self._checker.names, tolerances,
                                                      strict=True)):
            if abs(float(error[index])) > tolerance:
                parts.append(f'{name} desired {float(desired[index]):.4f} rad, {source} '
                             f'{actual[index]:.4f} rad, error {float(error[index]):+.4f} beyond '
                             f'the tolerance {tolerance:.4f} rad')
        return '; '.join(parts)


def _full_spline(checked: CheckedGoal, current: Pose) -> Spline:
    """Return the spline of every arm joint: the goal's, and the others held at ``current``."""
    count = len(checked.times_s)
    start = np.asarray(current, dtype=float)
    positions = np.repeat(start[None, :], count, axis=0)
    columns = list(checked.columns)
    positions[:, columns] = checked.positions

    def widened(values: Optional[np.ndarray]) -> Optional[np.ndarray]:
        if values is None:
            return None
        full = np.where(np.isnan(values[:, :1]), np.nan, 0.0) * np.ones((1, len(current)))
        full[:, columns] = values
        return full

    return build_spline(start, checked.times_s, positions, widened(checked.velocities),
                        widened(checked.accelerations))


def _pose_of(values: np.ndarray) -> Pose:
    return tuple(float(v) for v in values)
