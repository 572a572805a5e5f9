"""fabrik_arm: fabrik_ik and servo_driver in one process, spun by one executor.

The same nodes as the two executables, with the same parameters and topics. fabrik_ik hands
each joint command to servo_driver by a call (and still publishes it on joint_commands for
everyone else), so there is no DDS hop, no second interpreter and no process switch between a
target and its serial frame. The price: one Python thread runs both nodes' callbacks, so on a
small machine it saturates sooner than two processes on two cores (bench/e2e_latency.py
measures both).
"""

from typing import Optional

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
import rclpy.logging
from rclpy.node import Node

from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.nodes.ros_parameters import one_process


def main(args: Optional[list[str]] = None) -> None:
    """Run fabrik_ik and servo_driver together until Ctrl-C or shutdown.

    :raises SystemExit: with status 1 if a node cannot start (the reason is logged)
    """
    rclpy.init(args=args)
    nodes: list[Node] = []
    executor = SingleThreadedExecutor()
    try:
        # One -p reaches both nodes: each takes the other's parameters. The driver comes
        # last, so that a bad parameter of either stops the process before the port opens.
        with one_process(2):
            nodes.append(FabrikIkNode(command_sink=lambda angles: driver.command(angles)))
            driver = ServoDriverNode()
            nodes.append(driver)
    except (ValueError, ParameterException) as error:
        rclpy.logging.get_logger('fabrik_ros').fatal(f'cannot start: {error}')
        _stop(executor, nodes)
        raise SystemExit(1) from None
    try:
        for node in nodes:
            executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        _stop(executor, nodes)


def _stop(executor: SingleThreadedExecutor, nodes: list) -> None:
    """Shut the nodes down (servos to their final state first), then rclpy."""
    for node in reversed(nodes):
        node.shutdown()
        executor.remove_node(node)
        node.destroy_node()
    executor.shutdown()
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
