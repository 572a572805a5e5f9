"""Flat ROS parameters <-> the arm file's nested mapping.

A ROS parameter holds a scalar or a flat array, so a node declares each dotted pair
:func:`flatten` gives (``joints.elbow.max_deg``) and hands :func:`nest` of them to
``Arm.from_params``.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from fabrik_ros.kinematics.errors import ArmConfigError


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
