"""The gripper actions: GripperCommand and ParallelGripperCommand on one auxiliary servo.

``control_msgs/action/GripperCommand`` at ``<gripper_controller_name>/gripper_cmd`` (what
MoveIt's GripperCommand controller and the gripper_action_controller speak) and
``control_msgs/action/ParallelGripperCommand`` at ``<gripper_controller_name>/
parallel_gripper_cmd`` (the parallel_gripper_controller's), both relative, so they follow the
node's namespace. What a goal means lives in :mod:`fabrik_ros.driver.gripper`; here messages
become :class:`~fabrik_ros.driver.gripper.GripperGoal` and the gripper's ends become results.

A goal starts as it is accepted, and its result is produced when it ends
(:class:`~fabrik_ros.nodes.result_on_end.ResultOnEndServer`: nothing awaits while it runs).
The gripper's timer ticks the gripper's rules (its stall protection too, whatever commanded
the servo), publishes feedback at ``FEEDBACK_PERIOD_S``, turns cancel requests into holds and
sends the results of the goals that ended.
"""

from collections.abc import Callable, Hashable
from dataclasses import dataclass
import math
import time
from typing import Any, Optional, Protocol

from control_msgs import action as control_actions
from rclpy.action import CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.node import Node
from sensor_msgs.msg import JointState

from fabrik_ros.driver.aux_axis import aux_axes, AuxAxis
from fabrik_ros.driver.gripper import (
    Ending,
    GripperEnd,
    GripperGoal,
    GripperSettings,
    GripperState,
)
from fabrik_ros.driver.gripper_drive import AmbiguousGripperError, gripper_axis
from fabrik_ros.driver.gripper_sim import SimGripper
from fabrik_ros.kinematics import Arm
from fabrik_ros.nodes.result_on_end import deliver_results, ResultOnEndServer
from fabrik_ros.nodes.ros_parameters import declare, ParameterConfigError
from fabrik_ros.nodes.timers import create_timer, set_period

GripperCommand = control_actions.GripperCommand
# Both the Jazzy (5.x) and the Kilted (6.x) lines define it; served only where it exists.
ParallelGripperCommand: Any = getattr(control_actions, 'ParallelGripperCommand', None)

ACTIVE_TICK_S = 0.05        # the gripper's tick while a goal runs or the gripper moves
RESTING_TICK_S = 0.25       # ... while it stands: the stall protection still looks
FEEDBACK_PERIOD_S = 0.1     # feedback at most this often

SERVO_DOC = ("The auxiliary servo the gripper actions drive: its name in the arm file's "
             "aux_servos; '' = the arm's only one (none if it has none), none = no gripper "
             'actions')
CONTROLLER_NAME = 'gripper_controller'
CONTROLLER_NAME_DOC = ('Prefix of the gripper actions, relative to the namespace: '
                       '<name>/gripper_cmd (GripperCommand) and <name>/parallel_gripper_cmd '
                       '(ParallelGripperCommand)')
GOAL_TOLERANCE = GripperSettings().goal_tolerance
GOAL_TOLERANCE_DOC = ('How close to its goal the gripper must stand for reached_goal, in its '
                      'unit (PWM: fraction of the pulse range; bus: rad)')
GOAL_TOLERANCE_RANGE = (1e-6, 10.0)


class GripperHost(Protocol):
    """What the actions need of a node's gripper (GripperDrive, SimGripper)."""

    @property
    def name(self) -> str:
        """Return what the gripper joint is called in joint_states."""

    def refusal(self, goal: GripperGoal) -> Optional[str]:
        """Return why ``goal`` cannot start now, None when it can."""

    def start(self, goal_id: Hashable, goal: GripperGoal) -> Optional[str]:
        """Start ``goal``; return why not, None when started."""

    def cancel(self, goal_id: Hashable) -> bool:
        """Cancel ``goal_id`` if it runs, holding where the gripper stands."""

    def tick(self) -> None:
        """Run the gripper's rules once."""

    def feedback(self) -> Optional[tuple[Hashable, GripperState]]:
        """Return the running goal's id and state."""

    def take_ends(self) -> list[GripperEnd]:
        """Return the goals that ended since the last call."""

    @property
    def busy(self) -> bool:
        """Return True while a goal runs or the gripper moves."""


@dataclass(frozen=True)
class GripperParameters:
    """The gripper parameters both servo_driver and sim_arm have, as declared."""

    servo: str
    controller_name: str
    goal_tolerance: float


def declare_gripper_parameters(node: Node) -> GripperParameters:
    """Declare the gripper parameters both servo_driver and sim_arm have; return them.

    servo_driver declares these and its own in :mod:`fabrik_ros.nodes.gripper_driver`, with
    the same descriptions (the table of node parameters reads each node's declare calls).
    """
    servo = declare(node, 'gripper_servo', '', SERVO_DOC)
    name = declare(node, 'gripper_controller_name', CONTROLLER_NAME, CONTROLLER_NAME_DOC)
    tolerance = declare(node, 'gripper_goal_tolerance', GOAL_TOLERANCE, GOAL_TOLERANCE_DOC,
                        floats=GOAL_TOLERANCE_RANGE)
    return GripperParameters(servo, name, tolerance)


