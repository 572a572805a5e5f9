"""Run one node until Ctrl-C or an external shutdown, the same way for every executable."""

from collections.abc import Callable
from typing import Optional

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException
import rclpy.logging
from rclpy.node import Node

# A bad arm config (ArmConfigError is a ValueError) or a refused parameter value: the node
# cannot start, and a one-line reason serves the user better than a traceback.
_STARTUP_ERRORS = (ValueError, ParameterException)


def spin_until_shutdown(make_node: Callable[[], Node], args: Optional[list[str]] = None) -> None:
    """Initialise rclpy, spin the node ``make_node`` builds, and clean up on any exit.

    Ctrl-C and an external shutdown are normal ways to stop. A node with a ``shutdown()``
    method gets it called first, so it can leave its hardware in a defined state.

    :raises SystemExit: with status 1 if the node cannot start (the reason is logged)
    """
    rclpy.init(args=args)
    try:
        node = make_node()
    except _STARTUP_ERRORS as error:
        rclpy.logging.get_logger('fabrik_ros').fatal(f'cannot start: {error}')
        rclpy.try_shutdown()
        raise SystemExit(1) from None
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if hasattr(node, 'shutdown'):
            node.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
