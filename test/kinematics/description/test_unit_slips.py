"""A length no hobby arm has is refused, naming the key and the likely slip (issue 22, 3)."""

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from fabrik_ros.kinematics import Arm, ArmConfigError
from fabrik_ros.kinematics.description.arm_keys import KEYS, LENGTH, LENGTH_LIMIT_M, ValueKind
from test.kinematics.conftest import shipped_params
from test.kinematics.description.arm_params import concrete, lookup, with_value

LENGTH_KEYS = sorted(pattern for pattern, entry in KEYS.items() if LENGTH in entry.rules)


def test_every_geometry_key_is_a_bounded_length():
    assert set(LENGTH_KEYS) >= {f'geometry.{key}' for key in
                                ('shoulder_height_m', 'link_lengths_m', 'tool_length_m')}


def test_millimetres_written_as_metres_are_refused_with_the_slip_named():
    params = with_value(shipped_params(), 'geometry.shoulder_height_m', 70.0)
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(params)
    assert str(caught.value) == ('geometry.shoulder_height_m = 70.0, must be within '
                                 '[-2.0, 2.0] m (millimetres written as metres? '
                                 '70.0 mm = 0.07 m)')


def test_link_lengths_of_1e308_are_refused_naming_the_entry():
    params = with_value(shipped_params(), 'geometry.link_lengths_m', [0.105, 1e308])
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(params)
    assert caught.value.key == 'geometry.link_lengths_m[1]'
    assert 'millimetres written as metres? 1e+308 mm = 1e+305 m' in caught.value.rule


def test_the_longest_plausible_length_is_taken():
    arm = Arm.from_params(with_value(shipped_params(), 'geometry.tool_length_m',
                                     LENGTH_LIMIT_M))
    assert arm.links[-1].length_m == LENGTH_LIMIT_M


beyond = st.floats(min_value=LENGTH_LIMIT_M, max_value=1.7e308, exclude_min=True)


@settings(max_examples=300, deadline=None)
@given(pattern=st.sampled_from(LENGTH_KEYS), size=beyond, negative=st.booleans(),
       index=st.integers(min_value=0, max_value=5))
def test_any_length_beyond_the_bound_in_any_length_key_is_refused_naming_the_key(
        pattern, size, negative, index):
    params, key = concrete(pattern)
    value = -size if negative else size
    entry = KEYS[pattern]
    shown = key
    if entry.kind is ValueKind.FLOAT_LIST:
        current = list(lookup(params, key) or [0.1] * (entry.size or 1))
        index %= len(current)
        current[index] = value
        value, shown = current, f'{key}[{index}]'
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(with_value(params, key, value))
    assert caught.value.key == shown
    if not negative:
        assert caught.value.rule == LENGTH.broken(size)
