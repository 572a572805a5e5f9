"""FollowJointTrajectory and the JointTrajectory topic: ros2_control's trajectory interface.

The node side of issue 35's trajectory execution: the messages are checked and converted to the
pure core's types (:mod:`fabrik_ros.driver.trajectory`), handed to the node's trajectory host
(servo_driver's :class:`~fabrik_ros.driver.servo_driver.ServoDriver`, or sim_arm's
:class:`ExecutorHost`) in one call, and what the core reports (feedback, the end) is published.
Semantics are those of ros2_control's joint_trajectory_controller (JTC), which MoveIt assumes.

The goal's execute callback of rclpy's ActionServer runs only once the goal has ended: a
callback that awaits the end would be a coroutine task the EventsExecutor resumes without a
pause (a busy loop for as long as the goal runs), and a blocking one would stall the control
tick. So the goal is put in EXECUTING as it is accepted, and its result is produced by a plain
callback scheduled when the core reports the end
(:class:`~fabrik_ros.nodes.result_on_end.ResultOnEndServer`).
"""

from collections.abc import Callable, Hashable
from dataclasses import dataclass
import itertools
import math
import re
import time
from typing import Any, Optional, Protocol

from control_msgs.action import FollowJointTrajectory
from rclpy.action import CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectory

from fabrik_ros.driver.trajectory import (
    DEFAULT_GOAL_TIME_TOLERANCE_S,
    DEFAULT_GOAL_TOLERANCE_RAD,
    DEFAULT_PATH_TOLERANCE_RAD,
    Ending,
    JointTolerance,
    MAX_JOINT_NAMES,
    MAX_POINTS,
    Outcome,
    Refusal,
    REPLACED,
    TrajectoryEnd,
    TrajectoryExecutor,
    TrajectoryFeedback,
    TrajectoryGoal,
    TrajectoryPoint,
    TrajectorySettings,
)
from fabrik_ros.nodes.result_on_end import deliver_results, ResultOnEndServer
from fabrik_ros.nodes.ros_parameters import declare, ParameterConfigError

__all__ = ['declare_trajectory_parameters', 'ExecutorHost', 'TrajectoryActions',
           'TrajectoryHost', 'TrajectoryParameters']

_CONTROLLER_NAME = re.compile(r'[A-Za-z][A-Za-z0-9_]*(/[A-Za-z][A-Za-z0-9_]*)*')


class TrajectoryHost(Protocol):
    """The trajectory calls a node's core offers (ServoDriver's; sim_arm's ExecutorHost)."""

    def check_trajectory(self, goal: TrajectoryGoal) -> Optional[Refusal]:
        """Return why ``goal`` would be refused now, None if it would be taken."""

    def start_trajectory(self, goal_id: Hashable, goal: TrajectoryGoal) -> Optional[Refusal]:
        """Start ``goal`` (replacing the running one); return why not, or None."""

    def cancel_trajectory(self, goal_id: Hashable) -> bool:
        """Stop ``goal_id`` and hold; return False if it is not the running goal."""

    def trajectory_feedback(self) -> Optional[tuple[Hashable, TrajectoryFeedback]]:
        """Return the running goal's id and feedback, None when none runs."""

    def take_trajectory_ends(self) -> list[TrajectoryEnd]:
        """Return the goals that ended since the last call, and forget them."""

    def set_trajectory_settings(self, settings: TrajectorySettings) -> None:
        """Use ``settings`` (the defaults of the goals) from now on."""


@dataclass(frozen=True)
class TrajectoryParameters:
    """The trajectory parameters of a node, as declared."""

    controller_name: str
    settings: TrajectorySettings
    feedback_rate_hz: float


