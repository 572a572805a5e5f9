"""Bus servos in counts: every count within the joint's range, the seam refused with its fix."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from fabrik_ros.kinematics import (
    Arm,
    ArmConfigError,
    CountAuxServo,
    CountCalibration,
    ServoCalibration,
)
from fabrik_ros.kinematics.description.servo_map import ROUNDING_UNITS
from test.kinematics.conftest import shipped_params
from test.kinematics.description.arm_params import COUNT_GRIPPER, with_count_servos

ANYTHING = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                     st.sampled_from([1e300, -1e300, math.nan, math.inf, -math.inf, 0.0]))
TURNS = st.sampled_from([4096, 1024, 501_923 // 2])


def count_arm(**servo_changes) -> Arm:
    params = with_count_servos(shipped_params())
    params['aux_servos'] = {'gripper': dict(COUNT_GRIPPER)}
    for key, value in servo_changes.items():
        params['servos']['elbow'][key] = value
    return Arm.from_params(params)


@st.composite
def calibrations(draw) -> CountCalibration:
    """Draw a calibration whose joint range lies inside the turn (what the loader lets through)."""
    turn = draw(TURNS)
    low = draw(st.floats(-math.pi, math.pi))
    high = draw(st.floats(low + 1e-3, low + 1.9 * math.pi))
    span = (high - low) * turn / (2 * math.pi)
    direction = draw(st.sampled_from([1, -1]))
    first = draw(st.floats(0.0, turn - 1 - span))      # the count at the range's lower end
    zero = first - low * turn / (2 * math.pi) if direction == 1 else (
        first + span + low * turn / (2 * math.pi))
    return CountCalibration('elbow', 3, zero, direction, low, high, turn)


@settings(derandomize=True, max_examples=500, deadline=None)
@given(cal=calibrations(), angle=ANYTHING)
def test_no_count_leaves_the_joints_range_whatever_goes_in(cal, angle):
    count = cal.units(angle)
    assert cal.low_units <= count <= cal.high_units
    assert 0.0 <= round(count) <= cal.counts_per_turn - 1


@settings(derandomize=True, max_examples=500, deadline=None)
@given(cal=calibrations(), fraction=st.floats(0.0, 1.0))
def test_angle_to_count_to_angle_is_the_angle(cal, fraction):
    angle = cal.min_rad + fraction * (cal.max_rad - cal.min_rad)
    assert cal.angle_rad(cal.units(angle)) == pytest.approx(angle, abs=1e-9)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(data=st.data())
def test_every_count_of_a_loaded_bus_arm_is_within_its_range_and_clamping_is_named(data):
    arm = count_arm()
    angles = data.draw(st.lists(ANYTHING, min_size=len(arm.joints), max_size=len(arm.joints)))
    command = arm.servo_map.to_units(angles)
    for count, cal in zip(command.units, arm.servo_map.calibrations, strict=True):
        assert cal.low_units <= count <= cal.high_units
    for joint, angle, cal in zip(arm.joints, angles, arm.servo_map.calibrations, strict=True):
        # A cut of up to half a count is rounding, not a clamp (servo_map.ROUNDING_UNITS).
        slack = ROUNDING_UNITS * 2.0 * math.pi / cal.counts_per_turn
        beyond = max(joint.min_rad - angle, angle - joint.max_rad)
        if math.isfinite(angle) and abs(beyond - slack) < 1e-9:
            continue     # on the slack's edge, either answer is right
        inside = math.isfinite(angle) and beyond <= slack
        assert (joint.name in command.clamped) == (not inside)


def test_a_bus_arm_reads_counts_and_its_ids():
    arm = count_arm(direction=-1, homing_offset=-300)
    assert arm.servo_map.unit == 'count'
    elbow = arm.servo_map.calibrations[2]
    assert elbow == CountCalibration('elbow', 3, 2047.5, -1, math.radians(-135.0),
                                     math.radians(135.0), 4096, -300)
    command = arm.servo_map.to_units([0.0, math.pi / 2, math.pi / 2, 0.0])
    assert command.channels == (1, 2, 3, 4)
    assert command.units[2] == pytest.approx(2047.5 - 1024.0)
    assert np.allclose(arm.servo_map.to_angles(command.units), [0.0, math.pi / 2, math.pi / 2,
                                                                 0.0])


def test_a_bus_gripper_is_a_servo_in_radians():
    (gripper,) = count_arm().servo_map.aux
    assert gripper == CountAuxServo('gripper', 9, 2048.0, 1, math.radians(-30.0),
                                    math.radians(60.0), 0.0)
    assert gripper.units(math.nan) == gripper.home_units == 2048.0
    assert gripper.units(math.inf) == gripper.high_units == pytest.approx(2048.0 + 4096 / 6)
    assert gripper.angle_rad(gripper.units(0.5)) == pytest.approx(0.5)


def test_pulse_and_count_servos_are_told_apart_where_a_board_or_a_bus_needs_one():
    bus, pwm = count_arm().servo_map, Arm.from_params(shipped_params()).servo_map
    assert pwm.unit == 'us' and isinstance(pwm.pulse_servos()[0][0], ServoCalibration)
    assert len(bus.count_servos()[0]) == 4
    with pytest.raises(ArmConfigError) as caught:
        bus.pulse_servos()
    assert 'a PWM board needs pulse widths' in str(caught.value)
    with pytest.raises(ArmConfigError):
        pwm.count_servos()


@pytest.mark.parametrize('section, key, value', [
    ('servos', 'min_us', 500.0),
    ('aux_servos', 'home_us', 1500.0),
])
def test_a_pulse_key_in_a_bus_arm_is_refused_naming_it(section, key, value):
    params = with_count_servos(shipped_params())
    params['aux_servos'] = {'gripper': dict(COUNT_GRIPPER)}
    name = 'elbow' if section == 'servos' else 'gripper'
    params[section][name][key] = value
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(params)
    assert caught.value.key == f'{section}.{name}.{key}'
    assert caught.value.rule.startswith('is a pulse servo key, but servos.base_yaw is a count '
                                        'servo: an arm file is all-pulse')


def test_a_count_key_in_a_pulse_arm_is_refused_naming_it():
    params = shipped_params()
    params['servos']['wrist']['zero_count'] = 2048.0
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(params)
    assert str(caught.value).startswith('servos.wrist.zero_count = 2048.0, is a count servo '
                                        'key, but servos.base_yaw is a pulse servo')


def test_a_range_across_the_seam_is_refused_with_the_homing_offset_that_fixes_it():
    # The elbow's 270 deg from 3500: counts 3500 -/+ 1536 run past 4095.
    with pytest.raises(ArmConfigError) as caught:
        count_arm(zero_count=3500.0, homing_offset=100)
    assert caught.value.key == 'servos.elbow.zero_count'
    assert caught.value.rule == (
        "puts joints.elbow's range [-135, 135] deg at counts 1964.0 .. 5036.0, outside the "
        "encoder's 0 .. 4095: the range crosses the seam where the count wraps. Shift the "
        "counts by -1452 with the servo's homing offset (Feetech: homing_offset: 1552; "
        'Dynamixel: homing_offset: -1352) and set zero_count: 2048')
    fixed = count_arm(zero_count=2048.0, homing_offset=1552).servo_map.calibrations[2]
    assert (fixed.low_units, fixed.high_units) == (512.0, 3584.0)


def test_a_range_wider_than_a_turn_is_refused_as_such():
    params = with_count_servos(shipped_params())
    params['joints']['elbow'].update(min_deg=-180.0, max_deg=180.0)   # counts 0 .. 4096
    params['servos']['elbow']['zero_count'] = 2048.0
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(params)
    assert caught.value.rule.endswith('the range spans more than one turn of the encoder')


def test_a_bus_gripper_across_the_seam_is_refused_naming_it():
    params = with_count_servos(shipped_params())
    params['aux_servos'] = {'gripper': dict(COUNT_GRIPPER, zero_count=100.0)}
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(params)
    assert caught.value.key == 'aux_servos.gripper.zero_count'
    assert "aux_servos.gripper's range [-30, 60] deg at counts -241.3 .. 782.7" in str(
        caught.value)


@pytest.mark.parametrize('offset', [4096, -4096])
def test_a_homing_offset_of_a_turn_or_more_is_refused(offset):
    with pytest.raises(ArmConfigError) as caught:
        count_arm(homing_offset=offset)
    assert str(caught.value) == (f'servos.elbow.homing_offset = {offset}, must be smaller in '
                                 'size than counts_per_turn (4096)')


def test_an_id_used_twice_is_refused_naming_the_id_key():
    params = with_count_servos(shipped_params())
    params['aux_servos'] = {'gripper': dict(COUNT_GRIPPER, id=2)}
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(params)
    assert str(caught.value) == 'aux_servos.gripper.id = 2, is already used by servos.shoulder'
