"""BoardLayout: which channel carries which servo, with limits and the gripper's home pulse."""

import pytest
import yaml

from fabrik_ros.driver.board_layout import BoardLayout, check_board_channels
from fabrik_ros.kinematics import ArmConfigError, load_arm
from fabrik_ros.servo_io import Protocol
from test.nodes.conftest import REPO_ROOT

ARM_4DOF = load_arm(REPO_ROOT / 'config' / 'arm_4dof.yaml')
ARM_6SERVO = load_arm(REPO_ROOT / 'config' / 'arm_6servo.yaml')


def test_the_reference_arm_uses_channels_0_to_3():
    layout = BoardLayout.of(ARM_4DOF)
    assert (layout.channels, layout.joint_channels) == (4, (0, 1, 2, 3))
    assert layout.limits_us == ((500, 2500),) * 4
    assert layout.enable_mask == 0b1111
    assert layout.pulse_vector(ARM_4DOF.servo_map.to_units(ARM_4DOF.home)) == [1500] * 4


def test_an_auxiliary_gripper_is_held_at_its_home_pulse_within_its_own_limits():
    layout = BoardLayout.of(ARM_6SERVO)
    assert layout.channels == 6
    assert layout.enable_mask == 0b111111
    assert layout.limits_us[3] == (600, 2400)
    assert layout.limits_us[5] == (1000, 2000)
    pulses = layout.pulse_vector(ARM_6SERVO.servo_map.to_units(ARM_6SERVO.home))
    assert pulses[5] == 1500
    assert all(low <= p <= high for p, (low, high) in zip(pulses, layout.limits_us,
                                                           strict=True))


def test_reported_pulses_map_back_only_when_every_joint_reported():
    layout = BoardLayout.of(ARM_4DOF)
    assert layout.joint_pulses((1500, 1600, 1700, 1800, None, None)) == pytest.approx(
        [1500.0, 1600.0, 1700.0, 1800.0])
    assert layout.joint_pulses((1500, None, 1700, 1800)) is None
    assert layout.joint_pulses((1500, 1600)) is None



def _arm_with_channel(tmp_path, source, section, name, channel):
    document = yaml.safe_load((REPO_ROOT / 'config' / source).read_text())
    document['/**']['ros__parameters'][section][name]['channel'] = channel
    path = tmp_path / f'arm_{name}_{channel}.yaml'
    path.write_text(yaml.safe_dump(document))
    return load_arm(path)


@pytest.mark.parametrize('protocol, channel, words', [
    (Protocol.NATIVE, 8, 'the native board drives channels 0..7 (protocol native)'),
    (Protocol.SSC32, 32, 'the SSC-32U drives channels 0..31 (protocol ssc32)'),
    (Protocol.MAESTRO, 24, 'the Pololu Maestro drives channels 0..23 (protocol maestro)')])
def test_a_servo_beyond_the_boards_channels_is_refused_by_its_key(tmp_path, protocol, channel,
                                                                   words):
    check_board_channels(_arm_with_channel(tmp_path, 'arm_4dof.yaml', 'servos', 'elbow',
                                           channel - 1), protocol)
    arm = _arm_with_channel(tmp_path, 'arm_4dof.yaml', 'servos', 'elbow', channel)
    with pytest.raises(ArmConfigError) as raised:
        check_board_channels(arm, protocol)
    assert str(raised.value) == f'servos.elbow.channel = {channel}, {words}'


def test_an_auxiliary_servo_beyond_the_boards_channels_is_named_by_its_key(tmp_path):
    arm = _arm_with_channel(tmp_path, 'arm_6servo.yaml', 'aux_servos', 'gripper', 40)
    with pytest.raises(ArmConfigError) as raised:
        check_board_channels(arm, Protocol.NATIVE)
    assert str(raised.value).startswith('aux_servos.gripper.channel = 40, the native board')
