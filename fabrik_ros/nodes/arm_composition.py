"""fabrik_arm: fabrik_ik and servo_driver in one process, spun by one executor.

The same nodes as the two executables, with the same parameters and topics; joint commands
still travel over DDS, but within one process there is no second interpreter and no process
switch between a target and its serial frame.

``--executor events`` spins both nodes with rclpy's EventsExecutor (rclpy.experimental, Kilted
and later), whose wait-set bookkeeping runs in C++; ``single`` (the default, every distro)
uses the SingleThreadedExecutor::

    ros2 run fabrik_ros fabrik_arm [--executor single|events] --ros-args --params-file ...
"""

import argparse
import enum
from typing import Optional

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.utilities import remove_ros_args

from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.ik_node import FabrikIkNode


class ExecutorKind(enum.Enum):
    """Which rclpy executor spins the composed nodes."""

    SINGLE = 'single'
    EVENTS = 'events'


def make_executor(kind: ExecutorKind) -> Executor:
    """Return a new executor of ``kind`` for the default context.

    :raises ValueError: for ``events`` where this rclpy has no EventsExecutor
    """
    if kind is ExecutorKind.SINGLE:
        return SingleThreadedExecutor()
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError as error:
        raise ValueError('executor = events, needs rclpy.experimental.EventsExecutor '
                         '(ROS 2 Kilted or later); use single') from error
    return EventsExecutor()


def parse_executor(argv: Optional[list[str]]) -> ExecutorKind:
    """Return the ``--executor`` choice among the non-ROS command-line arguments."""
    parser = argparse.ArgumentParser(prog='fabrik_arm', description=__doc__.splitlines()[0])
    parser.add_argument('--executor', choices=[k.value for k in ExecutorKind],
                        default=ExecutorKind.SINGLE.value,
                        help='rclpy executor that spins both nodes (default: single)')
    options = parser.parse_args(remove_ros_args(argv)[1:])
    return ExecutorKind(options.executor)


def main(args: Optional[list[str]] = None) -> None:
    """Run fabrik_ik and servo_driver together until Ctrl-C or shutdown."""
    kind = parse_executor(args)
    rclpy.init(args=args)
    nodes = []
    executor = make_executor(kind)
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
