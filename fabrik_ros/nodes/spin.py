"""Run one node until Ctrl-C or an external shutdown, the same way for every executable."""

from collections.abc import Callable
from typing import Optional

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node


def spin_until_shutdown(make_node: Callable[[], Node], args: Optional[list[str]] = None) -> None:
    """Initialise rclpy, spin the node ``make_node`` builds, and clean up on any exit.

    Ctrl-C and an external shutdown are normal ways to stop. A node with a ``shutdown()``
    method gets it called first, so it can leave its hardware in a defined state.
    """
    rclpy.init(args=args)
    node = None
    try:
        node = make_node()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            if hasattr(node, 'shutdown'):
                node.shutdown()
            node.destroy_node()
        rclpy.try_shutdown()
