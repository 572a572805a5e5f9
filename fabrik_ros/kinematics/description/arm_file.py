"""The arm file: its keys, their types and meaning, and the reading of it into Arm fields.

One YAML file describes the arm for every node and for :func:`load_arm`: a ROS 2 parameter file
whose ``/**: ros__parameters:`` mapping holds the keys of :data:`KEYS`. A ROS parameter holds a
scalar or a flat array, so nested maps become dotted names (``joints.elbow.max_deg``): a node
declares each pair :func:`flatten` gives and hands :func:`nest` of them to ``Arm.from_params``,
which reads them with the functions below. Every failure is an ArmConfigError naming the
dotted key, its value and the rule; an unknown key (at any level) is refused with the closest
known one, because a misspelt optional section would otherwise be ignored without a word.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
import difflib
import enum
from fnmatch import fnmatchcase
import math
from pathlib import Path
from typing import Any, Optional

import yaml

from fabrik_ros.kinematics.description.joint import Joint, JointKind, Link
from fabrik_ros.kinematics.description.servo_map import AuxServo, ServoCalibration
from fabrik_ros.kinematics.errors import ArmConfigError, SolverOptionsError
from fabrik_ros.kinematics.options import Bend, SolverOptions

WILDCARD = '/**'
PARAMS_KEY = 'ros__parameters'
PULSE_RANGE_US = (400.0, 2600.0)


# -- the schema ------------------------------------------------------------------------------

class ValueKind(enum.Enum):
    """The type a key's value must have; the value is the phrase an error shows."""

    FLOAT = 'a float'
    INT = 'an integer'
    STR = 'a string'
    FLOAT_LIST = 'a list of floats'
    STR_LIST = 'a list of strings'


@dataclass(frozen=True)
class KeySpec:
    """What one key of the arm file holds.

    :param kind: the type of its value (ints are taken where a float is asked)
    :param description: meaning, with the unit in brackets
    :param choices: the allowed words, for a key that holds one of a few
    """

    kind: ValueKind
    description: str
    choices: tuple[str, ...] = ()


_F, _I, _S = ValueKind.FLOAT, ValueKind.INT, ValueKind.STR
# ``*`` stands for one joint (or auxiliary servo) name.
KEYS: dict[str, KeySpec] = {
    'base_frame': KeySpec(_S, 'frame targets and joint positions are expressed in'),
    'joint_names': KeySpec(ValueKind.STR_LIST, 'actuated joints in chain order: optional '
                           'yaw, pitch joints, then roll'),
    'geometry.shoulder_height_m': KeySpec(_F, 'height of the first pitch joint above the '
                                          'base origin [m]'),
    'geometry.link_lengths_m': KeySpec(ValueKind.FLOAT_LIST, 'distance between consecutive '
                                       'pitch joints, shoulder first [m]'),
    'geometry.tool_length_m': KeySpec(_F, 'distance from the last pitch joint to the tool '
                                      'point [m]'),
    'joints.*.kind': KeySpec(_S, 'yaw (about base z), pitch (hinge, horizontal axis) or roll '
                             '(tool axis)', tuple(k.value for k in JointKind)),
    'joints.*.min_deg': KeySpec(_F, 'lower joint limit [deg], within [-180, 180]'),
    'joints.*.max_deg': KeySpec(_F, 'upper joint limit [deg], within [-180, 180]'),
    'joints.*.home_deg': KeySpec(_F, 'home angle [deg], within the limits'),
    'servos.*.channel': KeySpec(_I, 'servo board channel driving this joint'),
    'servos.*.min_us': KeySpec(_F, 'lowest pulse width the servo is driven with [us], within '
                               '[400, 2600]'),
    'servos.*.max_us': KeySpec(_F, 'highest pulse width the servo is driven with [us], within '
                               '[400, 2600]'),
    'servos.*.angle_at_min_deg': KeySpec(_F, 'joint angle at min_us [deg]'),
    'servos.*.angle_at_max_deg': KeySpec(_F, 'joint angle at max_us [deg]'),
    'servos.*.trim_us': KeySpec(_F, 'offset added to every pulse to correct the horn '
                                'mounting [us]'),
    'aux_servos.*.channel': KeySpec(_I, 'servo board channel of a servo outside the IK chain'),
    'aux_servos.*.min_us': KeySpec(_F, 'lowest pulse width of the auxiliary servo [us], '
                                   'within [400, 2600]'),
    'aux_servos.*.max_us': KeySpec(_F, 'highest pulse width of the auxiliary servo [us], '
                                   'within [400, 2600]'),
    'aux_servos.*.home_us': KeySpec(_F, 'pulse width the auxiliary servo starts at [us]'),
    'solver.tolerance_m': KeySpec(_F, 'IK counts as reached when the tool point is this '
                                  'close [m]'),
    'solver.max_iterations': KeySpec(_I, 'FABRIK iteration cap per attempt'),
    'solver.min_improvement_m': KeySpec(_F, 'an attempt stops as stalled after 2 iterations '
                                        'gaining less [m]'),
    'solver.bend': KeySpec(_S, 'elbow preference: any (keep the seed branch), up or down',
                           tuple(b.value for b in Bend)),
}


