"""Reference-arm parameters with one key set, for the tests of the arm file's keys."""

from fabrik_ros.kinematics.description.arm_keys import KEYS
from test.kinematics.conftest import shipped_params

GRIPPER = {'channel': 9, 'min_us': 900.0, 'max_us': 2100.0, 'home_us': 1500.0}
COUNT_GRIPPER = {'id': 9, 'zero_count': 2048.0, 'min_deg': -30.0, 'max_deg': 60.0,
                 'home_deg': 0.0}


def with_count_servos(params: dict) -> dict:
    """Return ``params`` with bus servos in counts: ids 1.., each range centred in the turn."""
    params['servos'] = {}
    for index, name in enumerate(params['joint_names']):
        joint = params['joints'][name]
        middle_deg = (joint['min_deg'] + joint['max_deg']) / 2.0
        params['servos'][name] = {'id': index + 1,
                                  'zero_count': 2047.5 - middle_deg * 4096.0 / 360.0}
    return params


def concrete(pattern: str) -> tuple[dict, str]:
    """Return the reference arm's params with the section of ``pattern`` present, and its key.

    A bus servo key (count family) gets the reference arm with bus servos.
    """
    params = shipped_params()
    params['aux_servos'] = {'gripper': dict(GRIPPER)}
    if KEYS[pattern].family == 'count':
        with_count_servos(params)
        params['aux_servos'] = {'gripper': dict(COUNT_GRIPPER)}
    params.setdefault('solver', {})
    name = 'gripper' if pattern.startswith('aux_servos.') else 'elbow'
    return params, pattern.replace('*', name)


def with_value(params: dict, dotted: str, value) -> dict:
    *parents, leaf = dotted.split('.')
    node = params
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value
    return params


def lookup(params: dict, dotted: str):
    node = params
    for part in dotted.split('.'):
        node = node.get(part) if isinstance(node, dict) else None
    return node
