"""ROS parameter plumbing of every node: described declarations, types in words, no stray keys.

Every node reads the same arm file (``--params-file config/arm_4dof.yaml``). Its keys depend on
the arm (``joints.<name>.max_deg``, ``aux_servos.<name>.channel``), so a node is created with
``automatically_declare_parameters_from_overrides=True``: any parameter given in a params file
or with ``-p`` is then already declared, untyped and undescribed. :func:`declare` and
:func:`declare_arm` declare each again, described (read-only unless the node can change it at
run time), keeping the override's value; ``Arm.from_params`` stays the one validator of the
arm. Once a node has declared all of its parameters, :func:`refuse_unknown_overrides` stops it
on any override left over: a misspelt ``on_shutdwn`` would otherwise leave the default in force
without a word.

Types: an integer given for a float parameter is that float (``-p home_move_time_s:=2``,
``ros2 param set ... solver.tolerance_m -1``), then validated; any other mismatch is refused in
words. Parameters are declared with ``dynamic_typing`` so that the refusal is ours rather than
rclpy's "Wrong parameter type"; a pre-set callback (Iron and later) stores an integer given for
a float as a float. ROS 2 Humble has no pre-set callbacks: there the integer is checked as the
float it stands for and kept as given.
"""

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
import sys
from typing import Any, Optional
from weakref import WeakKeyDictionary

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.exceptions import ParameterNotDeclaredException
from rclpy.node import Node
from rclpy.parameter import Parameter
import yaml

from fabrik_ros.kinematics import Arm, ArmConfigError, Bend, SolverOptionsError
from fabrik_ros.kinematics.description.arm_file import PARAMS_KEY
from fabrik_ros.kinematics.description.arm_keys import (
    closest,
    KEYS,
    SOLVER_KEYS,
    spec,
    TOP_KEYS,
    ValueKind,
)
from fabrik_ros.kinematics.description.flat_keys import flatten, nest
from fabrik_ros.node_parameters import node_parameters, STANDARD_PARAMETERS


def config_hint() -> str:
    """Return how to pass the arm config, naming the shipped file where it really is."""
    try:
        from ament_index_python.packages import get_package_share_directory
        share = Path(get_package_share_directory('fabrik_ros'))
    except (ImportError, LookupError, OSError):
        share = Path(__file__).resolve().parents[2]      # a source checkout
    return f'pass the arm config: --ros-args --params-file {share / "config" / "arm_4dof.yaml"}'

Type = Parameter.Type
# What a value must be, as an error says it.
_MUST_BE = {Type.BOOL: 'a bool: true or false', Type.INTEGER: 'an integer',
            Type.DOUBLE: 'a float', Type.STRING: 'a string', Type.BYTE_ARRAY: 'a byte array',
            Type.BOOL_ARRAY: 'a list of bools', Type.INTEGER_ARRAY: 'a list of integers',
            Type.DOUBLE_ARRAY: 'a list of floats', Type.STRING_ARRAY: 'a list of strings'}
# What a value is, as an error says it.
_IS = {Type.NOT_SET: 'not set', Type.BOOL: 'bool', Type.INTEGER: 'integer',
       Type.DOUBLE: 'float', Type.STRING: 'string', Type.BYTE_ARRAY: 'byte array',
       Type.BOOL_ARRAY: 'list of bools', Type.INTEGER_ARRAY: 'list of integers',
       Type.DOUBLE_ARRAY: 'list of floats', Type.STRING_ARRAY: 'list of strings'}
_ARM_TYPES = {ValueKind.FLOAT: Type.DOUBLE, ValueKind.INT: Type.INTEGER,
              ValueKind.STR: Type.STRING, ValueKind.FLOAT_LIST: Type.DOUBLE_ARRAY,
              ValueKind.STR_LIST: Type.STRING_ARRAY}


class ParameterConfigError(ValueError):
    """A node parameter (or an override meant as one) cannot be used; names key, value, rule."""

    def __init__(self, key: str, value: object, rule: str, *, given: str = '') -> None:
        """Say ``<key> = <value> (<given type>), <rule>``; the type only where it is the fault."""
        shown = f'{_shown(value)!r} ({given})' if given else f'{_shown(value)!r}'
        super().__init__(f'{key} = {shown}, {rule}')
        self.key = key
        self.value = value
        self.rule = rule


@dataclass(frozen=True)
class _Expected:
    """The type (and the words allowed, if any) a declared parameter takes."""

    type: Type
    choices: tuple[str, ...] = ()
    floats: Optional[tuple[float, float]] = None


# Per node: every parameter declared through this module, with what it takes.
_DECLARED: 'WeakKeyDictionary[Node, dict[str, _Expected]]' = WeakKeyDictionary()
# The nodes being built in one process by :func:`one_process`, else None.
_COMPOSED: ContextVar[Optional['_Group']] = ContextVar('fabrik_ros_composed', default=None)


