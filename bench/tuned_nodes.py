"""What-if variants of the two nodes, to measure fixes the profile suggests before making them.

The benchmark runs these beside the shipped nodes (layout ``two_process_tuned``) so a proposed
change comes with a measured gain. Each differs from its parent in one stated way:

- :class:`LatestTargetIkNode`: target subscriptions keep only the newest message (depth 1,
  latest wins, as ServoLink does for pulses) instead of queueing 10, and ik_markers go out at
  most 30 times a second (the newest solution), not once per target.
- :class:`PromptDriverNode`: a joint command is stepped and sent as it arrives instead of
  waiting for the next control tick; the tick still runs for the speed-limited ramps, but a
  tick with nothing to ramp no longer restarts the step clock (else a command arriving just
  after an idle tick could move only ``speed × (time since that tick)`` at once).
- :func:`composed_main`: both in one process, and the IK node hands each joint command to the
  driver by a function call instead of publishing it on joint_commands (no DDS hop).
"""

from geometry_msgs.msg import PointStamped, PoseStamped
from nav_msgs.msg import Path
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from sensor_msgs.msg import JointState

from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.nodes.spin import spin_until_shutdown

MARKER_RATE_HZ = 30.0


class LatestTargetIkNode(FabrikIkNode):
    """fabrik_ik with latest-wins target subscriptions and rate-limited markers."""

    _pending_markers = None
    _marker_timer = None

    def _subscribe_targets(self) -> None:
        self.create_subscription(PointStamped, 'target_point', self._on_target_point, 1)
        self.create_subscription(PoseStamped, 'target_pose', self._on_target_pose, 1)
        self.create_subscription(Path, 'target_path', self._on_target_path, 10)

    def _publish_markers(self, angles, target_m, *, reached: bool) -> None:
        """Keep the newest solution; a 30 Hz timer publishes it."""
        self._pending_markers = (angles, target_m, reached)
        if self._marker_timer is None:
            self._marker_timer = self.create_timer(1.0 / MARKER_RATE_HZ, self._flush_markers)

    def _flush_markers(self) -> None:
        if self._pending_markers is not None:
            angles, target_m, reached = self._pending_markers
            self._pending_markers = None
            super()._publish_markers(angles, target_m, reached=reached)


class PromptDriverNode(ServoDriverNode):
    """servo_driver that sends a joint command as soon as it arrives."""

    def _on_joint_commands(self, msg: JointState) -> None:
        super()._on_joint_commands(msg)
        self._step()

    def _on_control_timer(self) -> None:
        planner = self._planner
        if planner.started and planner.sent == planner.target:
            return
        self._step()

    def _step(self) -> None:
        super()._on_control_timer()


def ik_main(args=None) -> None:
    """Run the what-if fabrik_ik."""
    spin_until_shutdown(LatestTargetIkNode, args)


def driver_main(args=None) -> None:
    """Run the what-if servo_driver."""
    spin_until_shutdown(PromptDriverNode, args)


class _HandOver:
    """Stands in for the joint_commands publisher: gives each message to the driver at once."""

    def __init__(self, driver: PromptDriverNode) -> None:
        self._driver = driver

    def publish(self, msg: JointState) -> None:
        self._driver._on_joint_commands(msg)


def _composed_nodes() -> tuple[LatestTargetIkNode, PromptDriverNode]:
    ik, driver = LatestTargetIkNode(), PromptDriverNode()
    ik._commands = _HandOver(driver)
    return ik, driver


def composed_main(args=None) -> None:
    """Run the what-if composition: both nodes, one executor, commands handed over directly."""
    rclpy.init(args=args)
    executor = SingleThreadedExecutor()
    nodes = _composed_nodes()
    try:
        for node in nodes:
            executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        for node in reversed(nodes):
            node.shutdown()
            executor.remove_node(node)
            node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown()
