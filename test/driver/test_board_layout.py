"""BoardLayout: which channel carries which servo, with limits and the gripper's home pulse."""

import pytest

from fabrik_ros.driver.board_layout import BoardLayout
from fabrik_ros.kinematics import load_arm
from test.nodes.conftest import REPO_ROOT

ARM_4DOF = load_arm(REPO_ROOT / 'config' / 'arm_4dof.yaml')
ARM_6SERVO = load_arm(REPO_ROOT / 'config' / 'arm_6servo.yaml')


def test_the_reference_arm_uses_channels_0_to_3():
    layout = BoardLayout.of(ARM_4DOF)
    assert (layout.channels, layout.joint_channels) == (4, (0, 1, 2, 3))
    assert layout.limits_us == ((500, 2500),) * 4
    assert layout.enable_mask == 0b1111
    assert layout.pulse_vector(ARM_4DOF.servo_map.to_pulses(ARM_4DOF.home)) == [1500] * 4


def test_an_auxiliary_gripper_is_held_at_its_home_pulse_within_its_own_limits():
    layout = BoardLayout.of(ARM_6SERVO)
    assert layout.channels == 6
    assert layout.enable_mask == 0b111111
    assert layout.limits_us[3] == (600, 2400)
    assert layout.limits_us[5] == (1000, 2000)
    pulses = layout.pulse_vector(ARM_6SERVO.servo_map.to_pulses(ARM_6SERVO.home))
    assert pulses[5] == 1500
    assert all(low <= p <= high for p, (low, high) in zip(pulses, layout.limits_us,
                                                           strict=True))


def test_reported_pulses_map_back_only_when_every_joint_reported():
    layout = BoardLayout.of(ARM_4DOF)
    assert layout.joint_pulses((1500, 1600, 1700, 1800, None, None)) == pytest.approx(
        [1500.0, 1600.0, 1700.0, 1800.0])
    assert layout.joint_pulses((1500, None, 1700, 1800)) is None
    assert layout.joint_pulses((1500, 1600)) is None
