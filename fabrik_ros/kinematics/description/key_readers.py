"""Typed reads of the arm file's keys, each checked against its schema entry (arm_keys.py).

A reader looks the dotted key up in :data:`~arm_keys.KEYS` and applies what the entry says:
its type, its default, its fixed list size, its choices, its numeric rules, and (for
:func:`read_keys`) the rules that tie it to a sibling key. Every failure is an ArmConfigError
``<dotted.key> = <value>, <rule>``; an unknown key is refused with the closest known one,
because a misspelt optional key would otherwise be ignored without a word.
"""

from collections.abc import Mapping, Sequence
import math
from typing import Any

from fabrik_ros.kinematics.description.arm_keys import (
    closest,
    KEYS,
    keys_under,
    KeySpec,
    MISSING,
    ValueKind,
)
from fabrik_ros.kinematics.errors import ArmConfigError
from fabrik_ros.node_parameters import node_parameters


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
    ...     reject_unknown({'aux_servo': {}}, ('servos', 'aux_servos', 'solver'), '')
    ... except ArmConfigError as error:
    ...     print(error.key, '->', error.rule.split(' (')[0])
    aux_servo -> is not a known key; the closest known key is aux_servos
    """
    for key in params:
        if key not in allowed:
            elsewhere = '' if path else _node_parameter(str(key), params[key])
            raise ArmConfigError(join(path, str(key)), params[key], elsewhere and (
                f'is not a key of the arm file: {elsewhere}') or (
                f'is not a known key; the closest known key is '
                f'{closest(str(key), allowed)} (known: {", ".join(allowed)})'))


def _node_parameter(key: str, value: Any) -> str:
    """Return whose node parameter a top-level ``key`` is and where it goes, '' if none's.

    ``use_pose_orientation: true`` copied under ``/**`` is fabrik_ik's, not a misspelt arm
    key. The table is read from the nodes' sources (no rclpy), only on this error path.
    """
    return node_parameters().where_it_goes(key, value)


def read_value(params: Mapping[str, Any], key: str, path: str, default: Any = MISSING) -> Any:
    """Return the value of ``key`` under ``path``, checked against its schema entry.

    :param default: the value when absent, in place of the entry's own default (for a key
        whose default depends on the rest of the arm)
    :raises ArmConfigError: naming the key (or the list entry) and the rule it breaks
    :raises LookupError: if the schema has no such key (a mistake in the code, not the file)
    """
    name = join(path, key)
    entry = _entry(path, key)
    value = params.get(key, entry.default if default is MISSING else default)
    if value is None and entry.default is None:
        return None     # an optional key without a default value: absent (or null)
    if value is MISSING:
        raise ArmConfigError(name, value, 'is required')
    value = _typed(entry.kind, value, name)
    if entry.size and len(value) != entry.size:
        raise ArmConfigError(name, value, f'must have {entry.size} entries')
    if entry.choices and value not in entry.choices:
        raise ArmConfigError(name, value, f'must be one of {list(entry.choices)}')
    _check_rules(entry, value, name)
    return value


def read_float(params: Mapping[str, Any], key: str, path: str, default: Any = MISSING) -> float:
    """Return a finite float (ints accepted) that keeps its key's rules."""
    return float(read_value(params, key, path, default))


def read_int(params: Mapping[str, Any], key: str, path: str, default: Any = MISSING) -> int:
    """Return an int (a float with no fractional part is accepted) that keeps its rules."""
    return int(read_value(params, key, path, default))


def read_str(params: Mapping[str, Any], key: str, path: str, default: Any = MISSING) -> str:
    """Return a non-empty string (one of the key's choices, if it has any)."""
    return str(read_value(params, key, path, default))


def read_floats(params: Mapping[str, Any], key: str, path: str,
                default: Any = MISSING) -> list[float]:
    """Return a list of finite floats, each keeping its key's rules."""
    return [float(x) for x in read_value(params, key, path, default)]


def read_strs(params: Mapping[str, Any], key: str, path: str,
              default: Any = MISSING) -> list[str]:
    """Return a list of non-empty strings."""
    return [str(x) for x in read_value(params, key, path, default)]


def read_keys(params: Mapping[str, Any], pattern: str, path: str,
              defaults: Mapping[str, Any] | None = None,
              family: str | None = None) -> dict[str, Any]:
    """Return every key of the schema under ``pattern`` (e.g. 'joints.*'), read in order.

    Unknown keys are refused first. A rule that ties a key to a sibling (``below``,
    ``within``) is checked as soon as both are read, so the first broken rule in schema order
    is the one named.

    :param path: the dotted path of this section in the file (e.g. 'joints.elbow')
    :param defaults: values for absent keys in place of their entries' defaults
    :param family: read only the servo keys of this family (a servo section's)
    """
    leaves = keys_under(pattern, family)
    reject_unknown(params, leaves, path)
    values: dict[str, Any] = {}
    for leaf in leaves:
        values[leaf] = read_value(params, leaf, path, (defaults or {}).get(leaf, MISSING))
        for earlier in values:
            _check_siblings(earlier, leaf, values, path)
    return values


def _entry(path: str, key: str) -> KeySpec:
    """Return the schema entry of ``key`` in the section at ``path`` (any name for ``*``).

    The section's name may hold anything, dots included: only the top key counts.

    :raises LookupError: if the schema has no such key (a mistake in the code, not the file)
    """
    top, _, name = path.partition('.')
    pattern = join(f'{top}.*' if name else top, key)
    if pattern not in KEYS:
        raise LookupError(f'{pattern} is not a key of the arm file schema')
    return KEYS[pattern]


def _typed(kind: ValueKind, value: Any, name: str) -> Any:
    """Return ``value`` as ``kind`` (ints as floats, integral floats as ints) or raise."""
    if kind is ValueKind.FLOAT:
        return _finite(value, name)
    if kind is ValueKind.INT:
        if isinstance(value, float) and math.isfinite(value) and value == int(value):
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArmConfigError(name, value, 'must be an integer')
        return value
    if kind is ValueKind.STR:
        if not isinstance(value, str) or not value:
            raise ArmConfigError(name, value, 'must be a non-empty string')
        return value
    item = 'float' if kind is ValueKind.FLOAT_LIST else 'str'
    if not isinstance(value, (list, tuple)):
        raise ArmConfigError(name, value, f'must be a list of {item}')
    if kind is ValueKind.FLOAT_LIST:
        return [_finite(entry, f'{name}[{index}]') for index, entry in enumerate(value)]
    for index, entry in enumerate(value):
        if not isinstance(entry, str) or not entry:
            raise ArmConfigError(f'{name}[{index}]', entry, 'must be a non-empty str')
    return list(value)


def _finite(value: Any, name: str) -> float:
    """Return ``value`` as a float, or raise unless it is a finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ArmConfigError(name, value, 'must be a finite number')
    return float(value)


def _check_rules(entry: KeySpec, value: Any, name: str) -> None:
    """Raise for the first numeric rule the value (or a list entry) breaks."""
    if not entry.rules:
        return
    items = [(name, value)] if not isinstance(value, list) else [
        (f'{name}[{index}]', item) for index, item in enumerate(value)]
    for shown, item in items:
        for rule in entry.rules:
            if not rule.holds(item):
                raise ArmConfigError(shown, item, rule.broken(item))


def _check_siblings(key: str, just_read: str, values: Mapping[str, Any], path: str) -> None:
    """Check ``key``'s sibling rules that ``just_read`` completes (both sides now read)."""
    entry = _entry(path, key)
    value = values[key]
    if entry.below and just_read in (key, entry.below) and entry.below in values:
        other = values[entry.below]
        if not value < other:
            raise ArmConfigError(join(path, key), value, f'must be < {entry.below} ({other!r})')
    if entry.within and just_read in (key, *entry.within) and all(
            k in values for k in entry.within):
        low, high = values[entry.within[0]], values[entry.within[1]]
        if not low <= value <= high:
            raise ArmConfigError(join(path, key), value, f'must be within [{low}, {high}]')
