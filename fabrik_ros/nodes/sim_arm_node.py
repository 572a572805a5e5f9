"""sim_arm: a stand-in for the servos that moves each joint toward its command at servo speed."""

import time
from typing import Optional

from rclpy.time import Time
from sensor_msgs.msg import JointState

from fabrik_ros.driver.aux_axis import aux_axes, COUNT_AUX_SPEED_RAD_S, PULSE_AUX_SPEED_PER_S
from fabrik_ros.driver.command_intake import CommandIntake
from fabrik_ros.driver.slew import SlewLimiter
from fabrik_ros.driver.trajectory import TrajectoryExecutor
from fabrik_ros.nodes.configured_node import ConfiguredNode
from fabrik_ros.nodes.gripper_actions import declare_gripper_parameters, sim_arm_gripper_actions
from fabrik_ros.nodes.joint_states import joint_state_msg
from fabrik_ros.nodes.log_lines import log_line
from fabrik_ros.nodes.ros_parameters import (
    declare,
    declare_arm,
    refuse_unknown_overrides,
)
from fabrik_ros.nodes.spin import spin_until_shutdown
from fabrik_ros.nodes.trajectory_actions import (
    declare_trajectory_parameters,
    ExecutorHost,
    TrajectoryActions,
)


class SimArmNode(ConfiguredNode):
    """Consume ``joint_commands``, slew toward them, publish ``joint_states`` at a fixed rate.

    Commands are taken as servo_driver takes them (one :class:`CommandIntake`: matched by
    name, clamped to the joint limits with the same warnings, unknown names said with the
    closest known one) and followed at ``servo_speed_rad_s``. The auxiliary servos (a
    gripper) are simulated too, in their own unit as servo_driver publishes them (PWM: the
    fraction of the pulse range; bus servos: rad), moving at ``aux_max_speed`` as
    servo_driver moves them. The arm starts at its home pose.
    """

    def __init__(self, **node_options) -> None:
        super().__init__('sim_arm', **node_options)
        self._arm = declare_arm(self)
        speed = declare(self, 'servo_speed_rad_s', 6.0, 'Speed every simulated joint moves at '
                        '[rad/s] (a hobby servo does about 5 to 10 rad/s unloaded)',
                        floats=(0.01, 100.0))
        rate = declare(self, 'rate_hz', 50.0, 'How often joint_states is published [Hz]',
                       floats=(1.0, 1000.0))
        aux_speed = declare(self, 'aux_max_speed', 0.0, 'Speed every simulated auxiliary '
                            'servo (a gripper) moves at, per second in its unit (as '
                            "servo_driver's aux_max_speed): the fraction of its pulse range "
                            f'(PWM) or rad (bus); 0 = {PULSE_AUX_SPEED_PER_S} per s on PWM, '
                            f'{COUNT_AUX_SPEED_RAD_S} rad/s on a bus', floats=(0.0, 100.0))
        gripper = declare_gripper_parameters(self)
        trajectory = declare_trajectory_parameters(self)
        refuse_unknown_overrides(self)
        self._axes = aux_axes(self._arm.servo_map)
        self._intake = CommandIntake(self._arm.joints, self._axes, clock=time.monotonic)
        self._names = self._intake.known_names
        self._joint_count = len(self._arm.joints)
        self._slew = SlewLimiter((*(speed for _ in self._arm.joints),
                                  *(aux_speed or axis.default_speed for axis in self._axes)))
        # Every servo's position: the joints' [rad], then the auxiliary servos' in their unit.
        self._positions = (*(joint.home_rad for joint in self._arm.joints),
                           *(axis.home for axis in self._axes))
        self._targets = self._positions
        self._last_step: Optional[Time] = None
        self._publisher = self.create_publisher(JointState, 'joint_states', 10)
        self.create_subscription(JointState, 'joint_commands', self._on_joint_commands, 10)
        self.create_timer(1.0 / rate, self._on_timer)
        self._trajectory = ExecutorHost(TrajectoryExecutor(
            self._arm.joints, [speed] * self._joint_count, trajectory.settings,
            aux_names=tuple(axis.name for axis in self._axes),
            speed_parameter='servo_speed_rad_s'),
            lambda: self._positions[:self._joint_count])
        self._actions = TrajectoryActions(self, self._trajectory, trajectory)
        self._speeds = self._slew.speeds_rad_s
        self._gripper = sim_arm_gripper_actions(
            self, self._arm, gripper, read=lambda i: (self._targets[i], self._positions[i]),
            command=self._command_servo, set_speed=self._slow_servo)

    def _command_servo(self, index: int, position: float) -> None:
        self._targets = (*self._targets[:index], position, *self._targets[index + 1:])

    def _slow_servo(self, index: int, speed: Optional[float]) -> None:
        usual = self._speeds[index]
        self._slew = SlewLimiter((*self._speeds[:index], min(speed or usual, usual),
                                  *self._speeds[index + 1:]))

    def _on_joint_commands(self, msg: JointState) -> None:
        count = self._joint_count
        # The intake keeps the joints' targets for the joints a message does not name; the
        # auxiliary servos' targets (after the joints') are kept below.
        intake = self._intake.take(msg.name, msg.position, self._targets[:count])
        for line in intake.logs:
            log_line(self.get_logger(), line)
        command = intake.command
        if command is not None:
            if command.joints:
                self._trajectory.abort('a joint_commands message took the joints over', hold=False)
            joints = command.joints or self._targets[:count]
            aux = (command.aux.get(axis.name, old)
                   for axis, old in zip(self._axes, self._targets[count:], strict=True))
            self._targets = (*joints, *aux)

    def _on_timer(self) -> None:
        now = self.get_clock().now()
        if self._last_step is not None:
            dt_s = (now - self._last_step).nanoseconds * 1e-9
            joints = self._trajectory.targets(self._targets[:self._joint_count])
            self._targets = (*joints, *self._targets[self._joint_count:])
            self._positions = self._slew.step(self._positions, self._targets, dt_s)
            self._trajectory.update()
            self._actions.poll()
        self._last_step = now
        self._publisher.publish(joint_state_msg(self._names, self._positions, now.to_msg()))

    def shutdown(self) -> None:
        """End the goals that still run, sending their results (called on shutdown)."""
        self._actions.shutdown()
        if self._gripper is not None:
            self._gripper.shutdown()


def main(args=None) -> None:
    """Run sim_arm until Ctrl-C or shutdown."""
    spin_until_shutdown(SimArmNode, args)
