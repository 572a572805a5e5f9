"""Reference-arm parameters with one key set, for the tests of the arm file's keys."""

from test.kinematics.conftest import shipped_params

GRIPPER = {'channel': 9, 'min_us': 900.0, 'max_us': 2100.0, 'home_us': 1500.0}


def concrete(pattern: str) -> tuple[dict, str]:
    """Return the reference arm's params with the section of ``pattern`` present, and its key."""
    params = shipped_params()
    params['aux_servos'] = {'gripper': dict(GRIPPER)}
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
