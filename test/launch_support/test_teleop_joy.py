"""teleop:=joy: what both launch files start for a gamepad, and the shipped joy config.

Pure Python, as test_arguments.py. The config is held to the parameter names joy_node and
teleop_twist_joy declare (upstream_joy_parameters.py, recorded from their sources) and to
gripper_buttons' own declarations (fabrik_ros.node_parameters).
"""

from pathlib import Path

import pytest
import yaml

from fabrik_ros.kinematics import load_arm
from fabrik_ros.kinematics.description.flat_keys import flatten
from fabrik_ros.launch_support.arguments import (
    arm_arguments,
    defaults,
    LaunchArgumentError,
    plan_arm,
    plan_sim,
    sim_arguments,
)
from fabrik_ros.node_parameters import node_parameters
from test.launch_support import upstream_joy_parameters as upstream
from test.package_layout import console_scripts, exec_depends, PACKAGE, REPO_ROOT

SHARE = REPO_ROOT
JOY_CONFIG = REPO_ROOT / 'config' / 'teleop' / 'joy.yaml'
SO101 = str(REPO_ROOT / 'config' / 'so101.yaml')
ARM_4DOF = str(REPO_ROOT / 'config' / 'arm_4dof.yaml')
NO_VIEWERS = {'rviz': 'false', 'robot_state_publisher': 'false'}


def everything(package: str) -> bool:
    return True


def no_joy_packages(package: str) -> bool:
    return package not in ('joy', 'teleop_twist_joy')


def _sim(installed=everything, **given):
    return plan_sim(defaults(sim_arguments(SHARE), **{**NO_VIEWERS, **given}), share=SHARE,
                    installed=installed)


def _arm(installed=everything, **given):
    return plan_arm(defaults(arm_arguments(SHARE), **{**NO_VIEWERS, **given}), share=SHARE,
                    installed=installed)


def _by_executable(plan):
    return {process.executable: process for process in plan.processes}


@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_teleop_joy_starts_joy_teleop_twist_joy_and_the_gripper_buttons(plan):
    result = plan(teleop='joy', config=SO101, **({'protocol': 'feetech'} if plan is _arm else {}))
    started = _by_executable(result)
    joy, teleop, buttons = (started['joy_node'], started['teleop_node'],
                            started['gripper_buttons'])
    assert (joy.package, teleop.package, buttons.package) == (
        'joy', 'teleop_twist_joy', 'fabrik_ros')
    assert joy.parameters == (str(JOY_CONFIG),)
    assert teleop.parameters == (str(JOY_CONFIG), {'publish_stamped_twist': True,
                                                   'frame': load_arm(SO101).base_frame})
    assert teleop.remappings == (('cmd_vel', 'jog/twist'),)
    assert buttons.parameters == (SO101, str(JOY_CONFIG))
    assert result.notes == ()


@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_without_joy_and_teleop_twist_joy_installed_the_launch_says_so_in_one_line_each(plan):
    result = plan(installed=no_joy_packages, teleop='joy', config=SO101,
                  **({'protocol': 'feetech'} if plan is _arm else {}))
    assert result.notes == (
        'joy is not installed: not started (teleop:=joy; on a ROS 2 install: apt-get install '
        'ros-$ROS_DISTRO-joy)',
        'teleop_twist_joy is not installed: not started (teleop:=joy; on a ROS 2 install: '
        'apt-get install ros-$ROS_DISTRO-teleop-twist-joy)')
    started = _by_executable(result)
    assert 'joy_node' not in started and 'teleop_node' not in started
    assert 'gripper_buttons' in started


@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_an_arm_without_a_gripper_starts_no_gripper_buttons_and_says_so(plan):
    result = plan(teleop='joy')
    assert 'gripper_buttons' not in _by_executable(result)
    assert result.notes == (f'the arm has no gripper (no aux_servos in config:={ARM_4DOF}): '
                            'gripper_buttons not started (teleop:=joy)',)


@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_by_default_no_teleop_starts(plan):
    started = _by_executable(plan(config=SO101, **({'protocol': 'feetech'}
                                                   if plan is _arm else {})))
    assert not {'joy_node', 'teleop_node', 'gripper_buttons'} & set(started)


