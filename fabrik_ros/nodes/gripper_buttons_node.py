"""gripper_buttons: two gamepad buttons open and close the gripper (GripperCommand goals).

Reads ``joy`` (sensor_msgs/Joy, as joy_node publishes it) and sends one
``control_msgs/action/GripperCommand`` goal to ``gripper_controller/gripper_cmd`` on the
press edge of ``open_button`` or ``close_button`` (never while a button is held; see
:mod:`fabrik_ros.hand_input.gripper_buttons`). The positions are fractions of the arm file's
gripper servo range (:mod:`fabrik_ros.nodes.gripper_goals`), so no goal lies outside it. A
malformed Joy message (too few buttons, a NaN axis) is dropped with a warning naming the
topic, throttled per cause. An arm without a gripper has nothing to drive: the node refuses to
start.
"""

from sensor_msgs.msg import Joy

from fabrik_ros.hand_input import GripperButtons
from fabrik_ros.monitoring.cause_throttle import CauseThrottle
from fabrik_ros.nodes.configured_node import ConfiguredNode
from fabrik_ros.nodes.gripper_goals import declare_gripper_goals
from fabrik_ros.nodes.ros_parameters import (
    declare,
    declare_arm,
    ParameterConfigError,
    refuse_unknown_overrides,
)
from fabrik_ros.nodes.spin import spin_until_shutdown

WARN_PERIOD_S = 5.0         # one warning per kind of bad Joy message this often
JOY_DEPTH = 10
BUTTONS = (0, 63)           # button indices a parameter may name (hand_input's MAX_ENTRIES)


class GripperButtonsNode(ConfiguredNode):
    """Send a gripper goal on each press of the open or close button (module docstring)."""

    def __init__(self, **node_options) -> None:
        super().__init__('gripper_buttons', **node_options)
        arm = declare_arm(self)
        open_button = declare(self, 'open_button', 1, 'Index in the Joy buttons of the button '
                              'that opens the gripper (1 = B on an Xbox pad under joy_node)',
                              ints=BUTTONS)
        close_button = declare(self, 'close_button', 0, 'Index in the Joy buttons of the '
                               'button that closes it (0 = A on an Xbox pad under joy_node)',
                               ints=BUTTONS)
        goals = declare_gripper_goals(self, arm)
        refuse_unknown_overrides(self)
        if goals is None:
            raise ParameterConfigError('gripper_servo', self._parameter('gripper_servo'),
                                       'the arm has no gripper (no auxiliary servo in the arm '
                                       'file, or gripper_servo none): nothing for the '
                                       'gripper buttons to drive')
        try:
            self._buttons = GripperButtons(open_button=open_button, close_button=close_button)
        except ValueError as error:
            raise ParameterConfigError('close_button', close_button, str(error)) from None
        self._goals = goals
        self._throttle = CauseThrottle(WARN_PERIOD_S)
        self._joy = self.create_subscription(Joy, 'joy', self._on_joy, JOY_DEPTH)
        jaws = goals.jaws
        self.get_logger().info(
            f'gripper buttons on {self._joy.topic_name}: button {open_button} opens '
            f'({jaws.open_position:.3f} {jaws.unit}), button {close_button} closes '
            f'({jaws.closed_position:.3f} {jaws.unit}), goals to {goals.action_name}')

    def _on_joy(self, message: Joy) -> None:
        event = self._buttons.feed(list(message.buttons), list(message.axes))
        if event.refusal:
            if self._throttle.allow(event.cause):
                self.get_logger().warning(f'{self._joy.topic_name}: Joy message dropped: '
                                          f'{event.refusal}')
            return
        if event.jaw is not None:
            self._goals.send(event.jaw)

    def destroy_node(self) -> None:
        """Destroy the action client with the node (none if the node refused to start)."""
        goals = getattr(self, '_goals', None)
        if goals is not None:
            goals.destroy()
        super().destroy_node()


def main(args=None) -> None:
    """Run gripper_buttons until Ctrl-C or SIGTERM."""
    spin_until_shutdown(GripperButtonsNode, args)


if __name__ == '__main__':
    main()
