"""sim.launch.py sim_device:=true protocol:=feetech|dynamixel runs an arm file in counts on a bus.

Pure Python, as test_arguments.py: the plan the launch files hand to ROS 2's launch.
"""

import pytest

from fabrik_ros.launch_support.arguments import (
    arm_arguments,
    defaults,
    LaunchArgumentError,
    plan_arm,
    plan_sim,
    sim_arguments,
)
from fabrik_ros.tools import arm_from_urdf
from test.package_layout import REPO_ROOT

SHARE = REPO_ROOT
SO101 = str(REPO_ROOT / 'config' / 'so101.yaml')
ARM_4DOF = str(REPO_ROOT / 'config' / 'arm_4dof.yaml')
SO101_URDF = REPO_ROOT / 'test' / 'kinematics' / 'description' / 'urdf' / 'so101.urdf'


def _sim(**given):
    return plan_sim(defaults(sim_arguments(SHARE), **given), share=SHARE,
                    installed=lambda package: False, simavr_check=lambda: None,
                    owner_of=lambda link: None)


def _arm(**given):
    return plan_arm(defaults(arm_arguments(SHARE), **given), share=SHARE,
                    installed=lambda package: False)


@pytest.mark.parametrize('protocol', ['feetech', 'dynamixel'])
def test_the_so101_runs_on_a_simulated_bus_with_a_servo_for_every_id(protocol, tmp_path):
    link = str(tmp_path / 'ttyBUS')
    ik, board, driver = _sim(sim_device='true', protocol=protocol, config=SO101,
                             link=link).processes
    assert (ik.executable, board.executable, driver.executable) == (
        'fabrik_ik', 'sim_device', 'servo_driver')
    # ids 1-5 on the chain, 6 the gripper: the bus has servos 1..6
    assert board.arguments == ('--board', 'python', '--protocol', protocol, '--channels', '6',
                               '--link', link)
    assert driver.parameters == (SO101, {'port': link, 'protocol': protocol})


def test_a_pwm_board_is_simulated_with_at_least_the_unos_six_outputs(tmp_path):
    link = str(tmp_path / 'ttySIM')
    board = _sim(sim_device='true', protocol='ssc32', link=link).processes[1]
    assert board.arguments[4:6] == ('--channels', '6'), 'arm_4dof uses channels 0..3'


def _so101_on_pwm(tmp_path, *extra):
    """Write the README's SO-101 PWM arm file: joints on channels 1..5, the gripper on 6."""
    config = tmp_path / 'so101_pwm.yaml'
    assert arm_from_urdf.main([str(SO101_URDF), '--tool-link', 'gripper_frame_link',
                               '--first-channel', '1', '--aux-servo', 'gripper', *extra,
                               '-o', str(config)]) == 0
    return str(config)


@pytest.mark.parametrize('protocol', ['native', 'ssc32', 'maestro'])
def test_a_board_gets_the_channels_the_arm_file_uses(protocol, tmp_path):
    """Issue 34.3: channel 6 in use needs 7 channels; with 6 the driver retried forever."""
    config = _so101_on_pwm(tmp_path)
    board = _sim(sim_device='true', protocol=protocol, config=config,
                 link=str(tmp_path / 'ttySIM')).processes[1]
    assert board.arguments[4:6] == ('--channels', '7')


def test_the_firmware_in_simavr_refuses_an_arm_beyond_its_six_channels(tmp_path):
    config = _so101_on_pwm(tmp_path)
    with pytest.raises(LaunchArgumentError) as refused:
        _sim(sim_device='true', board='simavr', config=config, link=str(tmp_path / 'tty'))
    assert str(refused.value) == (
        f'board:=simavr runs the Uno firmware, which drives 6 channels (0..5), but '
        f'config:={config} uses 7; use board:=python, which simulates a board of 7')


def test_an_arm_beyond_what_the_protocol_addresses_is_refused(tmp_path):
    config = _so101_on_pwm(tmp_path, '--aux-servo', 'a', '--aux-servo', 'b')
    with pytest.raises(LaunchArgumentError) as refused:
        _sim(sim_device='true', config=config, link=str(tmp_path / 'tty'))
    assert str(refused.value) == (f'config:={config} uses 9 channels, but protocol:=native '
                                  'addresses at most 8')


@pytest.mark.parametrize('plan, extra', [(_sim, {'sim_device': 'true'}),
                                         (_arm, {'port': '/dev/ttyUSB0'})])
def test_a_bus_protocol_with_an_arm_file_in_pulse_widths_is_refused_naming_the_fix(
        plan, extra, tmp_path):
    given = {'protocol': 'feetech', 'config': ARM_4DOF, **extra}
    if plan is _sim:
        given['link'] = str(tmp_path / 'tty')
    with pytest.raises(LaunchArgumentError) as refused:
        plan(**given)
    message = str(refused.value)
    assert 'protocol:=feetech drives bus servos calibrated in counts' in message
    assert f'config:={ARM_4DOF} calibrates pulse widths' in message
    assert f'config:={SO101}' in message


@pytest.mark.parametrize('plan, extra', [(_sim, {'sim_device': 'true'}),
                                         (_arm, {'port': '/dev/ttyUSB0'})])
def test_a_pwm_protocol_with_a_bus_arm_file_is_refused_naming_the_bus_protocols(
        plan, extra, tmp_path):
    given = {'protocol': 'maestro', 'config': SO101, **extra}
    if plan is _sim:
        given['link'] = str(tmp_path / 'tty')
    with pytest.raises(LaunchArgumentError) as refused:
        plan(**given)
    assert str(refused.value) == (
        f'protocol:=maestro drives a PWM board in pulse widths, but config:={SO101} '
        'calibrates bus servos in counts; give protocol:=feetech or protocol:=dynamixel')


def test_sim_arm_stands_in_for_a_bus_arm_without_a_protocol():
    ik, arm = _sim(config=SO101).processes
    assert arm.executable == 'sim_arm' and arm.parameters == (SO101,)


def test_sim_object_puts_an_object_in_a_bus_servos_way(tmp_path):
    link = str(tmp_path / 'ttyBUS')
    _, board, _ = _sim(sim_device='true', protocol='feetech', config=SO101, link=link,
                       sim_object='6:2400').processes
    assert board.arguments[-2:] == ('--object', '6:2400')


@pytest.mark.parametrize('given, words', [
    ({}, 'sim_object:=6:2400 needs sim_device:=true'),
    ({'sim_device': 'true', 'config': ARM_4DOF},
     'sim_object:=6:2400 needs a bus protocol (feetech, dynamixel); protocol:=native drives '
     'PWM servos'),
])
def test_sim_object_needs_a_simulated_bus(given, words, tmp_path):
    with pytest.raises(LaunchArgumentError) as refused:
        _sim(sim_object='6:2400', link=str(tmp_path / 'tty'), **given)
    assert str(refused.value).startswith(words)
