"""Typed reads from a nested parameter mapping, each failure an ArmConfigError naming the key.

ROS parameters arrive as int where a YAML file wrote ``1``: every float read accepts ints.
"""

from collections.abc import Mapping, Sequence
import math
from typing import Any

from fabrik_ros.kinematics.errors import ArmConfigError


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
    """Raise for the first key of ``params`` that is not in ``allowed`` (likely a typo)."""
    for key in params:
        if key not in allowed:
            raise ArmConfigError(join(path, str(key)), params[key],
                                 f'is not a known key (known: {", ".join(allowed)})')


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
              default: Any = MISSING) -> list:
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