@dataclass
class _Goal:
    handle: ServerGoalHandle
    parallel: bool
    fed_at_s: float = -math.inf
    result: Any = None          # set once the goal has ended


class GripperActions:
    """Serve both gripper actions for ``host`` on ``node`` (see the module docstring).

    :param node: the node that serves them
    :param host: the gripper
    :param controller_name: the actions' prefix (``gripper_controller_name``)
    :param clock: monotonic time [s], for the feedback's pace
    """

    def __init__(self, node: Node, host: GripperHost, *, controller_name: str,
                 clock: Callable[[], float]) -> None:
        self._node, self._host, self._clock = node, host, clock
        self._goals: dict[Hashable, _Goal] = {}
        prefix = controller_name.strip('/')
        self._servers = [ResultOnEndServer(
            node, GripperCommand, f'{prefix}/gripper_cmd', self._result_of,
            goal_callback=lambda goal: self._on_goal(goal, parallel=False),
            handle_accepted_callback=lambda handle: self._on_accepted(handle, parallel=False),
            cancel_callback=self._on_cancel)]
        if ParallelGripperCommand is not None:
            self._servers.append(ResultOnEndServer(
                node, ParallelGripperCommand, f'{prefix}/parallel_gripper_cmd', self._result_of,
                goal_callback=lambda goal: self._on_goal(goal, parallel=True),
                handle_accepted_callback=lambda handle: self._on_accepted(handle,
                                                                          parallel=True),
                cancel_callback=self._on_cancel))
        self._timer = create_timer(node, RESTING_TICK_S, self._on_timer)

    def destroy(self) -> None:
        """Destroy the action servers and the timer."""
        for server in self._servers:
            server.destroy()
        self._node.destroy_timer(self._timer)

    # -- goals ---------------------------------------------------------------------------------

    def _on_goal(self, request: Any, *, parallel: bool) -> GoalResponse:
        goal, refusal = self._goal_of(request, parallel=parallel)
        if goal is not None:
            refusal = self._host.refusal(goal)
        if refusal is not None:
            self._node.get_logger().warning(f'gripper goal refused: {refusal}')
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _goal_of(self, request: Any, *, parallel: bool
                 ) -> tuple[Optional[GripperGoal], Optional[str]]:
        """Return the goal a message asks for, or why it cannot be one."""
        if not parallel:
            command = request.command
            return GripperGoal(float(command.position), float(command.max_effort)), None
        state = request.command
        names, positions = list(state.name), list(state.position)
        if names and names != [self._host.name]:
            return None, (f'command.name = {names[:3]!r}, must be [] or '
                          f'[{self._host.name!r}] (the gripper joint)')
        sizes = (len(positions), len(state.velocity), len(state.effort))
        if sizes[0] != 1 or sizes[1] > 1 or sizes[2] > 1:
            return None, (f'command has {sizes[0]} positions, {sizes[1]} velocities and '
                          f'{sizes[2]} efforts, must have 1 position and at most 1 of each '
                          'other')
        speed = float(state.velocity[0]) if sizes[1] else None
        effort = float(state.effort[0]) if sizes[2] else 0.0
        return GripperGoal(float(positions[0]), effort, speed), None

    def _on_accepted(self, handle: ServerGoalHandle, *, parallel: bool) -> None:
        goal_id = bytes(handle.goal_id.uuid)
        self._goals[goal_id] = _Goal(handle, parallel)
        handle.execute()
        goal, refusal = self._goal_of(handle.request, parallel=parallel)
        if goal is not None:
            refusal = self._host.start(goal_id, goal)
        if refusal is not None or goal is None:     # the driver changed since the goal check
            self._node.get_logger().warning(f'gripper goal aborted: {refusal}')
            self._close(goal_id, Ending.ABORTED, None)
            return
        self._finish_ended()
        self._pace()

    def _result_of(self, handle: ServerGoalHandle) -> Any:
        """Execute callback, run once the goal ended (its final state is set): the result."""
        goal = self._goals.pop(bytes(handle.goal_id.uuid), None)
        if goal is None or goal.result is None:     # not seen to end (cannot happen)
            if handle.is_active:
                handle.abort()
            return (ParallelGripperCommand if goal is not None and goal.parallel
                    else GripperCommand).Result()
        return goal.result

    def _on_cancel(self, handle: ServerGoalHandle) -> CancelResponse:
        return CancelResponse.ACCEPT

    # -- the tick ------------------------------------------------------------------------------

    def _on_timer(self) -> None:
        for goal_id, goal in list(self._goals.items()):
            if goal.result is None and goal.handle.is_cancel_requested:
                if not self._host.cancel(goal_id):
                    self._close(goal_id, Ending.CANCELED, None)
        self._host.tick()
        self._finish_ended()
        self._publish_feedback()
        self._pace()

    def _pace(self) -> None:
        set_period(self._timer, ACTIVE_TICK_S if self._host.busy else RESTING_TICK_S)

    def _publish_feedback(self) -> None:
        running = self._host.feedback()
        if running is None:
            return
        goal_id, state = running
        goal = self._goals.get(goal_id)
        now = self._clock()
        if goal is None or goal.result is not None or now - goal.fed_at_s < FEEDBACK_PERIOD_S:
            return
        goal.fed_at_s = now
        action = ParallelGripperCommand if goal.parallel else GripperCommand
        feedback = action.Feedback()
        if goal.parallel:
            feedback.state = self._joint_state(state)
        else:
            _fill(feedback, state)
        goal.handle.publish_feedback(feedback)

    def _finish_ended(self) -> None:
        for end in self._host.take_ends():
            line = f'gripper goal {end.ending.value}: {end.message}'
            if end.ending is Ending.ABORTED:     # rclpy: one call site per severity
                self._node.get_logger().warning(line)
            else:
                self._node.get_logger().info(line)
            self._close(end.goal_id, end.ending, end.state)

    def _close(self, goal_id: Hashable, ending: Ending, state: Optional[GripperState]) -> None:
        goal = self._goals.get(goal_id)
        if goal is None or goal.result is not None:
            return
        handle = goal.handle
        if ending is Ending.SUCCEEDED:
            handle.succeed()
        elif ending is Ending.CANCELED and handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        known = state if state is not None else GripperState(math.nan, 0.0, False, False)
        goal.result = self._result(goal.parallel, known)
        self._servers[1 if goal.parallel else 0].send_result(handle)

    def shutdown(self) -> None:
        """End every goal that still runs (aborted: the node stops) and send its result.

        Call it while the node is still on its executor: the results go out on a few more
        spins of it.
        """
        self._finish_ended()
        live = [goal_id for goal_id, goal in self._goals.items() if goal.result is None]
        for goal_id in live:
            self._node.get_logger().warning('gripper goal aborted: '
                                            f'{self._node.get_name()} shut down during the goal')
            self._close(goal_id, Ending.ABORTED, None)
        if live:
            deliver_results(self._node, lambda: bool(self._goals))

    def _result(self, parallel: bool, state: GripperState) -> Any:
        if parallel:
            result = ParallelGripperCommand.Result()
            result.state = self._joint_state(state)
            result.stalled, result.reached_goal = state.stalled, state.reached_goal
            return result
        result = GripperCommand.Result()
        _fill(result, state)
        return result

    def _joint_state(self, state: GripperState) -> JointState:
        message = JointState()
        message.header.stamp = self._node.get_clock().now().to_msg()
        message.name = [self._host.name]
        message.position = [float(state.position)]
        message.effort = [float(state.effort)]
        return message


