"""Flat ROS parameters: every leaf is a scalar or a flat one-type array, and nest() undoes it."""

import pytest

from fabrik_ros.kinematics import Arm, ArmConfigError
from fabrik_ros.kinematics.description.arm_keys import (
    closest,
    describe,
    KEYS,
    spec,
    TOP_KEYS,
    ValueKind,
)
from fabrik_ros.kinematics.description.flat_keys import flatten, nest
from test.kinematics.conftest import ARM_CONFIGS, shipped_params


@pytest.mark.parametrize('name', ARM_CONFIGS)
def test_every_leaf_fits_a_ros_parameter(name):
    for key, value in flatten(shipped_params(name)):
        if isinstance(value, list):
            assert value and len({type(v) for v in value}) == 1, key
            assert isinstance(value[0], (str, float)), key
        else:
            assert isinstance(value, (str, float, int)) and not isinstance(value, bool), key


@pytest.mark.parametrize('name', ARM_CONFIGS)
def test_shipped_files_write_floats_with_a_decimal_point(name):
    integer_keys = ('.channel', 'max_iterations')
    for key, value in flatten(shipped_params(name)):
        values = value if isinstance(value, list) else [value]
        if not key.endswith(integer_keys) and not isinstance(values[0], str):
            assert all(isinstance(v, float) for v in values), key


@pytest.mark.parametrize('name', ARM_CONFIGS)
def test_nest_of_flatten_rebuilds_the_same_arm(name):
    params = shipped_params(name)
    pairs = flatten(params)
    assert nest(pairs) == params
    assert Arm.from_params(nest(pairs)) == Arm.from_params(params)


@pytest.mark.parametrize('name', ARM_CONFIGS)
def test_every_key_has_a_description_with_its_unit(name):
    for key, _ in flatten(shipped_params(name)):
        text = describe(key)
        assert text, key
        for suffix, unit in (('_deg', '[deg]'), ('_m', '[m]'), ('_us', '[us]')):
            if key.endswith(suffix):
                assert unit in text, key


def test_description_patterns_do_not_match_deeper_keys():
    assert describe('joints.elbow.min_deg.extra') == ''
    assert describe('unknown') == ''
    assert all(entry.description for entry in KEYS.values())


def test_nest_rejects_a_name_used_as_value_and_section():
    with pytest.raises(ArmConfigError) as caught:
        nest([('joints', 1.0), ('joints.elbow.min_deg', -135.0)])
    assert 'joints is both a value and a section' in str(caught.value)


@pytest.mark.parametrize('name', ARM_CONFIGS)
def test_every_shipped_value_has_the_kind_its_key_says(name):
    # The nodes declare each key with this kind: an int written for a float becomes a float.
    expected = {ValueKind.FLOAT: (float,), ValueKind.INT: (int,), ValueKind.STR: (str,),
                ValueKind.FLOAT_LIST: (list,), ValueKind.STR_LIST: (list,)}
    for key, value in flatten(shipped_params(name)):
        entry = spec(key)
        assert entry is not None, key
        assert isinstance(value, expected[entry.kind]), key
        if entry.choices:
            assert value in entry.choices, key


def test_closest_names_the_intended_key_of_common_typos():
    assert closest('solvr', TOP_KEYS) == 'solver'
    assert closest('aux_servo', TOP_KEYS) == 'aux_servos'
    assert closest('jionts', TOP_KEYS) == 'joints'
    assert closest('tolerance', ['tolerance_m', 'max_iterations', 'bend']) == 'tolerance_m'
    assert closest('anything', []) == ''
