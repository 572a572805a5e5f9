"""Which node declares which parameter, read from the nodes' own ``declare`` calls.

An arm file holds the arm (``/**: ros__parameters:``); each node's own parameters
(``use_pose_orientation`` of fabrik_ik, ``home_move_time_s`` of servo_driver) go in that node's
section. To say so where a parameter is given in the wrong place (the arm file's ``/**``, a
launch file's ``params_file:=``, another node), the table comes from the sources of
fabrik_ros/nodes, parsed, not imported: the launch files and the pure arm loader read it
without rclpy, and it cannot drift from what the nodes declare. A node module's parameters are
the ``declare(node, '<name>', ...)`` calls in it and in the node modules it imports (servo_jog's
for servo_driver); its node name is the literal its class passes to ``super().__init__``.
test/nodes/test_node_parameters.py holds the table to the parameters real nodes declare.
"""

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

_NODES_DIR = Path(__file__).resolve().parent / 'nodes'
_PACKAGE = 'fabrik_ros.nodes.'
# The one function a node declares its own parameters with (ros_parameters.declare).
_DECLARE = 'declare'
# Declared by rclpy itself on every node; an override of them is meant for rclpy.
STANDARD_PARAMETERS = ('use_sim_time', 'start_type_description_service')
# How a file of node parameters reaches the nodes.
WHERE_NODE_PARAMETERS_GO = 'launch files: params_file:=<file>; ros2 run: --params-file <file>'


@dataclass(frozen=True)
class NodeParameters:
    """Every fabrik_ros node's own parameters, by node name, in declaration order."""

    nodes: Mapping[str, tuple[str, ...]]

    def of(self, node: str) -> tuple[str, ...]:
        """Return the parameters ``node`` declares (none for a node it does not know)."""
        return self.nodes.get(node, ())

    def owners(self, parameter: str) -> tuple[str, ...]:
        """Return the nodes that declare ``parameter``, in name order."""
        return tuple(sorted(node for node, names in self.nodes.items() if parameter in names))

    def where_it_goes(self, parameter: str, value: Any) -> str:
        """Return a clause saying whose parameter ``parameter`` is and where to give it, or ''.

        >>> table = NodeParameters({'fabrik_ik': ('use_pose_orientation',)})
        >>> print(table.where_it_goes('use_pose_orientation', True))
        it is a parameter of the node fabrik_ik; give it in that node's own section, \
fabrik_ik: ros__parameters: use_pose_orientation: true, of a file of node parameters \
(launch files: params_file:=<file>; ros2 run: --params-file <file>)
        """
        owners = self.owners(parameter)
        if not owners:
            return ''
        first, *others = owners
        also = f' (also of {", ".join(others)})' if others else ''
        return (f"it is a parameter of the node {first}{also}; give it in that node's own "
                f'section, {first}: ros__parameters: {parameter}: {_yaml_value(value)}, of a '
                f'file of node parameters ({WHERE_NODE_PARAMETERS_GO})')


def _yaml_value(value: Any) -> str:
    """Return ``value`` as it is written in a params file."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if value == '':
        return "''"             # nothing after the colon would be null, not a string
    if isinstance(value, (list, tuple)):
        return f'[{", ".join(_yaml_value(item) for item in value)}]'
    return str(value)


@lru_cache(maxsize=1)
def node_parameters() -> NodeParameters:
    """Return the table of the installed (or checked-out) fabrik_ros nodes.

    Empty if the node sources are not there (an install without .py files): the callers then
    say what they said before, without the node's name.
    """
    read = {path.stem: _read(path) for path in sorted(_NODES_DIR.glob('*.py'))}
    modules = {name: module for name, module in read.items() if module is not None}
    nodes: dict[str, tuple[str, ...]] = {}
    for name, module in modules.items():
        node = module.node_name
        if node:
            nodes[node] = tuple(dict.fromkeys(_reached_declarations(name, modules)))
    return NodeParameters(nodes)


@dataclass(frozen=True)
class _Module:
    """What one node module says: its node's name, its declarations, the node modules used."""

    node_name: str
    declared: tuple[str, ...]
    imports: tuple[str, ...]


def _read(path: Path) -> Optional[_Module]:
    try:
        tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    constants = {target.id: node.value.value for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                 and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}
    declared: list[str] = []
    node_name = ''
    for call in (node for node in ast.walk(tree) if isinstance(node, ast.Call)):
        if isinstance(call.func, ast.Name) and call.func.id == _DECLARE and len(call.args) > 1:
            name = _string(call.args[1], constants)
            if name:
                declared.append(name)
        elif _is_super_init(call) and call.args:
            node_name = node_name or _string(call.args[0], constants)
    imports = tuple(node.module.removeprefix(_PACKAGE) for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith(_PACKAGE))
    return _Module(node_name, tuple(declared), imports)


def _string(expression: ast.expr, constants: Mapping[str, str]) -> str:
    """Return the string a literal or a module constant holds, '' for anything else."""
    if isinstance(expression, ast.Constant) and isinstance(expression.value, str):
        return expression.value
    if isinstance(expression, ast.Name):
        return constants.get(expression.id, '')
    return ''


def _is_super_init(call: ast.Call) -> bool:
    """Return whether ``call`` is ``super().__init__(...)``."""
    function = call.func
    return (isinstance(function, ast.Attribute) and function.attr == '__init__'
            and isinstance(function.value, ast.Call)
            and isinstance(function.value.func, ast.Name) and function.value.func.id == 'super')


def _reached_declarations(start: str, modules: Mapping[str, _Module]) -> list[str]:
    """Return the declarations of ``start`` and of every node module it imports, transitively.

    A module that is itself a node (it names one) is not followed: its parameters are its own.
    """
    seen, stack = {start}, [start]
    order: list[str] = []
    while stack:
        name = stack.pop(0)
        module = modules[name]
        order.extend(module.declared)
        for used in module.imports:
            if used in modules and used not in seen and not modules[used].node_name:
                seen.add(used)
                stack.append(used)
    return order
