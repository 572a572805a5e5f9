"""fabrik_arm: fabrik_ik and servo_driver in one process, spun by one executor.

The same nodes as the two executables, with the same parameters and topics. fabrik_ik hands
each joint command to servo_driver by a call (and still publishes it on joint_commands for
everyone else), so there is no DDS hop, no second interpreter and no process switch between a
target and its serial frame. The price: one Python thread runs both nodes' callbacks, so on a
small machine it saturates sooner than two processes on two cores (bench/e2e_latency.py
measures both).
"""

from collections.abc import Sequence
from typing import Optional

from rclpy.node import Node

from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.nodes.ros_parameters import one_process
from fabrik_ros.nodes.spin import run_nodes


def _make_nodes(nodes: list[Node]) -> None:
    """Build fabrik_ik, then servo_driver, which takes fabrik_ik's commands by a call.

    One -p reaches both nodes: each takes the other's parameters. The driver comes last, so
    that a bad parameter of either stops the process before the port opens; it is shut down
    first (run_nodes cleans up in reverse order).
    """
    drivers: list[ServoDriverNode] = []
    with one_process(2):
        nodes.append(FabrikIkNode(command_sink=lambda angles: drivers[0].command(angles)))
        drivers.append(ServoDriverNode())
        nodes.append(drivers[0])


def main(args: Optional[Sequence[str]] = None) -> None:
    """Run fabrik_ik and servo_driver together until Ctrl-C, SIGTERM or shutdown.

    :raises SystemExit: with status 1 if a node cannot start (the reason is printed)
    """
    run_nodes(_make_nodes, args, prog='fabrik_arm',
              description='fabrik_arm: fabrik_ik and servo_driver in one process, spun by '
                          'one executor.')


if __name__ == '__main__':
    main()