def declare_trajectory_parameters(node: Node) -> TrajectoryParameters:
    """Declare the trajectory parameters on ``node`` and return their values.

    :raises ParameterConfigError: for a controller name that is no relative ROS name
    """
    name = declare(node, 'trajectory_controller_name', 'arm_controller', 'Prefix of the '
                   'FollowJointTrajectory action (<name>/follow_joint_trajectory) and the '
                   'JointTrajectory topic (<name>/joint_trajectory); relative: it follows the '
                   "node's namespace")
    if not _CONTROLLER_NAME.fullmatch(name):
        raise ParameterConfigError('trajectory_controller_name', name, 'must be a relative ROS '
                                   'name: words of letters, digits and _ (each starting with a '
                                   'letter) joined by /')
    partial = declare(node, 'allow_partial_joints_goal', False, 'Take trajectories that name '
                      'only some of the joints (the others hold); as the JTC parameter')
    path = declare(node, 'trajectory.path_tolerance_rad', DEFAULT_PATH_TOLERANCE_RAD,
                   'How far a joint may be from the trajectory while it runs, where a goal '
                   'leaves it 0 [rad]; 0 or -1 = not checked', floats=(-1.0, 2 * math.pi))
    goal = declare(node, 'trajectory.goal_tolerance_rad', DEFAULT_GOAL_TOLERANCE_RAD,
                   'How far a joint may be from the last point at the end, where a goal '
                   'leaves it 0 [rad]; 0 or -1 = not checked', floats=(-1.0, 2 * math.pi))
    goal_time = declare(node, 'trajectory.goal_time_tolerance_s', DEFAULT_GOAL_TIME_TOLERANCE_S,
                        'How long after the last point the joints may take to get within the '
                        'goal tolerance, where a goal leaves it 0 [s]; 0 = as long as it takes',
                        floats=(0.0, 60.0))
    rate = declare(node, 'action_monitor_rate', 10.0, 'How often a running '
                   'FollowJointTrajectory goal gets feedback [Hz]; as the JTC parameter',
                   floats=(0.1, 100.0))
    return TrajectoryParameters(name, TrajectorySettings(
        path_tolerance_rad=path, goal_tolerance_rad=goal, goal_time_tolerance_s=goal_time,
        allow_partial_joints_goal=partial), rate)


