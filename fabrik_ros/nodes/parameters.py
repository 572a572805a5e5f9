"""Declare node parameters with descriptions and ranges, over automatic declarations.

Nodes are created with ``automatically_declare_parameters_from_overrides=True`` so that the
arm config's per-joint keys become parameters (see arm_params.py). Any parameter given in a
params file or with ``-p`` is then already declared, without a description; these helpers
declare it again, properly described, keeping the override's value.
"""

from typing import Any, Optional

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.node import Node


def redeclare(node: Node, name: str, value: Any, descriptor: ParameterDescriptor) -> Any:
    """Declare ``name`` with ``descriptor``, replacing an automatic declaration of it.

    An override (from a params file or ``-p``) keeps its value, as with declare_parameter, and
    is checked against the descriptor and the node's on-set callbacks.

    :return: the parameter's value
    """
    if node.has_parameter(name):
        node.undeclare_parameter(name)
    return node.declare_parameter(name, value, descriptor).value


def declare(node: Node, name: str, default: Any, description: str, *, read_only: bool = True,
            floats: Optional[tuple[float, float]] = None,
            ints: Optional[tuple[int, int]] = None) -> Any:
    """Declare a node's own parameter; ``floats`` or ``ints`` is its inclusive range.

    :return: the parameter's value (the override's, if one was given)
    """
    descriptor = ParameterDescriptor(description=description, read_only=read_only)
    if floats is not None:
        descriptor.floating_point_range = [
            FloatingPointRange(from_value=floats[0], to_value=floats[1], step=0.0)]
    if ints is not None:
        descriptor.integer_range = [IntegerRange(from_value=ints[0], to_value=ints[1], step=1)]
    return redeclare(node, name, default, descriptor)