def test_the_gripper_buttons_get_their_params_file_section(tmp_path):
    params = tmp_path / 'nodes.yaml'
    params.write_text('gripper_buttons:\n  ros__parameters:\n    open_fraction: 0.7\n',
                      encoding='utf-8')
    buttons = _by_executable(_sim(teleop='joy', config=SO101, params_file=str(params)))[
        'gripper_buttons']
    assert buttons.parameters == (SO101, str(JOY_CONFIG), {'open_fraction': 0.7})


def test_a_params_file_section_for_the_gripper_buttons_needs_teleop_joy(tmp_path):
    params = tmp_path / 'nodes.yaml'
    params.write_text('gripper_buttons:\n  ros__parameters:\n    open_fraction: 0.7\n',
                      encoding='utf-8')
    with pytest.raises(LaunchArgumentError) as refused:
        _sim(config=SO101, params_file=str(params))
    assert 'section gripper_buttons names no node of this launch' in str(refused.value)


@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_teleop_outside_its_choices_and_a_missing_joy_config_are_refused(plan, tmp_path):
    with pytest.raises(LaunchArgumentError) as refused:
        plan(teleop='gamepad')
    assert str(refused.value) == 'teleop:=gamepad is not one of none|joy'
    missing = tmp_path / 'pad.yaml'
    with pytest.raises(LaunchArgumentError) as refused:
        plan(teleop='joy', joy_config=str(missing))
    assert str(refused.value) == f'joy_config:={missing}: no such file'


# -- the shipped config --------------------------------------------------------------------

def _sections() -> dict[str, dict]:
    document = yaml.safe_load(JOY_CONFIG.read_text(encoding='utf-8'))
    return {key.removeprefix('/**/'): dict(flatten(section['ros__parameters']))
            for key, section in document.items()}


def test_the_shipped_config_has_one_section_per_node_in_any_namespace():
    document = yaml.safe_load(JOY_CONFIG.read_text(encoding='utf-8'))
    assert set(document) == {f'/**/{upstream.JOY_NODE}', f'/**/{upstream.TELEOP_NODE}',
                             '/**/gripper_buttons'}


@pytest.mark.parametrize('node,declared', [(upstream.TELEOP_NODE, upstream.TELEOP_PARAMETERS),
                                           (upstream.JOY_NODE, upstream.JOY_PARAMETERS)])
def test_every_shipped_parameter_is_one_upstream_declares_with_its_type(node, declared):
    for name, value in _sections()[node].items():
        assert name in declared, f'{node} declares no {name}'
        assert type(value) is declared[name], f'{node}.{name} = {value!r}'


def test_the_shipped_gripper_buttons_parameters_are_the_nodes_own():
    assert set(_sections()['gripper_buttons']) <= set(node_parameters().of('gripper_buttons'))


def test_the_shipped_mapping_drives_the_jog_as_documented():
    teleop, joy = _sections()[upstream.TELEOP_NODE], _sections()[upstream.JOY_NODE]
    assert teleop['publish_stamped_twist'] is True and teleop['require_enable_button'] is True
    deadman, turbo = teleop['enable_button'], teleop['enable_turbo_button']
    buttons = _sections()['gripper_buttons']
    assert len({deadman, turbo, buttons['open_button'], buttons['close_button']}) == 4
    axes = [teleop[f'axis_linear.{a}'] for a in 'xyz'] + [
        teleop[f'axis_angular.{a}'] for a in ('yaw', 'pitch')]
    assert len(set(axes)) == 5 and min(axes) >= 0           # x y z and the approach, apart
    assert teleop['axis_angular.roll'] == -1
    for name, (low, high) in upstream.JOY_RANGES.items():
        assert low <= joy[name] <= high
    assert joy['autorepeat_rate'] >= 20.0       # a twist at least every 0.05 s while held


def test_the_shipped_config_is_installed_by_setup_py():
    setup = (REPO_ROOT / 'setup.py').read_text(encoding='utf-8')
    assert "(f'share/{PACKAGE}/config/teleop', glob('config/teleop/*.yaml'))" in setup
    assert Path(JOY_CONFIG).is_file()


def test_every_process_teleop_joy_names_is_ours_or_an_optional_package():
    known = exec_depends() | {'rviz2', 'joy', 'teleop_twist_joy', PACKAGE}
    for plan in (_sim(teleop='joy', config=SO101), _arm(teleop='joy')):
        for process in plan.processes:
            assert process.package in known, process
            if process.package == PACKAGE:
                assert process.executable in console_scripts(), process
    assert not {'joy', 'teleop_twist_joy'} & exec_depends()      # optional, as rviz2
