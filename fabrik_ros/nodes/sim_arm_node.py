"""sim_arm: a stand-in for the servos that moves each joint toward its command at servo speed."""

import time
from typing import Optional

from rclpy.time import Time
from sensor_msgs.msg import JointState

from fabrik_ros.driver.aux_axis import aux_axes
from fabrik_ros.driver.command_intake import CommandIntake
from fabrik_ros.driver.slew import SlewLimiter
from fabrik_ros.nodes.configured_node import ConfiguredNode
from fabrik_ros.nodes.joint_states import joint_state_msg
from fabrik_ros.nodes.log_lines import log_line
from fabrik_ros.nodes.ros_parameters import (
    declare,
    declare_arm,
    refuse_unknown_overrides,
)
from fabrik_ros.nodes.spin import spin_until_shutdown


class SimArmNode(ConfiguredNode):
    """Consume ``joint_commands``, slew toward them, publish ``joint_states`` at a fixed rate.

    Commands are taken as servo_driver takes them (one :class:`CommandIntake`: matched by
    name, clamped to the joint limits with the same warnings, unknown names said with the
    closest known one) and followed at ``servo_speed_rad_s``. The auxiliary servos (a
    gripper) are simulated too, in their own unit as servo_driver publishes them (PWM: the
    fraction of the pulse range; bus servos: rad), and take their commands at once: they
    have no speed to simulate. The arm starts at its home pose.
    """

    def __init__(self, **node_options) -> None:
        super().__init__('sim_arm', **node_options)
        self._arm = declare_arm(self)
        speed = declare(self, 'servo_speed_rad_s', 6.0, 'Speed every simulated joint moves at '
                        '[rad/s] (a hobby servo does about 5 to 10 rad/s unloaded)',
                        floats=(0.01, 100.0))
        rate = declare(self, 'rate_hz', 50.0, 'How often joint_states is published [Hz]',
                       floats=(1.0, 1000.0))
        refuse_unknown_overrides(self)
        axes = aux_axes(self._arm.servo_map)
        self._intake = CommandIntake(self._arm.joints, axes, clock=time.monotonic)
        self._names = self._intake.known_names
        self._slew = SlewLimiter(tuple(speed for _ in self._arm.joints))
        self._positions = tuple(joint.home_rad for joint in self._arm.joints)
        self._targets = self._positions
        self._aux = {axis.name: axis.home for axis in axes}
        self._last_step: Optional[Time] = None
        self._publisher = self.create_publisher(JointState, 'joint_states', 10)
        self.create_subscription(JointState, 'joint_commands', self._on_joint_commands, 10)
        self.create_timer(1.0 / rate, self._on_timer)

    def _on_joint_commands(self, msg: JointState) -> None:
        intake = self._intake.take(msg.name, msg.position, self._targets)
        for line in intake.logs:
            log_line(self.get_logger(), line)
        if intake.command is not None:
            self._aux.update(intake.command.aux)
            self._targets = intake.command.joints or self._targets

    def _on_timer(self) -> None:
        now = self.get_clock().now()
        if self._last_step is not None:
            dt_s = (now - self._last_step).nanoseconds * 1e-9
            self._positions = self._slew.step(self._positions, self._targets, dt_s)
        self._last_step = now
        positions = (*self._positions, *self._aux.values())
        self._publisher.publish(joint_state_msg(self._names, positions, now.to_msg()))


def main(args=None) -> None:
    """Run sim_arm until Ctrl-C or shutdown."""
    spin_until_shutdown(SimArmNode, args)