def _keys_under(prefix: str) -> tuple[str, ...]:
    """Return the leaf keys of the schema directly under ``prefix`` (e.g. 'joints.*')."""
    return tuple(pattern.rpartition('.')[2] for pattern in KEYS
                 if pattern.rpartition('.')[0] == prefix)


TOP_KEYS = tuple(dict.fromkeys(pattern.split('.')[0] for pattern in KEYS))
GEOMETRY_KEYS = _keys_under('geometry')
JOINT_KEYS = _keys_under('joints.*')
SERVO_KEYS = _keys_under('servos.*')
AUX_KEYS = _keys_under('aux_servos.*')
SOLVER_KEYS = _keys_under('solver')


def spec(name: str) -> Optional[KeySpec]:
    """Return the schema entry of a dotted key (any joint name for ``*``), None if unknown.

    >>> spec('joints.elbow.max_deg').description
    'upper joint limit [deg], within [-180, 180]'
    >>> spec('joints.elbow.max_deg.extra') is None
    True
    """
    for pattern, entry in KEYS.items():
        if fnmatchcase(name, pattern) and pattern.count('.') == name.count('.'):
            return entry
    return None


def describe(name: str) -> str:
    """Return the description (with unit) of a dotted key, '' if unknown.

    >>> describe('solver.tolerance_m')
    'IK counts as reached when the tool point is this close [m]'
    """
    entry = spec(name)
    return entry.description if entry is not None else ''


def closest(name: str, known: Iterable[str]) -> str:
    """Return the known name most like ``name`` (a likely misspelling's intended key).

    >>> closest('aux_servo', ['servos', 'aux_servos', 'solver'])
    'aux_servos'
    """
    candidates = sorted(set(known))
    if not candidates:
        return ''
    return max(candidates, key=lambda c: difflib.SequenceMatcher(None, name, c).ratio())


# -- flat ROS parameters <-> the nested mapping ----------------------------------------------

def flatten(params: Mapping[str, Any], prefix: str = '') -> list[tuple[str, Any]]:
    """Return (dotted_name, value) pairs for every leaf of a nested mapping, in file order.

    >>> flatten({'joints': {'elbow': {'min_deg': -135.0}}, 'joint_names': ['elbow']})
    [('joints.elbow.min_deg', -135.0), ('joint_names', ['elbow'])]
    """
    pairs: list[tuple[str, Any]] = []
    for key, value in params.items():
        name = f'{prefix}{key}'
        if isinstance(value, Mapping):
            pairs.extend(flatten(value, f'{name}.'))
        else:
            pairs.append((name, value))
    return pairs


