"""The schema is the one statement of each key's rules: the readers enforce what it describes."""

import math

import pytest

from fabrik_ros.kinematics import Arm, ArmConfigError
from fabrik_ros.kinematics.description.arm_keys import describe, KEYS, MISSING, ValueKind
from test.kinematics.conftest import shipped_params
from test.kinematics.description.arm_params import concrete, GRIPPER, lookup, with_value


def breaking_values(bounds) -> list[float]:
    """Return values just outside each end of a numeric rule."""
    values = []
    if math.isfinite(bounds.low):
        values.append(bounds.low if bounds.low_open else bounds.low - 1.0)
    if math.isfinite(bounds.high):
        values.append(bounds.high + 1.0)
    return values


RULE_CASES = [(pattern, rule, value) for pattern, entry in KEYS.items()
              for rule in entry.rules for value in breaking_values(rule)]


@pytest.mark.parametrize('pattern, rule, value', RULE_CASES)
def test_every_numeric_rule_of_the_schema_is_enforced_as_described(pattern, rule, value):
    params, key = concrete(pattern)
    entry = KEYS[pattern]
    if entry.kind is ValueKind.FLOAT_LIST:
        current = list(lookup(params, key) or [0.1] * (entry.size or 1))
        current[0] = value
        value_set, shown = current, f'{key}[0]'
    else:
        value_set, shown = (int(value) if entry.kind is ValueKind.INT else value), key
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(with_value(params, key, value_set))
    first_broken = next(r for r in entry.rules if not r.holds(value))   # `rule` or before it
    assert caught.value.key == shown
    assert caught.value.rule == first_broken.broken(value)
    assert rule.phrase in describe(key)


CHOICE_CASES = [pattern for pattern, entry in KEYS.items() if entry.choices]


@pytest.mark.parametrize('pattern', CHOICE_CASES)
def test_every_choice_list_of_the_schema_is_enforced_as_described(pattern):
    params, key = concrete(pattern)
    choices = KEYS[pattern].choices
    assert all(str(choice) in describe(key) for choice in choices)
    outside = 0 if KEYS[pattern].kind is ValueKind.INT else 'sideways'
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(with_value(params, key, outside))
    assert str(caught.value) == f'{key} = {outside!r}, must be one of {list(choices)}'


OPTIONAL = [pattern for pattern, entry in KEYS.items() if entry.default is not MISSING]


@pytest.mark.parametrize('pattern', OPTIONAL)
def test_an_absent_optional_key_reads_as_the_default_the_schema_describes(pattern):
    params, key = concrete(pattern)
    *parents, leaf = key.split('.')
    node = params
    for part in parents:
        node = node[part]
    node.pop(leaf, None)
    default = KEYS[pattern].default
    assert f'default {default}' in describe(key)
    arm = Arm.from_params(params)
    assert Arm.from_params(with_value(params, key, default)) == arm


def test_sibling_rules_are_described_by_the_keys_they_tie():
    assert describe('joints.elbow.min_deg').endswith('< max_deg')
    assert describe('joints.elbow.home_deg').endswith('within [min_deg, max_deg]')
    assert describe('aux_servos.gripper.home_us').endswith('within [min_us, max_us]')


@pytest.mark.parametrize('name', ['grip.per', 'a*b', '[x]'])
def test_any_auxiliary_servo_name_is_read_or_refused_as_a_config_error(name):
    # The section name is the file's: a dot or a wildcard in it must not reach the schema.
    params = shipped_params()
    params['aux_servos'] = {name: dict(GRIPPER, min_us=2200.0)}
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(params)
    assert caught.value.key == f'aux_servos.{name}.min_us'
    assert caught.value.rule == 'must be < max_us (2100.0)'
