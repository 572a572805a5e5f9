"""sim_arm: a stand-in for the servos that moves each joint toward its command at servo speed."""

from typing import Optional

from rclpy.time import Time
from sensor_msgs.msg import JointState

from fabrik_ros.driver.slew import SlewLimiter
from fabrik_ros.monitoring.cause_throttle import CauseThrottle
from fabrik_ros.nodes.configured_node import ConfiguredNode
from fabrik_ros.nodes.joint_states import (
    joint_state_msg,
    JointCommandError,
    positions_by_name,
)
from fabrik_ros.nodes.ros_parameters import (
    declare,
    declare_arm,
    refuse_unknown_overrides,
)
from fabrik_ros.nodes.spin import spin_until_shutdown


class SimArmNode(ConfiguredNode):
    """Consume ``joint_commands``, slew toward them, publish ``joint_states`` at a fixed rate.

    Commands are matched by joint name, clamped to the joint limits (as the servo map clamps
    on the real arm, with a throttled warning) and followed at ``servo_speed_rad_s``. The arm
    starts at its home pose.
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
        self._names = tuple(joint.name for joint in self._arm.joints)
        self._slew = SlewLimiter(tuple(speed for _ in self._names))
        self._positions = tuple(joint.home_rad for joint in self._arm.joints)
        self._targets = self._positions
        self._rejections = CauseThrottle(5.0)
        self._last_step: Optional[Time] = None
        self._publisher = self.create_publisher(JointState, 'joint_states', 10)
        self.create_subscription(JointState, 'joint_commands', self._on_joint_commands, 10)
        self.create_timer(1.0 / rate, self._on_timer)

    def _on_joint_commands(self, msg: JointState) -> None:
        try:
            targets = positions_by_name(msg, self._names, self._targets)
        except JointCommandError as error:
            if self._rejections.allow(error.cause):
                self.get_logger().warning(f'joint_commands ignored: {error}')
            return
        clamped = tuple(joint.clamp(t) for joint, t in zip(self._arm.joints, targets,
                                                            strict=True))
        if clamped != targets:
            self.get_logger().warning(
                f'joint_commands {targets} outside the joint limits, clamped to {clamped}',
                throttle_duration_sec=5.0)
        self._targets = clamped

    def _on_timer(self) -> None:
        now = self.get_clock().now()
        if self._last_step is not None:
            dt_s = (now - self._last_step).nanoseconds * 1e-9
            self._positions = self._slew.step(self._positions, self._targets, dt_s)
        self._last_step = now
        self._publisher.publish(joint_state_msg(self._names, self._positions, now.to_msg()))


def main(args=None) -> None:
    """Run sim_arm until Ctrl-C or shutdown."""
    spin_until_shutdown(SimArmNode, args)