# -- declaring -------------------------------------------------------------------------------

def declare(node: Node, name: str, default: Any, description: str, *, read_only: bool = True,
            floats: Optional[tuple[float, float]] = None,
            ints: Optional[tuple[int, int]] = None, choices: Sequence[str] = ()) -> Any:
    """Declare a node's own parameter, typed like ``default``.

    :param floats: inclusive range of a float parameter
    :param ints: inclusive range of an integer parameter
    :param choices: the words a string parameter may hold
    :return: the parameter's value (the override's, if one was given)
    :raises ParameterConfigError: if the override has another type, or is not one of
        ``choices``
    """
    descriptor = _descriptor(description, read_only=read_only, choices=choices)
    if floats is not None:
        descriptor.floating_point_range = [
            FloatingPointRange(from_value=floats[0], to_value=floats[1], step=0.0)]
    if ints is not None:
        descriptor.integer_range = [IntegerRange(from_value=ints[0], to_value=ints[1], step=1)]
    expected = _Expected(Type.from_parameter_value(default), tuple(choices), floats)
    value = default
    if node.has_parameter(name):
        given = node.get_parameter(name)
        value = _coerce(name, given.value, given.type_, expected)
    return _redeclare(node, name, value, descriptor, expected)


def declare_arm(node: Node, *, mutable: Iterable[str] = ()) -> Arm:
    """Describe every arm parameter the node was given and return the Arm they make.

    The ``solver.*`` options absent from the file are declared with their defaults, so they
    can be inspected (and, if ``mutable``, changed) like the others.

    :param mutable: dotted names the node lets users change at run time; the rest are
        read-only
    :raises ArmConfigError: naming the first key that breaks a rule (or is missing)
    """
    changeable = set(mutable)
    given = {name: parameter for name, parameter in node.get_parameters_by_prefix('').items()
             if name.split('.')[0] in TOP_KEYS}
    if not given:
        raise ArmConfigError('ros__parameters', {}, f'holds no arm config; {config_hint()}')
    values = {}
    for name, parameter in given.items():
        entry = spec(name)
        if entry is None:
            values[name] = parameter.value   # Arm.from_params names it, and the closest key
            continue
        expected = _Expected(_ARM_TYPES[entry.kind], entry.choices)
        values[name] = _redeclare(node, name, _widened(parameter.value, expected.type),
                                  _arm_descriptor(name, name not in changeable), expected)
    arm = Arm.from_params(nest(values.items()))
    for key, value in solver_values(arm).items():
        name = f'solver.{key}'
        if name not in given:
            entry = KEYS[name]
            _redeclare(node, name, value, _arm_descriptor(name, name not in changeable),
                       _Expected(_ARM_TYPES[entry.kind], entry.choices))
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


def _descriptor(description: str, *, read_only: bool,
                choices: Sequence[str] = ()) -> ParameterDescriptor:
    descriptor = ParameterDescriptor(description=description, read_only=read_only,
                                     dynamic_typing=True)
    if choices:
        descriptor.additional_constraints = f'one of: {", ".join(str(c) for c in choices)}'
    return descriptor


def _arm_descriptor(name: str, read_only: bool) -> ParameterDescriptor:
    entry = spec(name)
    text = entry.description if entry is not None else 'arm config key'
    return _descriptor(f'{text} (arm config)', read_only=read_only,
                       choices=entry.choices if entry is not None else ())


def _redeclare(node: Node, name: str, value: Any, descriptor: ParameterDescriptor,
               expected: _Expected) -> Any:
    """Declare ``name`` = ``value`` with ``descriptor``, replacing an automatic declaration."""
    declared = _declared(node)
    if node.has_parameter(name):
        node.undeclare_parameter(name)
    declared[name] = expected
    return node.declare_parameter(name, value, descriptor, ignore_override=True).value


def _declared(node: Node) -> dict[str, _Expected]:
    """Return the node's declared parameters, installing the type checks on first use."""
    if node not in _DECLARED:
        _DECLARED[node] = {}
        if hasattr(node, 'add_pre_set_parameters_callback'):   # Iron and later
            node.add_pre_set_parameters_callback(lambda ps: _widen_all(node, ps))
        node.add_on_set_parameters_callback(lambda ps: _check_all(node, ps))
    return _DECLARED[node]


# -- types -----------------------------------------------------------------------------------

