"""params_file:= and the node sections of config:=, checked before anything starts (24.3).

rcl would apply a section to the node of that exact name and ignore the rest without a word;
here every section and parameter is checked against what the nodes declare.
"""

from pathlib import Path

import pytest

from fabrik_ros.launch_support.arguments import (
    arm_arguments,
    defaults,
    LaunchArgumentError,
    plan_arm,
    plan_sim,
    sim_arguments,
)
from test.package_layout import REPO_ROOT

SHARE = REPO_ROOT
ARM_CONFIG = REPO_ROOT / 'config' / 'arm_4dof.yaml'


def _sim(**given):
    return plan_sim(defaults(sim_arguments(SHARE), **given), share=SHARE,
                    installed=lambda package: True, simavr_check=lambda: None,
                    owner_of=lambda link: None)


def _arm(**given):
    return plan_arm(defaults(arm_arguments(SHARE), **given), share=SHARE,
                    installed=lambda package: True)


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / 'nodes.yaml'
    path.write_text(text, encoding='utf-8')
    return str(path)


def _parameters(plan, executable):
    return next(p for p in plan.processes if p.executable == executable).parameters


def _refused(plan, **given) -> str:
    with pytest.raises(LaunchArgumentError) as refused:
        plan(**given)
    return str(refused.value)


def test_each_node_gets_its_own_section_after_what_the_launch_sets(tmp_path):
    path = _file(tmp_path, 'fabrik_ik:\n  ros__parameters:\n    use_pose_orientation: true\n'
                           'servo_driver:\n  ros__parameters:\n    home_move_time_s: 5.0\n'
                           '    max_speed_rad_s: [1.0, 1.0, 1.0, 1.0]\n')
    plan = _arm(params_file=path)
    assert _parameters(plan, 'fabrik_ik') == (str(ARM_CONFIG), {'follow_rviz_tools': True},
                                              {'use_pose_orientation': True})
    assert _parameters(plan, 'servo_driver')[2] == {'home_move_time_s': 5.0,
                                                    'max_speed_rad_s': [1.0, 1.0, 1.0, 1.0]}


@pytest.mark.parametrize('key', ['sim_arm', '/sim_arm', '/**/sim_arm', '/left/sim_arm',
                                 'left/sim_arm'])
def test_a_section_may_name_the_launchs_namespace_or_none(tmp_path, key):
    path = _file(tmp_path, f'{key}:\n  ros__parameters:\n    rate_hz: 30.0\n')
    assert _parameters(_sim(params_file=path, namespace='left'), 'sim_arm')[-1] == {
        'rate_hz': 30.0}


def test_a_section_for_another_namespace_is_refused(tmp_path):
    path = _file(tmp_path, '/right/sim_arm:\n  ros__parameters:\n    rate_hz: 30.0\n')
    assert _refused(_sim, params_file=path, namespace='left') == (
        f'params_file:={path}: section /right/sim_arm names the namespace /right, but this '
        f'launch runs its nodes in namespace /left; name the node alone (sim_arm:)')


@pytest.mark.parametrize('text, message', [
    ('fabrik_ikk:\n  ros__parameters:\n    use_pose_orientation: true\n',
     'section fabrik_ikk names no node of this launch; the closest is fabrik_ik (it starts '
     'fabrik_ik, sim_arm)'),
    ('servo_driver:\n  ros__parameters:\n    home_move_time_s: 2.0\n',
     'section servo_driver names no node of this launch (a fabrik_ros node this launch does '
     'not start); the closest is sim_arm (it starts fabrik_ik, sim_arm)'),
    ('/**:\n  ros__parameters:\n    rate_hz: 30.0\n',
     '/** would give every node the same parameters; name each node (fabrik_ik, sim_arm: '
     'ros__parameters: ...); the arm itself goes in config:='),
    ('sim_arm:\n  ros__parameters:\n    rate_hz_: 30.0\n',
     'sim_arm.ros__parameters.rate_hz_ = 30.0: sim_arm has no such parameter; the '
     'closest parameter of sim_arm is rate_hz'),
    ('sim_arm:\n  ros__parameters:\n    use_pose_orientation: true\n',
     'sim_arm.ros__parameters.use_pose_orientation = True: sim_arm has no such parameter; '
     'it is one of fabrik_ik and web_view: give it in that section'),
    ('fabrik_ik:\n  ros__parameters:\n    joints: {elbow: {max_deg: 90.0}}\n',
     'fabrik_ik.ros__parameters.joints.elbow.max_deg = 90.0: a key of the arm '
     'file, not a node parameter; it goes in the arm file (config:=), under /**: '
     'ros__parameters:'),
    ('sim_arm:\n  ros__parameters:\n    servo_speed_rad_s: [1, 2.0]\n',
     'sim_arm.ros__parameters.servo_speed_rad_s: [1, 2.0] is no ROS parameter: '
     'write every number of a float list with a decimal point'),
    ('sim_arm:\n  rate_hz: 30.0\n', 'sim_arm: must hold one mapping, ros__parameters: ...'),
    ('- sim_arm\n', 'must hold node sections, e.g. fabrik_ik: ros__parameters: '
                    'use_pose_orientation: true'),
])
def test_what_no_node_would_take_is_refused_naming_it(tmp_path, text, message):
    path = _file(tmp_path, text)
    assert _refused(_sim, params_file=path).startswith(f'params_file:={path}: {message}')


def test_a_parameter_a_launch_argument_sets_is_refused_naming_the_argument(tmp_path):
    path = _file(tmp_path, 'servo_driver:\n  ros__parameters:\n    port: /dev/ttyACM0\n')
    assert _refused(_arm, params_file=path).endswith(
        "port = '/dev/ttyACM0': the launch argument port:= sets it; give it there")
    assert 'link:= sets it' in _refused(_sim, params_file=path, sim_device='true')


def test_a_missing_params_file_is_refused(tmp_path):
    assert _refused(_sim, params_file=str(tmp_path / 'none.yaml')) == (
        f'params_file:={tmp_path / "none.yaml"}: no such file')


def test_node_sections_beside_the_arm_in_config_are_checked_and_handed_over(tmp_path):
    config = tmp_path / 'arm.yaml'
    config.write_text(ARM_CONFIG.read_text(encoding='utf-8')
                      + 'fabrik_ik:\n  ros__parameters:\n    use_pose_orientation: true\n',
                      encoding='utf-8')
    plan = _sim(config=str(config), namespace='left')
    assert _parameters(plan, 'fabrik_ik')[-1] == {'use_pose_orientation': True}
    config.write_text(ARM_CONFIG.read_text(encoding='utf-8')
                      + 'fabrik_ik:\n  ros__parameters:\n    use_pose_orientaton: true\n',
                      encoding='utf-8')
    assert 'closest parameter of fabrik_ik is use_pose_orientation' in _refused(
        _sim, config=str(config))


def test_the_issue_case_a_node_parameter_under_the_arm_files_wildcard(tmp_path):
    config = tmp_path / 'arm.yaml'
    line = '    base_frame: base_link\n'
    config.write_text(ARM_CONFIG.read_text(encoding='utf-8').replace(
        line, f'{line}    use_pose_orientation: true\n'), encoding='utf-8')
    message = _refused(_sim, config=str(config))
    assert message.startswith(f'config:={config}: use_pose_orientation = True, is not a key of '
                              f'the arm file: it is a parameter of the node fabrik_ik')
    assert 'fabrik_ik: ros__parameters: use_pose_orientation: true' in message
