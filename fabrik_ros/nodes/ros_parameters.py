"""ROS parameter plumbing of every node: described declarations and the arm config's keys.

Every node reads the same arm file (``--params-file config/arm_4dof.yaml``). Its keys depend on
the arm (``joints.<name>.max_deg``, ``aux_servos.<name>.channel``), so a node is created with
``automatically_declare_parameters_from_overrides=True``: any parameter given in a params file
or with ``-p`` is then already declared, without a description. :func:`declare` and
:func:`declare_arm` declare each again, described (read-only unless the node can change it at
run time), keeping the override's value. ``Arm.from_params`` stays the one validator of the arm.
"""

from collections.abc import Iterable, Mapping
from typing import Any, Optional

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.node import Node

from fabrik_ros.kinematics import Arm, ArmConfigError, Bend, SolverOptionsError
from fabrik_ros.kinematics.arm_file import describe, nest, SOLVER_KEYS, TOP_KEYS

CONFIG_HINT = 'pass the arm config: --ros-args --params-file <share>/config/arm_4dof.yaml'


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


def declare_arm(node: Node, *, mutable: Iterable[str] = ()) -> Arm:
    """Describe every arm parameter the node was given and return the Arm they make.

    The ``solver.*`` options absent from the file are declared with their defaults, so they
    can be inspected (and, if ``mutable``, changed) like the others.

    :param mutable: dotted names the node lets users change at run time; the rest are
        read-only
    :raises ArmConfigError: naming the first key that breaks a rule (or is missing)
    """
    changeable = set(mutable)
    given = {name: parameter.value
             for name, parameter in node.get_parameters_by_prefix('').items()
             if name.split('.')[0] in TOP_KEYS}
    if not given:
        raise ArmConfigError('ros__parameters', {}, f'holds no arm config; {CONFIG_HINT}')
    for name, value in given.items():
        redeclare(node, name, value, _descriptor(name, read_only=name not in changeable))
    arm = Arm.from_params(nest(given.items()))
    for key, value in solver_values(arm).items():
        name = f'solver.{key}'
        if name not in given:
            node.declare_parameter(name, value,
                                   _descriptor(name, read_only=name not in changeable))
    return arm


def solver_values(arm: Arm) -> dict[str, Any]:
    """Return the arm's solver options as ROS parameter values, keyed like ``solver.*``."""
    values = {key: getattr(arm.options, key) for key in SOLVER_KEYS}
    values['bend'] = arm.options.bend.value
    return values


def with_solver_changes(arm: Arm, changes: Mapping[str, Any]) -> Arm:
    """Return ``arm`` with the ``solver.*`` parameters in ``changes`` applied.

    :raises SolverOptionsError: (a ValueError) naming the parameter, its value and the rule
    """
    options = {name.removeprefix('solver.'): value for name, value in changes.items()
               if name.startswith('solver.')}
    if 'bend' in options:
        bends = [b.value for b in Bend]
        if options['bend'] not in bends:
            raise SolverOptionsError('solver.bend', options['bend'], f'must be one of {bends}')
        options['bend'] = Bend(options['bend'])
    try:
        return arm.with_options(**options)
    except SolverOptionsError as error:
        raise SolverOptionsError(f'solver.{error.name}', error.value, error.rule) from error


def _descriptor(name: str, *, read_only: bool) -> ParameterDescriptor:
    text = describe(name) or 'arm config key'
    return ParameterDescriptor(description=f'{text} (arm config)', read_only=read_only)