def nest(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Return the nested mapping that dotted (name, value) pairs describe.

    >>> nest([('joints.elbow.min_deg', -135.0), ('base_frame', 'base_link')])
    {'joints': {'elbow': {'min_deg': -135.0}}, 'base_frame': 'base_link'}
    """
    nested: dict[str, Any] = {}
    for name, value in pairs:
        *parents, leaf = name.split('.')
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ArmConfigError(name, value, f'{part} is both a value and a section')
        node[leaf] = value
    return nested


# -- typed reads -----------------------------------------------------------------------------

class _Missing:
    """Stands for an absent key in error messages."""

    def __repr__(self) -> str:
        """Return the marker shown as the value of a missing key."""
        return '<missing>'


MISSING = _Missing()


def join(path: str, key: str) -> str:
    """Return the dotted name of ``key`` under ``path``.

    >>> join('joints.elbow', 'max_deg'), join('', 'joint_names')
    ('joints.elbow.max_deg', 'joint_names')
    """
    return f'{path}.{key}' if path else key


def section(params: Mapping[str, Any], key: str, path: str = '', *,
            required: bool = True) -> Mapping[str, Any]:
    """Return the sub-mapping at ``key`` (an empty one if optional and absent)."""
    value = params.get(key, MISSING)
    if value is MISSING and not required:
        return {}
    if not isinstance(value, Mapping):
        rule = 'is required' if value is MISSING else 'must be a mapping of keys'
        raise ArmConfigError(join(path, key), value, rule)
    return value


def reject_unknown(params: Mapping[str, Any], allowed: Sequence[str], path: str) -> None:
    """Raise for the first key of ``params`` not in ``allowed`` (a typo?), naming the closest.

    >>> try:
    ...     reject_unknown({'aux_servo': {}}, TOP_KEYS, '')
    ... except ArmConfigError as error:
    ...     print(error.key, '->', error.rule.split(' (')[0])
    aux_servo -> is not a known key; the closest known key is aux_servos
    """
    for key in params:
        if key not in allowed:
            raise ArmConfigError(join(path, str(key)), params[key],
                                 f'is not a known key; the closest known key is '
                                 f'{closest(str(key), allowed)} (known: {", ".join(allowed)})')


def read_float(params: Mapping[str, Any], key: str, path: str, default: Any = MISSING) -> float:
    """Return a finite float (ints accepted)."""
    value = params.get(key, default)
    if value is MISSING:
        raise ArmConfigError(join(path, key), value, 'is required')
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ArmConfigError(join(path, key), value, 'must be a finite number')
    return float(value)


def read_int(params: Mapping[str, Any], key: str, path: str, default: Any = MISSING) -> int:
    """Return an int (a float with no fractional part is accepted)."""
    value = params.get(key, default)
    if value is MISSING:
        raise ArmConfigError(join(path, key), value, 'is required')
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArmConfigError(join(path, key), value, 'must be an integer')
    return value


def read_str(params: Mapping[str, Any], key: str, path: str, default: Any = MISSING) -> str:
    """Return a non-empty string."""
    value = params.get(key, default)
    if not isinstance(value, str) or not value:
        rule = 'is required' if value is MISSING else 'must be a non-empty string'
        raise ArmConfigError(join(path, key), value, rule)
    return value


def read_list(params: Mapping[str, Any], key: str, path: str, item: type,
              default: Any = MISSING) -> list[Any]:
    """Return a list whose items are all of type ``item`` (ints accepted for float)."""
    value = params.get(key, default)
    if value is MISSING:
        raise ArmConfigError(join(path, key), value, 'is required')
    if not isinstance(value, (list, tuple)):
        raise ArmConfigError(join(path, key), value, f'must be a list of {item.__name__}')
    for index, entry in enumerate(value):
        if item is float:
            _check_float_item(entry, f'{join(path, key)}[{index}]')
        elif isinstance(entry, bool) or not isinstance(entry, item) or entry == '':
            raise ArmConfigError(f'{join(path, key)}[{index}]', entry,
                                 f'must be a non-empty {item.__name__}')
    return [float(x) for x in value] if item is float else list(value)


def _check_float_item(entry: Any, name: str) -> None:
    """Raise unless ``entry`` is a finite number."""
    if isinstance(entry, bool) or not isinstance(entry, (int, float)) or not math.isfinite(entry):
        raise ArmConfigError(name, entry, 'must be a finite number')


# -- the sections, read into the arm's parts -------------------------------------------------

def read_joint_names(params: Mapping[str, Any]) -> list[str]:
    """Return the joint names: a non-empty list of unique strings."""
    names = read_list(params, 'joint_names', '', str)
    if not names:
        raise ArmConfigError('joint_names', names, 'must name at least one joint')
    for index, name in enumerate(names):
        if name in names[:index]:
            raise ArmConfigError(f'joint_names[{index}]', name, 'must be unique')
    return names


def read_joints(params: Mapping[str, Any], names: list[str]) -> tuple[Joint, ...]:
    """Return one Joint per name from ``joints.<name>.*`` and check the chain's shape."""
    table = section(params, 'joints')
    reject_unknown(table, names, 'joints')
    joints = tuple(_read_joint(section(table, name, 'joints'), name) for name in names)
    _check_order(joints)
    return joints


def _read_joint(entry: Mapping[str, Any], name: str) -> Joint:
    """Return one joint, limits within [-180, 180] deg, min < max, home inside."""
    path = f'joints.{name}'
    reject_unknown(entry, JOINT_KEYS, path)
    kind_text = read_str(entry, 'kind', path)
    kinds = [k.value for k in JointKind]
    if kind_text not in kinds:
        raise ArmConfigError(join(path, 'kind'), kind_text, f'must be one of {kinds}')
    low, high = read_float(entry, 'min_deg', path), read_float(entry, 'max_deg', path)
    for key, value in (('min_deg', low), ('max_deg', high)):
        if not -180.0 <= value <= 180.0:
            raise ArmConfigError(join(path, key), value, 'must be within [-180.0, 180.0]')
    if low >= high:
        raise ArmConfigError(join(path, 'min_deg'), low, f'must be < max_deg ({high!r})')
    home = read_float(entry, 'home_deg', path)
    if not low <= home <= high:
        raise ArmConfigError(join(path, 'home_deg'), home, f'must be within [{low}, {high}]')
    return Joint(name, JointKind(kind_text), math.radians(low), math.radians(high),
                 math.radians(home))


def _check_order(joints: tuple[Joint, ...]) -> None:
    """Require: an optional yaw first, then pitch joints, then only roll joints."""
    kinds = [j.kind for j in joints]
    if JointKind.PITCH not in kinds:
        raise ArmConfigError('joint_names', [j.name for j in joints],
                             'must include at least one pitch joint')
    last_pitch = max(i for i, k in enumerate(kinds) if k is JointKind.PITCH)
    for index, joint in enumerate(joints):
        if joint.kind is JointKind.YAW and index != 0:
            raise ArmConfigError(f'joints.{joint.name}.kind', 'yaw',
                                 'only the first joint may be a yaw joint')
        if joint.kind is JointKind.ROLL and index < last_pitch:
            raise ArmConfigError(f'joints.{joint.name}.kind', 'roll',
                                 'roll joints must come after the last pitch joint')


def read_geometry(params: Mapping[str, Any],
                  joints: tuple[Joint, ...]) -> tuple[float, tuple[Link, ...]]:
    """Return the shoulder height and one Link per pitch joint (the last one is the tool)."""
    geometry = section(params, 'geometry')
    reject_unknown(geometry, GEOMETRY_KEYS, 'geometry')
    height = read_float(geometry, 'shoulder_height_m', 'geometry')
    if height < 0.0:
        raise ArmConfigError('geometry.shoulder_height_m', height, 'must be >= 0.0')
    pitch = [j.name for j in joints if j.kind is JointKind.PITCH]
    lengths = read_list(geometry, 'link_lengths_m', 'geometry', float,
                        [] if len(pitch) == 1 else MISSING)
    if len(lengths) != len(pitch) - 1:
        raise ArmConfigError('geometry.link_lengths_m', lengths,
                             f'must have {len(pitch) - 1} entries, one between each pair of '
                             f'consecutive pitch joints {pitch}')
    lengths.append(read_float(geometry, 'tool_length_m', 'geometry'))
    for index, length in enumerate(lengths):
        if length <= 0.0:
            key = ('geometry.tool_length_m' if index == len(lengths) - 1
                   else f'geometry.link_lengths_m[{index}]')
            raise ArmConfigError(key, length, 'must be > 0.0')
    return height, tuple(Link(name, length) for name, length in zip(pitch, lengths, strict=True))


def read_servos(params: Mapping[str, Any],
                joints: tuple[Joint, ...]) -> tuple[ServoCalibration, ...]:
    """Return one calibration per joint from ``servos.<joint>.*``."""
    table = section(params, 'servos')
    names = [j.name for j in joints]
    reject_unknown(table, names, 'servos')
    return tuple(_read_servo(section(table, name, 'servos'), name) for name in names)


def _read_servo(entry: Mapping[str, Any], name: str) -> ServoCalibration:
    """Return one calibration: channel >= 0, pulse range, distinct end angles."""
    path = f'servos.{name}'
    reject_unknown(entry, SERVO_KEYS, path)
    channel = _read_channel(entry, path)
    low, high = _read_pulse_range(entry, path)
    at_low = read_float(entry, 'angle_at_min_deg', path)
    at_high = read_float(entry, 'angle_at_max_deg', path)
    if at_low == at_high:
        raise ArmConfigError(join(path, 'angle_at_max_deg'), at_high,
                             'must differ from angle_at_min_deg')
    trim = read_float(entry, 'trim_us', path, 0.0)
    if abs(trim) >= high - low:
        raise ArmConfigError(join(path, 'trim_us'), trim,
                             f'must be smaller in size than the pulse range ({high - low})')
    return ServoCalibration(name, channel, low, high, math.radians(at_low),
                            math.radians(at_high), trim)


def read_aux_servos(params: Mapping[str, Any]) -> tuple[AuxServo, ...]:
    """Return the channels outside the IK chain from the optional ``aux_servos.<name>.*``."""
    table = section(params, 'aux_servos', required=False)
    servos = []
    for name in table:
        path = f'aux_servos.{name}'
        entry = section(table, name, 'aux_servos')
        reject_unknown(entry, AUX_KEYS, path)
        low, high = _read_pulse_range(entry, path)
        home = read_float(entry, 'home_us', path)
        if not low <= home <= high:
            raise ArmConfigError(join(path, 'home_us'), home, f'must be within [{low}, {high}]')
        servos.append(AuxServo(str(name), _read_channel(entry, path), low, high, home))
    return tuple(servos)


def check_channels(calibrations: tuple[ServoCalibration, ...],
                   aux: tuple[AuxServo, ...]) -> None:
    """Require every servo, joint or auxiliary, to have a channel of its own."""
    seen: dict[int, str] = {}
    for path, channel in ([(f'servos.{c.joint}', c.channel) for c in calibrations]
                          + [(f'aux_servos.{a.name}', a.channel) for a in aux]):
        if channel in seen:
            raise ArmConfigError(f'{path}.channel', channel, f'is already used by {seen[channel]}')
        seen[channel] = path


def _read_channel(entry: Mapping[str, Any], path: str) -> int:
    channel = read_int(entry, 'channel', path)
    if channel < 0:
        raise ArmConfigError(join(path, 'channel'), channel, 'must be >= 0')
    return channel


def _read_pulse_range(entry: Mapping[str, Any], path: str) -> tuple[float, float]:
    low, high = read_float(entry, 'min_us', path), read_float(entry, 'max_us', path)
    for key, value in (('min_us', low), ('max_us', high)):
        if not PULSE_RANGE_US[0] <= value <= PULSE_RANGE_US[1]:
            raise ArmConfigError(join(path, key), value,
                                 f'must be within [{PULSE_RANGE_US[0]}, {PULSE_RANGE_US[1]}]')
    if low >= high:
        raise ArmConfigError(join(path, 'min_us'), low, f'must be < max_us ({high!r})')
    return low, high


def read_solver(params: Mapping[str, Any]) -> SolverOptions:
    """Return the solver options from the optional ``solver.*`` (defaults where absent)."""
    entry = section(params, 'solver', required=False)
    reject_unknown(entry, SOLVER_KEYS, 'solver')
    defaults = SolverOptions()
    bend_text = read_str(entry, 'bend', 'solver', defaults.bend.value)
    bends = [b.value for b in Bend]
    if bend_text not in bends:
        raise ArmConfigError('solver.bend', bend_text, f'must be one of {bends}')
    try:
        return SolverOptions(
            tolerance_m=read_float(entry, 'tolerance_m', 'solver', defaults.tolerance_m),
            max_iterations=read_int(entry, 'max_iterations', 'solver', defaults.max_iterations),
            min_improvement_m=read_float(entry, 'min_improvement_m', 'solver',
                                         defaults.min_improvement_m),
            bend=Bend(bend_text))
    except SolverOptionsError as error:
        raise ArmConfigError(f'solver.{error.name}', error.value, error.rule) from error


# -- the file --------------------------------------------------------------------------------

def unwrap(document: Any, source: str) -> Mapping[str, Any]:
    """Return the mapping under ``/**: ros__parameters:`` of a parsed parameter file.

    >>> unwrap({'/**': {'ros__parameters': {'joint_names': ['a']}}}, 'arm.yaml')
    {'joint_names': ['a']}
    """
    if not isinstance(document, Mapping):
        raise ArmConfigError(source, type(document).__name__,
                             f'must hold a mapping ({WILDCARD}: {PARAMS_KEY}: ...)')
    entry = document.get(WILDCARD)
    if not isinstance(entry, Mapping) or not isinstance(entry.get(PARAMS_KEY), Mapping):
        raise ArmConfigError(f'{WILDCARD}.{PARAMS_KEY}', entry,
                             f'must be a mapping in {source}')
    params: Mapping[str, Any] = entry[PARAMS_KEY]
    return params


def read_params_file(path: str | Path) -> Mapping[str, Any]:
    """Return the ``ros__parameters`` mapping of an arm file, unvalidated.

    :raises ArmConfigError: if the file cannot be read, is not YAML or has no such mapping
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding='utf-8')
    except OSError as error:
        raise ArmConfigError(source, str(path), f'cannot be read: {error.strerror}') from error
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ArmConfigError(source, str(path), f'is not valid YAML: {error}') from error
    return unwrap(document, source)