def _shown(value: Any) -> Any:
    """Return ``value`` as a user wrote it (a plain list for any array)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, '__iter__'):
        return value
    return list(value)


def _widened(value: Any, expected: Type) -> Any:
    """Return an integer (list) given for a float (list) as floats; anything else unchanged."""
    if expected is Type.DOUBLE and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if (expected is Type.DOUBLE_ARRAY and not isinstance(value, (str, bytes))
            and hasattr(value, '__iter__')
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        return [float(v) for v in value]
    return value


def _coerce(name: str, value: Any, given: Type, expected: _Expected) -> Any:
    """Return ``value`` as the type ``expected`` (ints taken for floats).

    :raises ParameterConfigError: on any other type, a word not among the choices, or a float
        outside its range
    """
    widened = {(Type.INTEGER, Type.DOUBLE), (Type.INTEGER_ARRAY, Type.DOUBLE_ARRAY)}
    if given is not expected.type and (given, expected.type) not in widened:
        allowed = ', '.join(str(c) for c in expected.choices)
        words = f': one of {allowed}' if expected.choices else ''
        raise ParameterConfigError(name, value, f'must be {_MUST_BE[expected.type]}{words}',
                                   given=_IS[given])
    value = _widened(value, expected.type)
    if expected.choices and value not in expected.choices:
        raise ParameterConfigError(name, value, f'must be one of {list(expected.choices)}')
    low, high = expected.floats or (-float('inf'), float('inf'))
    if expected.type is Type.DOUBLE and not low <= value <= high:
        raise ParameterConfigError(name, value, f'must be within [{low}, {high}]')
    return value


def _widen_all(node: Node, parameters: list[Parameter]) -> list[Parameter]:
    """Pre-set callback: an integer set for a float parameter becomes that float."""
    declared = _DECLARED.get(node, {})
    widened = []
    for parameter in parameters:
        expected = declared.get(parameter.name)
        if expected is not None:
            value = _widened(parameter.value, expected.type)
            if value is not parameter.value:
                parameter = Parameter(parameter.name, value=value)
        widened.append(parameter)
    return widened


def _check_all(node: Node, parameters: list[Parameter]) -> SetParametersResult:
    """On-set callback: refuse a value of another type (or choice, or range), in words."""
    declared = _DECLARED.get(node, {})
    for parameter in parameters:
        expected = declared.get(parameter.name)
        if expected is None:
            continue
        try:
            _coerce(parameter.name, parameter.value, parameter.type_, expected)
        except ParameterConfigError as error:
            _keep_type(node, parameter.name)
            return SetParametersResult(successful=False, reason=str(error))
    return SetParametersResult(successful=True)


def _keep_type(node: Node, name: str) -> None:
    """Undo rclpy's retyping of a dynamically typed parameter by a refused value.

    rclpy writes the new value's type into the stored descriptor before the on-set callbacks
    run; a refused set would leave ``ros2 param describe`` showing the refused type.
    """
    if node.has_parameter(name):
        node.describe_parameter(name).type = node.get_parameter(name).type_.value


# -- overrides that are no parameter ---------------------------------------------------------

def refuse_unknown_overrides(node: Node) -> None:
    """Stop the node if it was given a parameter it does not have (a misspelt name).

    Call it once the node has declared every parameter, before it touches hardware. Inside
    :func:`one_process` the check waits for the last node of the process, as one ``-p``
    reaches all of them.

    :raises ParameterConfigError: naming the first unknown override and the closest known name
    """
    group = _COMPOSED.get()
    if group is None:
        _refuse_unknown([node])
        return
    group.nodes.append(node)
    if len(group.nodes) == group.count:
        _refuse_unknown(group.nodes)


@dataclass
class _Group:
    """The nodes of one process declared so far, and how many there will be."""

    count: int
    nodes: list[Node] = field(default_factory=list)


@contextmanager
def one_process(count: int) -> Iterator[None]:
    """Check the overrides of the ``count`` nodes built inside against all of their parameters.

    The check runs as the last node calls :func:`refuse_unknown_overrides`, so that node can
    still be stopped before it opens a port.

    :raises ParameterConfigError: for an override that no node of the process declared
    """
    token = _COMPOSED.set(_Group(count))
    try:
        yield
    finally:
        _COMPOSED.reset(token)


def _refuse_unknown(nodes: list[Node]) -> None:
    known = set(STANDARD_PARAMETERS).union(*(_DECLARED.get(n, {}) for n in nodes))
    owners = ' or '.join(node.get_name() for node in nodes)
    for node in nodes:
        for name, parameter in node.get_parameters_by_prefix('').items():
            if name not in known:
                rest = name.partition('.')[2]
                candidates = known | {f'{top}.{rest}' for top in TOP_KEYS if rest}
                elsewhere = node_parameters().where_it_goes(name, parameter.value)
                raise ParameterConfigError(
                    name, parameter.value, f'is not a parameter of {owners} nor a key of the '
                    f'arm file' + (f': {elsewhere}' if elsewhere else
                                   f'; the closest known name is {closest(name, candidates)}'))


# -- a set of a parameter the node does not have ----------------------------------------------

class UndeclaredParameterError(ParameterNotDeclaredException):
    """A set names a parameter the node does not have; says which, and the closest name.

    rclpy's own message names no parameter ("Invalid access to undeclared parameter(s): []":
    its check empties the generator it then prints). Being a ParameterNotDeclaredException,
    it takes rclpy's path: the parameter service answers ``ros2 param set`` with its text.
    """

    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)


def refuse_undeclared(node: Node, parameters: Sequence[Parameter]) -> None:
    """Refuse a set of a parameter ``node`` does not have, as start-up refuses an override.

    rclpy checks undeclared names before any on-set callback runs, and Humble has no pre-set
    callback, so the check runs where the parameter service calls in:
    ``Node.set_parameters_atomically`` (see :class:`~.configured_node.ConfiguredNode`).

    :raises UndeclaredParameterError: naming the first unknown parameter, its value and the
        closest parameter of the node
    """
    known = node.get_parameters_by_prefix('')
    for parameter in parameters:
        if parameter.name not in known:
            owners = node_parameters().owners(parameter.name)
            where = (f'; it is one of {" and ".join(owners)}' if owners else
                     f'; the closest known name is {closest(parameter.name, known)}')
            error = ParameterConfigError(parameter.name, parameter.value,
                                         f'is not a parameter of {node.get_name()}{where}')
            raise UndeclaredParameterError(str(error))


# -- an empty list in a params file ----------------------------------------------------------

@contextmanager
def naming_empty_lists(node_options: Mapping[str, Any]) -> Iterator[None]:
    """Name a key set to ``[]``, which rcl and rclpy take no ROS parameter from.

    An empty list has no parameter type. Given with ``-p`` over a params file that sets the
    key, rcl keeps the file's value without a word; in a params file, the automatic
    declaration of overrides in rclpy's Node.__init__ raises a ValueError naming no key.
    Wrap that call: a ``-p`` is refused before it, the file's keys are named after it failed.

    :raises ParameterConfigError: naming the first key set to an empty list
    """
    args = list(node_options.get('cli_args') or [])
    if node_options.get('use_global_arguments', True):
        args += sys.argv[1:]
    _refuse_empty(empty_list_keys(args, files=False))
    try:
        yield
    except ValueError as error:
        _refuse_empty(empty_list_keys(args), error)
        raise


def _refuse_empty(keys: list[str], cause: Optional[BaseException] = None) -> None:
    if keys:
        others = f' (also empty: {", ".join(keys[1:])})' if keys[1:] else ''
        raise ParameterConfigError(
            keys[0], [], f'an empty list has no parameter type, so a node cannot take it: '
            f'give at least one value{others}') from cause


def empty_list_keys(args: Sequence[str], *, files: bool = True) -> list[str]:
    """Return the dotted keys set to ``[]`` by ``-p`` or (if ``files``) in a ``--params-file``.

    >>> empty_list_keys(['--ros-args', '-p', 'joint_names:=[]', '-p', 'x:=1'])
    ['joint_names']
    """
    keys: list[str] = []
    for flag, value in zip(args, args[1:], strict=False):
        if flag in ('-p', '--param') and value.replace(' ', '').endswith(':=[]'):
            keys.append(value.partition(':=')[0])
        elif flag == '--params-file' and files:
            keys.extend(_empty_in_file(value))
    return list(dict.fromkeys(keys))


def _empty_in_file(path: str) -> list[str]:
    """Return the keys set to [] in any ``ros__parameters`` section of a params file."""
    try:
        with open(path, encoding='utf-8') as stream:
            document = yaml.safe_load(stream)
    except (OSError, yaml.YAMLError):
        return []   # rcl reported an unreadable file already, naming it
    return [name for section in _parameter_sections(document)
            for name, value in flatten(section) if value == []]


def _parameter_sections(document: Any) -> Iterator[Mapping[str, Any]]:
    """Yield every ``ros__parameters`` mapping, at any depth of node names and namespaces."""
    if isinstance(document, Mapping):
        for key, value in document.items():
            if key == PARAMS_KEY and isinstance(value, Mapping):
                yield value
            else:
                yield from _parameter_sections(value)


def speed_limits_refusal(value, names: tuple[str, ...]) -> str:
    """Return why ``value`` is no ``max_speed_rad_s`` for joints ``names`` ('' if it is one).

    One speed in (0, 100] rad/s per joint: servo_driver and fabrik_ik's jog read the same key.
    """
    values = list(value) if value is not None else []
    if len(values) == len(names) and all(isinstance(v, float) and 0.0 < v <= 100.0
                                          for v in values):
        return ''
    return (f'max_speed_rad_s = {values!r}, must hold {len(names)} values (one per joint: '
            f'{", ".join(names)}), each within (0.0, 100.0]')
