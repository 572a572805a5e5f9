"""Servo map: every pulse within its servo's range whatever comes in; clamping is reported."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from fabrik_ros.kinematics import Arm, AuxServo, TargetError
from test.kinematics.conftest import shipped_params

ANYTHING = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                     st.sampled_from([1e300, -1e300, math.nan, math.inf, -math.inf, 0.0]))


@settings(derandomize=True, max_examples=400, deadline=None)
@given(data=st.data(), name=st.sampled_from(['arm_4dof.yaml', 'arm_6servo.yaml']))
def test_every_pulse_is_within_its_servo_range_whatever_goes_in(data, name):
    arm = Arm.from_params(shipped_params(name))
    angles = data.draw(st.lists(ANYTHING, min_size=len(arm.joints), max_size=len(arm.joints)))
    command = arm.servo_map.to_units(angles)
    for pulse, cal in zip(command.units, arm.servo_map.calibrations, strict=True):
        assert cal.min_us <= pulse <= cal.max_us
    for joint, angle in zip(arm.joints, angles, strict=True):
        if not joint.contains(angle):
            assert joint.name in command.clamped


def test_angles_within_limits_are_not_reported_clamped(arm_4dof: Arm):
    command = arm_4dof.servo_map.to_units(arm_4dof.home)
    assert command.clamped == ()
    assert command.units.tolist() == pytest.approx([1500.0] * 4)


def test_out_of_limit_and_nan_angles_are_clamped_and_named(arm_4dof: Arm):
    command = arm_4dof.servo_map.to_units([math.nan, -0.5, 3.0, math.inf])
    assert command.clamped == ('base_yaw', 'shoulder', 'elbow', 'wrist')
    assert command.units.tolist() == pytest.approx([1500.0, 500.0, 2500.0, 2500.0])


def test_pulse_to_angle_inverts_angle_to_pulse():
    arm = Arm.from_params(shipped_params('arm_6servo.yaml'))
    angles = np.array([0.3, 1.2, -0.7, 0.4, -0.2])
    command = arm.servo_map.to_units(angles)
    assert command.clamped == ()
    assert np.allclose(arm.servo_map.to_angles(command.units), angles)


def test_reversed_servo_and_trim_move_the_pulse_the_configured_way():
    arm = Arm.from_params(shipped_params('arm_6servo.yaml'))
    elbow = arm.servo_map.calibrations[2]
    assert elbow.pulse_us(math.radians(100.0)) < elbow.pulse_us(math.radians(-100.0))
    shoulder = arm.servo_map.calibrations[1]
    assert shoulder.pulse_us(math.radians(90.0)) == pytest.approx(1512.0)


def test_servo_range_narrower_than_joint_limits_is_clamped_and_reported():
    params = shipped_params()
    params['servos']['elbow']['angle_at_max_deg'] = 100.0
    arm = Arm.from_params(params)
    command = arm.servo_map.to_units([0.0, 1.0, math.radians(130.0), 0.0])
    assert command.units[2] == 2500.0
    assert command.clamped == ('elbow',)


def test_non_finite_pulse_feedback_is_rejected(arm_4dof: Arm):
    with pytest.raises(TargetError) as caught:
        arm_4dof.servo_map.to_angles([1500.0, math.nan, 1500.0, 1500.0])
    assert 'units' in str(caught.value)


def test_wrong_number_of_angles_is_rejected(arm_4dof: Arm):
    with pytest.raises(TargetError) as caught:
        arm_4dof.servo_map.to_units([0.0, 0.0])
    assert 'has 2 values, need 4' in str(caught.value)


def test_gripper_channel_is_clamped_and_homed():
    arm = Arm.from_params(shipped_params('arm_6servo.yaml'))
    (gripper,) = arm.servo_map.aux
    assert gripper == AuxServo('gripper', 5, 1000.0, 2000.0, 1500.0)
    assert gripper.clamp(5000.0) == 2000.0
    assert gripper.clamp(-math.inf) == 1500.0
