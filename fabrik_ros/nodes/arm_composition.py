"""fabrik_arm: fabrik_ik and servo_driver in one process, spun by one executor.

The same nodes as the two executables, with the same parameters and topics; joint commands
still travel over DDS, but within one process and one thread there is no second interpreter,
no second executor wake-up and no process switch between a target and its serial frame.
"""

from typing import Optional

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.ik_node import FabrikIkNode


def main(args: Optional[list[str]] = None) -> None:
    """Run fabrik_ik and servo_driver together until Ctrl-C or shutdown."""
    rclpy.init(args=args)
    nodes = []
    executor = SingleThreadedExecutor()
    try:
        nodes.append(FabrikIkNode())
        nodes.append(ServoDriverNode())
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


if __name__ == '__main__':
    main()