class ExecutorHost:
    """The trajectory calls of ServoDriver for a node that holds a TrajectoryExecutor (sim_arm).

    :param current: returns the joints' positions now, in joint order [rad]
    :param clock: the executor's clock [s]
    """

    def __init__(self, executor: TrajectoryExecutor, current: Callable[[], tuple[float, ...]],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._executor = executor
        self._current = current
        self._clock = clock

    def check_trajectory(self, goal: TrajectoryGoal) -> Optional[Refusal]:
        """Return why ``goal`` would be refused now, None if it would be taken."""
        return self._executor.check(goal, now_s=self._clock(), current=self._current())

    def start_trajectory(self, goal_id: Hashable, goal: TrajectoryGoal) -> Optional[Refusal]:
        """Start ``goal`` from where the joints are; return why not, or None."""
        return self._executor.start(goal_id, goal, now_s=self._clock(), current=self._current())

    def cancel_trajectory(self, goal_id: Hashable) -> bool:
        """Stop ``goal_id`` and hold where the joints are."""
        return self._executor.cancel(goal_id, now_s=self._clock())

    def trajectory_feedback(self) -> Optional[tuple[Hashable, TrajectoryFeedback]]:
        """Return the running goal's id and feedback, None when none runs."""
        return self._executor.feedback(self._clock(), self._current())

    def take_trajectory_ends(self) -> list[TrajectoryEnd]:
        """Return the goals that ended since the last call."""
        return self._executor.take_ends()

    def set_trajectory_settings(self, settings: TrajectorySettings) -> None:
        """Use ``settings`` from now on."""
        self._executor.set_settings(settings)

    def targets(self, targets: tuple[float, ...]) -> tuple[float, ...]:
        """Return where the joints go now: the running trajectory's sample, else ``targets``."""
        desired = self._executor.desired(self._clock())
        return targets if desired is None else desired

    def update(self, measured: bool = True) -> None:
        """Check the running goal's tolerances and end against where the joints are now."""
        self._executor.update(self._clock(), self._current(), measured)

    def abort(self, message: str, *, hold: bool = True) -> None:
        """End the running goal, if any, aborted with ``message``.

        :param hold: False when the joints follow something else at once (a joint command)
        """
        self._executor.abort(message, now_s=self._clock(), actual=self._current(), hold=hold)


class TrajectoryActions:
    """Serve ``<name>/follow_joint_trajectory`` and take ``<name>/joint_trajectory`` for a node.

    :param host: the node's core (see :class:`TrajectoryHost`)
    :param parameters: what :func:`declare_trajectory_parameters` returned
    :param clock: the host's clock [s]: a goal's header.stamp is converted to it
    :param started: called once a goal has started (servo_driver's tick speeds up then)
    """

    def __init__(self, node: Node, host: TrajectoryHost, parameters: TrajectoryParameters, *,
                 clock: Callable[[], float] = time.monotonic,
                 started: Callable[[], None] = lambda: None) -> None:
        self._node = node
        self._started = started
        self._host = host
        self._clock = clock
        self._log = node.get_logger()
        host.set_trajectory_settings(parameters.settings)
        self._feedback_s = 1.0 / parameters.feedback_rate_hz
        self._last_feedback_s = -math.inf
        prefix = parameters.controller_name
        self._topic = f'{prefix}/joint_trajectory'
        # Goals accepted and not yet ended, by goal id; the end waiting for its result.
        self._handles: dict[Hashable, ServerGoalHandle] = {}
        self._ends: dict[Hashable, TrajectoryEnd] = {}
        # Why a goal stopped when it ended canceled without a cancel request.
        self._stopped: dict[Hashable, str] = {}
        self._running: Optional[Hashable] = None
        self._topic_ids = itertools.count(1)
        self._checked: Optional[tuple[Any, TrajectoryGoal]] = None
        self._server = ResultOnEndServer(
            node, FollowJointTrajectory, f'{prefix}/follow_joint_trajectory', self._result_of,
            goal_callback=self._on_goal, handle_accepted_callback=self._on_accepted,
            cancel_callback=self._on_cancel)
        node.create_subscription(JointTrajectory, self._topic, self._on_trajectory, 10)

    # -- the action ------------------------------------------------------------------------------

    def _on_goal(self, request: Any) -> GoalResponse:
        goal, refusal = self._goal_of(request)
        if refusal is None and goal is not None:
            refusal = self._host.check_trajectory(goal)
        if refusal is not None or goal is None:
            self._refused('FollowJointTrajectory goal', refusal)
            return GoalResponse.REJECT
        self._checked = (request, goal)
        return GoalResponse.ACCEPT

    def _on_accepted(self, goal_handle: ServerGoalHandle) -> None:
        checked, self._checked = self._checked, None
        if checked is not None and checked[0] is goal_handle.request:
            goal: Optional[TrajectoryGoal] = checked[1]
            refusal = None
        else:
            goal, refusal = self._goal_of(goal_handle.request)
        goal_id = bytes(goal_handle.goal_id.uuid)
        self._handles[goal_id] = goal_handle
        goal_handle.execute()
        if goal is not None:
            refusal = self._host.start_trajectory(goal_id, goal)
        if refusal is not None:       # the driver changed since the check (disabled, unplugged)
            self._ended(TrajectoryEnd(goal_id, Ending.ABORTED, refusal.code, refusal.message))
            return
        self._running = goal_id
        self._started()
        self.poll()

    def _on_cancel(self, goal_handle: ServerGoalHandle) -> CancelResponse:
        goal_id = bytes(goal_handle.goal_id.uuid)
        if goal_id not in self._handles:
            return CancelResponse.REJECT
        if goal_id not in self._ends:
            self._host.cancel_trajectory(goal_id)
        return CancelResponse.ACCEPT

    def _result_of(self, goal_handle: ServerGoalHandle) -> Any:
        """Execute callback, run once the goal ended: set its final state, return the result."""
        goal_id = bytes(goal_handle.goal_id.uuid)
        end = self._ends.pop(goal_id, None)
        self._handles.pop(goal_id, None)
        reason = self._stopped.pop(goal_id, '')
        result = FollowJointTrajectory.Result()
        if end is None:      # not seen to end (cannot happen): say so rather than succeed
            end = TrajectoryEnd(goal_id, Ending.ABORTED, Outcome.INVALID_GOAL,
                                'the goal ended without a word from the driver')
        result.error_code = int(end.code)
        result.error_string = end.message
        if goal_handle.is_active:
            if end.ending is Ending.SUCCEEDED:
                goal_handle.succeed()
            elif end.ending is Ending.CANCELED and goal_handle.is_cancel_requested:
                goal_handle.canceled()
            else:
                result.error_string = reason or end.message
                goal_handle.abort()
        return result

    # -- the topic -------------------------------------------------------------------------------

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        if not msg.points:
            running = self._running
            if running is not None:
                self._stopped[running] = (f'stopped by an empty JointTrajectory on '
                                          f'{self._topic}: holding')
                self._host.cancel_trajectory(running)
                self._log.info(f'an empty JointTrajectory on {self._topic}: stopped, holding')
            return
        goal, refusal = self._goal_of_trajectory(msg, (), (), 0.0)
        goal_id = ('topic', next(self._topic_ids))
        if goal is not None:
            refusal = self._host.start_trajectory(goal_id, goal)
        if refusal is not None or goal is None:
            self._refused(f'JointTrajectory on {self._topic}', refusal)
            return
        self._running = goal_id
        self._started()
        self.poll()

    # -- the control tick --------------------------------------------------------------------

    def poll(self) -> None:
        """Publish feedback when it is due and send the results of the goals that ended.

        Call it on the node's control tick, after the core's step.
        """
        for end in self._host.take_trajectory_ends():
            self._ended(end)
        now_s = time.monotonic()
        if now_s - self._last_feedback_s < self._feedback_s:
            return
        report = self._host.trajectory_feedback()
        if report is None:
            return
        goal_id, feedback = report
        handle = self._handles.get(goal_id)
        if handle is None or goal_id in self._ends or not handle.is_active:
            return
        self._last_feedback_s = now_s
        handle.publish_feedback(self._feedback_msg(feedback))

    def _ended(self, end: TrajectoryEnd) -> None:
        if end.goal_id == self._running:
            self._running = None
        self._log_end(end)
        handle = self._handles.get(end.goal_id)
        if handle is None:
            self._stopped.pop(end.goal_id, None)
            return
        self._ends[end.goal_id] = end
        self._server.send_result(handle)

    def _log_end(self, end: TrajectoryEnd) -> None:
        action = end.goal_id in self._handles
        what = 'FollowJointTrajectory goal' if action else f'JointTrajectory on {self._topic}'
        reason = self._stopped.get(end.goal_id) or end.message
        if end.message == REPLACED and not action:
            # A topic stream (rqt_joint_trajectory_controller) replaces each message by the next.
            self._log.debug(f'{what} {REPLACED}')
        elif end.message == REPLACED:
            self._log.info(f'{what} {REPLACED}')
        elif end.ending is Ending.SUCCEEDED:
            self._log.info(f'{what} done: {end.message}')
        elif end.ending is Ending.ABORTED:
            self._log.warning(f'{what} aborted ({end.code.name}): {reason}')
        else:
            self._log.info(f'{what}: {reason}')

    def shutdown(self) -> None:
        """End every goal that still runs (aborted: the node stops) and send its result.

        Call it while the node is still on its executor (as spin.py does): the results go out
        on a few more spins of it.
        """
        for end in self._host.take_trajectory_ends():
            self._ended(end)
        for goal_id in list(self._handles):
            if goal_id not in self._ends:
                self._ended(TrajectoryEnd(goal_id, Ending.ABORTED, Outcome.INVALID_GOAL,
                                          f'{self._node.get_name()} shut down during the goal'))
        if self._ends:
            deliver_results(self._node, lambda: bool(self._handles))

    # -- conversions -----------------------------------------------------------------------------

    def _goal_of(self, request: Any) -> tuple[Optional[TrajectoryGoal], Optional[Refusal]]:
        """Return the goal a FollowJointTrajectory request asks for, or why it is refused."""
        multi = request.multi_dof_trajectory
        if multi.points or multi.joint_names:
            return None, Refusal(Outcome.INVALID_GOAL, 'multi_dof_trajectory is not supported: '
                                 'the arm has single-axis joints only; leave it empty')
        tolerances = []
        for field in ('path_tolerance', 'goal_tolerance'):
            given = getattr(request, field)
            if len(given) > MAX_JOINT_NAMES:
                return None, _too_many(f'{field} entries', len(given), MAX_JOINT_NAMES)
            entries = []
            for entry in given:
                if not math.isfinite(entry.position):
                    return None, Refusal(Outcome.INVALID_GOAL, f'{field} of {entry.name!r}: '
                                         f'position {entry.position} is not a finite number')
                entries.append(JointTolerance(str(entry.name), float(entry.position)))
            tolerances.append(tuple(entries))
        goal_time_s = _seconds(request.goal_time_tolerance)
        if goal_time_s < 0.0:
            return None, Refusal(Outcome.INVALID_GOAL, f'goal_time_tolerance = {goal_time_s} s '
                                 'is negative: give 0 (the default) or more')
        return self._goal_of_trajectory(request.trajectory, tolerances[0], tolerances[1],
                                        goal_time_s)

    def _goal_of_trajectory(self, msg: JointTrajectory, path: tuple[JointTolerance, ...],
                            goal: tuple[JointTolerance, ...], goal_time_s: float
                            ) -> tuple[Optional[TrajectoryGoal], Optional[Refusal]]:
        names = tuple(str(name) for name in msg.joint_names)
        if len(names) > MAX_JOINT_NAMES:
            return None, _too_many('joint names', len(names), MAX_JOINT_NAMES)
        if len(msg.points) > MAX_POINTS:
            return None, _too_many('points', len(msg.points), MAX_POINTS)
        points = []
        for index, point in enumerate(msg.points):
            values = []
            for field in ('positions', 'velocities', 'accelerations'):
                numbers = tuple(float(v) for v in getattr(point, field))
                if len(numbers) > MAX_JOINT_NAMES:
                    return None, _too_many(f'point {index} {field}', len(numbers),
                                           MAX_JOINT_NAMES)
                bad = next((v for v in numbers if not math.isfinite(v)), None)
                if bad is not None:
                    return None, Refusal(Outcome.INVALID_GOAL, f'point {index}: {field} holds '
                                         f'{bad}, not a finite number')
                values.append(numbers)
            points.append(TrajectoryPoint(_seconds(point.time_from_start), *values))
        return TrajectoryGoal(joint_names=names, points=tuple(points),
                              start_s=self._start_s(msg), path_tolerance=path,
                              goal_tolerance=goal, goal_time_tolerance_s=goal_time_s), None

    def _start_s(self, msg: JointTrajectory) -> Optional[float]:
        """Return the header stamp on the host's clock, None for a zero stamp (start now)."""
        stamp = msg.header.stamp
        if stamp.sec == 0 and stamp.nanosec == 0:
            return None
        # In integers, not rclpy's Time: that refuses a negative stamp (a goal from outside).
        ahead_ns = stamp.sec * 1_000_000_000 + stamp.nanosec - self._node.get_clock().now(
        ).nanoseconds
        return self._clock() + ahead_ns * 1e-9

    def _feedback_msg(self, feedback: TrajectoryFeedback) -> Any:
        msg = FollowJointTrajectory.Feedback()
        msg.header.stamp = self._node.get_clock().now().to_msg()
        msg.joint_names = list(feedback.joint_names)
        msg.desired.positions = list(feedback.desired)
        msg.actual.positions = list(feedback.actual)
        msg.error.positions = list(feedback.error)
        if hasattr(msg, 'index'):         # Kilted's control_msgs 6.x; Jazzy's 5.x has none
            msg.index = int(feedback.index)
        return msg

    def _refused(self, what: str, refusal: Optional[Refusal]) -> None:
        if refusal is not None:
            self._log.warning(f'{what} refused ({refusal.code.name}): {refusal.message}')


def _seconds(duration: Any) -> float:
    """Return a builtin_interfaces Duration in seconds."""
    return duration.sec + duration.nanosec * 1e-9


def _too_many(what: str, count: int, most: int) -> Refusal:
    return Refusal(Outcome.INVALID_GOAL, f'{count} {what}: at most {most} are taken')

