"""Gripper goals from a hand control: GripperCommand goals to open or close, named positions.

The gamepad's gripper buttons (gripper_buttons) and the keyboard jog (jog_keyboard) both send
``control_msgs/action/GripperCommand`` goals to ``<gripper_controller_name>/gripper_cmd``
(served by servo_driver and sim_arm) at the open and closed positions of
:class:`~fabrik_ros.hand_input.JawPositions`: fractions of the gripper servo's calibrated
range, in its unit (PWM: the fraction of the pulse range; bus: rad). The server checks and
runs the goal (its stall protection too); here a goal is sent, and a refusal or a failed end
is said once.
"""

from typing import Optional

from control_msgs.action import GripperCommand
from rclpy.action import ActionClient
from rclpy.node import Node

from fabrik_ros.driver.gripper_drive import gripper_axis, NO_GRIPPER
from fabrik_ros.hand_input import Jaw, JawPositions
from fabrik_ros.kinematics import Arm
from fabrik_ros.nodes.ros_parameters import declare, ParameterConfigError

# action_msgs/msg/GoalStatus's codes of a goal's end.
SUCCEEDED, CANCELED, ABORTED = 4, 5, 6
_STATUS = {SUCCEEDED: 'succeeded', ABORTED: 'aborted', CANCELED: 'canceled'}


class GripperGoals:
    """Send open and close goals for one gripper (see the module docstring).

    :param node: the node whose ActionClient sends them
    :param controller_name: the action's prefix (``gripper_controller_name``)
    :param jaws: the open and closed positions
    :param max_effort: each goal's max_effort (a fraction of the full torque; 0: the full)
    """

    def __init__(self, node: Node, *, controller_name: str, jaws: JawPositions,
                 max_effort: float) -> None:
        self._node, self._jaws, self._max_effort = node, jaws, max_effort
        self.action_name = f'{controller_name.strip("/")}/gripper_cmd'
        self._client: ActionClient = ActionClient(node, GripperCommand, self.action_name)
        self._in_flight = 0

    @property
    def in_flight(self) -> int:
        """Return how many goals were sent and have not ended (refused or with a result)."""
        return self._in_flight

    @property
    def jaws(self) -> JawPositions:
        """Return the open and closed positions."""
        return self._jaws

    def send(self, jaw: Jaw) -> str:
        """Send the goal of ``jaw`` now; return the line saying so (or why it was not sent)."""
        position = self._jaws.position(jaw)
        if not self._client.server_is_ready():
            line = (f'gripper {jaw.value}: not sent, no action server on '
                    f'{self.action_name} (servo_driver or sim_arm serve it)')
            self._node.get_logger().warning(line)
            return line
        goal = GripperCommand.Goal()
        goal.command.position = float(position)
        goal.command.max_effort = float(self._max_effort)
        future = self._client.send_goal_async(goal)
        self._in_flight += 1
        future.add_done_callback(lambda done: self._on_response(jaw, done))
        line = f'gripper {jaw.value}: goal {position:.3f} {self._jaws.unit} sent'
        self._node.get_logger().info(line)
        return line

    def _on_response(self, jaw: Jaw, future) -> None:
        handle = future.result()
        if handle is None or not handle.accepted:
            self._in_flight -= 1
            self._node.get_logger().warning(f'gripper {jaw.value}: the goal was refused by '
                                            f'{self.action_name} (its log says why)')
            return
        handle.get_result_async().add_done_callback(lambda done: self._on_result(jaw, done))

    def _on_result(self, jaw: Jaw, future) -> None:
        self._in_flight -= 1
        answer = future.result()
        if answer is None:
            return
        status, result = answer.status, answer.result
        if status != SUCCEEDED:
            self._node.get_logger().warning(
                f'gripper {jaw.value}: {_STATUS.get(status, f"status {status}")} at '
                f'{result.position:.3f} {self._jaws.unit} (stalled: {result.stalled})')

    def destroy(self) -> None:
        """Destroy the action client."""
        self._client.destroy()


def declare_gripper_goals(node: Node, arm: Arm) -> Optional[GripperGoals]:
    """Declare the gripper-goal parameters; return the sender (None: the arm has no gripper).

    :raises ParameterConfigError: for a ``gripper_servo`` that names no auxiliary servo
    """
    servo = declare(node, 'gripper_servo', '',
                    "The auxiliary servo that is the gripper: its name in the arm file's "
                    "aux_servos; '' = the arm's only one (none if it has none), none = no "
                    'gripper commands (as servo_driver and sim_arm pick it)')
    controller = declare(node, 'gripper_controller_name', 'gripper_controller',
                         'Prefix of the GripperCommand action the goals go to, relative to '
                         'the namespace: <name>/gripper_cmd')
    opened = declare(node, 'open_fraction', 1.0,
                     "Where the gripper stands open, as a fraction of its servo's calibrated "
                     'range (0.0 = its low end, min_us or min_deg; 1.0 = its high end)',
                     floats=(0.0, 1.0))
    closed = declare(node, 'closed_fraction', 0.0,
                     'Where the gripper stands closed, as a fraction of its range (as '
                     'open_fraction)', floats=(0.0, 1.0))
    effort = declare(node, 'gripper_max_effort', 0.0,
                     "Each goal's max_effort: a fraction of the servo's full torque (bus "
                     'servos; 0.0 = the full torque; the server lowers it when the jaw stalls)',
                     floats=(0.0, 1.0))
    try:
        axis = gripper_axis(arm, servo)
    except ValueError as error:          # AmbiguousGripperError too: '' among several
        raise ParameterConfigError('gripper_servo', servo, str(error)) from None
    if axis is None:
        return None
    jaws = JawPositions.of(axis, open_fraction=opened, closed_fraction=closed)
    return GripperGoals(node, controller_name=controller, jaws=jaws, max_effort=effort)


__all__ = ['declare_gripper_goals', 'GripperGoals', 'NO_GRIPPER']