def _fill(message: Any, state: GripperState) -> None:
    """Fill a GripperCommand result or feedback from ``state``."""
    message.position = float(state.position)
    message.effort = float(state.effort)
    message.stalled = bool(state.stalled)
    message.reached_goal = bool(state.reached_goal)


def sim_arm_gripper_actions(node: Node, arm: Arm, parameters: GripperParameters, *,
                            read: Callable[[int], tuple[float, float]],
                            command: Callable[[int, float], None],
                            set_speed: Callable[[int, Optional[float]], None],
                            clock: Callable[[], float] = time.monotonic
                            ) -> Optional[GripperActions]:
    """Serve the gripper actions on sim_arm's simulated gripper (None: no gripper).

    The callables take the gripper's index among every servo (joints, then auxiliary ones):
    ``read`` returns its target and position, ``command`` sets its target, ``set_speed``
    lowers its speed (None: the usual).

    :raises ParameterConfigError: if ``gripper_servo`` names no auxiliary servo
    """
    axis = configured_gripper_axis(node, arm, parameters.servo)
    if axis is None:
        return None
    index = len(arm.joints) + [a.name for a in aux_axes(arm.servo_map)].index(axis.name)
    host = SimGripper(axis, settings=GripperSettings(goal_tolerance=parameters.goal_tolerance),
                      clock=clock, read=lambda: read(index),
                      command=lambda position: command(index, position),
                      set_speed=lambda speed: set_speed(index, speed))
    return GripperActions(node, host, controller_name=parameters.controller_name, clock=clock)


def configured_gripper_axis(node: Node, arm: Arm, servo: str) -> Optional[AuxAxis]:
    """Return the axis ``gripper_servo`` names (None: no gripper).

    '' on an arm with several auxiliary servos serves no gripper actions, with a warning
    naming them (the node runs as before; ``gripper_servo`` picks one).

    :raises ParameterConfigError: if it names no auxiliary servo
    """
    try:
        return gripper_axis(arm, servo)
    except AmbiguousGripperError as error:
        node.get_logger().warning(f"gripper_servo = '': {error}; no gripper actions")
        return None
    except ValueError as error:
        raise ParameterConfigError('gripper_servo', servo, str(error)) from None
