"""Flat ROS parameters <-> the nested arm mapping, and a description for every key.

A ROS parameter holds a scalar or a flat array; nested YAML maps become dotted names
(``joints.elbow.max_deg``). A node declares each pair :func:`flatten` gives, reads the values
back, and hands :func:`nest` of them to ``Arm.from_params``.
"""

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any

from fabrik_ros.kinematics.errors import ArmConfigError

DESCRIPTIONS: dict[str, str] = {
    'base_frame': 'frame targets and joint positions are expressed in',
    'joint_names': 'actuated joints in chain order: optional yaw, pitch joints, then roll',
    'geometry.shoulder_height_m': 'height of the first pitch joint above the base origin [m]',
    'geometry.link_lengths_m': 'distance between consecutive pitch joints, shoulder first [m]',
    'geometry.tool_length_m': 'distance from the last pitch joint to the tool point [m]',
    'joints.*.kind': 'yaw (about base z), pitch (hinge, horizontal axis) or roll (tool axis)',
    'joints.*.min_deg': 'lower joint limit [deg], within [-180, 180]',
    'joints.*.max_deg': 'upper joint limit [deg], within [-180, 180]',
    'joints.*.home_deg': 'home angle [deg], within the limits',
    'servos.*.channel': 'servo board channel driving this joint',
    'servos.*.min_us': 'lowest pulse width the servo is driven with [us], within [400, 2600]',
    'servos.*.max_us': 'highest pulse width the servo is driven with [us], within [400, 2600]',
    'servos.*.angle_at_min_deg': 'joint angle at min_us [deg]',
    'servos.*.angle_at_max_deg': 'joint angle at max_us [deg]',
    'servos.*.trim_us': 'offset added to every pulse to correct the horn mounting [us]',
    'aux_servos.*.channel': 'servo board channel of a servo outside the IK chain',
    'aux_servos.*.min_us': 'lowest pulse width of the auxiliary servo [us], within [400, 2600]',
    'aux_servos.*.max_us': 'highest pulse width of the auxiliary servo [us], within [400, 2600]',
    'aux_servos.*.home_us': 'pulse width the auxiliary servo starts at [us]',
    'solver.tolerance_m': 'IK counts as reached when the tool point is this close [m]',
    'solver.max_iterations': 'FABRIK iteration cap per attempt',
    'solver.min_improvement_m': 'an attempt stops as stalled after 2 iterations gaining less [m]',
    'solver.bend': 'elbow preference: any (keep the seed branch), up or down',
}


def describe(name: str) -> str:
    """Return the description (with unit) of a dotted parameter name, '' if unknown.

    >>> describe('joints.elbow.max_deg')
    'upper joint limit [deg], within [-180, 180]'
    """
    for pattern, text in DESCRIPTIONS.items():
        if fnmatchcase(name, pattern) and pattern.count('.') == name.count('.'):
            return text
    return ''


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
