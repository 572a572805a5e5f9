"""Node parameters: misspelt overrides refused by name, ints taken for floats, types in words.

Issue 12.2: with automatically_declare_parameters_from_overrides, `-p on_shutdwn:=detach` used
to start the driver with the default `hold`. Issue 12.4: `ros2 param set /fabrik_ik
solver.tolerance_m -1` answered "Wrong parameter type"; an integer given for a float parameter
must be taken as that float and then validated, and a true type mismatch refused in words.
"""

import math

import pytest
from rcl_interfaces.msg import ParameterType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient

from fabrik_ros.nodes import arm_composition, driver_node
from fabrik_ros.nodes.driver_node import FinalState, ServoDriverNode
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.nodes.ros_parameters import empty_list_keys
from fabrik_ros.nodes.sim_arm_node import SimArmNode
from fabrik_ros.nodes.web_view_node import WebViewNode
from test.nodes.conftest import ARM_CONFIG, REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

IK = ('-p', 'interactive_target:=false')
FINAL_STATES = ', '.join(state.value for state in FinalState)


def _own(kind, tmp_path) -> tuple[str, ...]:
    """Return the arguments a node of ``kind`` needs in a test: no 3D target, no real port."""
    if kind is FabrikIkNode:
        return IK
    return ('-p', f'port:={tmp_path / "ttyNONE"}') if kind is ServoDriverNode else ()


def _make(ros, kind, arm_args, tmp_path, *extra):
    args = [*arm_args, *_own(kind, tmp_path), *extra]
    return ros.add(kind(context=ros.context, cli_args=args))


@pytest.mark.parametrize('kind, extra, misspelt, closest', [
    (ServoDriverNode, ('-p', 'on_shutdwn:=detach'), 'on_shutdwn', 'on_shutdown'),
    (ServoDriverNode, ('-p', 'max_speed_rad:=[0.5, 0.5, 0.5, 0.5]'), 'max_speed_rad',
     'max_speed_rad_s'),
    (ServoDriverNode, ('-p', 'board_timeout_acton:=detach'), 'board_timeout_acton',
     'board_timeout_action'),
    (FabrikIkNode, ('-p', 'use_pose_orientaton:=true'), 'use_pose_orientaton',
     'use_pose_orientation'),
    (FabrikIkNode, ('-p', 'solvr.tolerance_m:=0.001'), 'solvr.tolerance_m',
     'solver.tolerance_m'),
    (SimArmNode, ('-p', 'servo_speed:=1.0'), 'servo_speed', 'servo_speed_rad_s'),
])
def test_a_misspelt_override_stops_the_node_naming_it_and_the_closest_name(
        ros, arm_args, tmp_path, kind, extra, misspelt, closest):
    with pytest.raises(ValueError) as refused:
        kind(context=ros.context, cli_args=[*arm_args, *_own(kind, tmp_path), *extra])
    text = str(refused.value)
    assert text.startswith(f'{misspelt} = ')
    assert f'the closest known name is {closest}' in text
    assert '\n' not in text


def test_a_misspelt_key_of_the_params_file_stops_the_node(ros, tmp_path):
    text = ARM_CONFIG.read_text().replace('    solver:', '    solvr:')
    path = tmp_path / 'arm.yaml'
    path.write_text(text)
    with pytest.raises(ValueError) as refused:
        FabrikIkNode(context=ros.context, cli_args=['--ros-args', '--params-file', str(path),
                                                    *ros.ros_args, *IK])
    assert str(refused.value).startswith('solvr.')
    assert 'the closest known name is solver.' in str(refused.value)


@pytest.mark.parametrize('config', ['arm_4dof.yaml', 'arm_6servo.yaml',
                                    'arm_planar_3link.yaml'])
def test_every_node_accepts_every_key_of_the_arm_file_and_use_sim_time(ros, tmp_path, config):
    args = ['--ros-args', '--params-file', str(REPO_ROOT / 'config' / config), *ros.ros_args,
            '-p', 'use_sim_time:=false']
    _make(ros, FabrikIkNode, args, tmp_path)
    _make(ros, SimArmNode, args, tmp_path)
    driver = _make(ros, ServoDriverNode, args, tmp_path)
    assert driver.get_parameter('use_sim_time').value is False


def test_the_composed_process_accepts_the_parameters_of_both_nodes(tmp_path, capfd):
    # One `-p` reaches every node of a process: fabrik_ik must take servo_driver's and back.
    args = ['fabrik_arm', '--ros-args', '--params-file', str(ARM_CONFIG), '-p',
            f'port:={tmp_path / "ttyNONE"}', '-p', 'follow_rviz_tools:=true', '-p',
            'interactive_target:=false', '-p', 'on_shutdwn:=detach']
    with pytest.raises(SystemExit) as exited:
        arm_composition.main(args)
    assert exited.value.code == 1
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if 'cannot start' in line]
    assert len(lines) == 1
    assert "on_shutdwn = 'detach'" in lines[0] and 'port' not in lines[0]
    assert 'follow_rviz_tools' not in lines[0]
    assert 'board on' not in err   # refused before the driver opened its port


def test_the_composed_process_refuses_a_mistyped_parameter_before_opening_the_port(
        tmp_path, capfd):
    with pytest.raises(SystemExit) as exited:
        arm_composition.main(['fabrik_arm', '--ros-args', '--params-file', str(ARM_CONFIG), '-p',
                              f'port:={tmp_path / "ttyNONE"}', '-p',
                              'interactive_target:=false', '-p', 'use_pose_orientation:=1'])
    assert exited.value.code == 1
    err = capfd.readouterr().err
    assert 'cannot start: use_pose_orientation = 1 (integer), must be a bool' in err
    assert 'board on' not in err


@pytest.mark.parametrize('kind, name, given, taken', [
    (FabrikIkNode, 'solver.tolerance_m', 1, 1.0),
    (FabrikIkNode, 'path_speed_m_s', 1, 1.0),
    (ServoDriverNode, 'home_move_time_s', 2, 2.0),
    (ServoDriverNode, 'max_speed_rad_s', [1, 2, 3, 4], [1.0, 2.0, 3.0, 4.0]),
])
def test_an_int_set_for_a_float_parameter_is_taken_as_that_float(
        ros, arm_args, tmp_path, kind, name, given, taken):
    node = _make(ros, kind, arm_args, tmp_path)
    result = node.set_parameters([Parameter(name, value=given)])[0]
    assert result.successful, result.reason
    parameter = node.get_parameter(name)
    assert parameter.value == taken
    expected = Parameter.Type.DOUBLE_ARRAY if isinstance(taken, list) else Parameter.Type.DOUBLE
    assert parameter.type_ is expected


def test_an_int_for_a_float_is_validated_as_that_float(ros, arm_args):
    node = _make(ros, FabrikIkNode, arm_args, None)
    result = node.set_parameters([Parameter('solver.tolerance_m', value=-1)])[0]
    assert not result.successful
    assert result.reason == 'solver.tolerance_m = -1.0, must be a finite float > 0.0'
    assert node.get_parameter('solver.tolerance_m').value == 0.0001


@pytest.mark.parametrize('kind, name, value, reason', [
    (FabrikIkNode, 'use_pose_orientation', 1,
     'use_pose_orientation = 1 (integer), must be a bool: true or false'),
    (FabrikIkNode, 'path_speed_m_s', 'fast', "path_speed_m_s = 'fast' (string), must be a float"),
    (FabrikIkNode, 'solver.max_iterations', 2.5,
     'solver.max_iterations = 2.5 (float), must be an integer'),
    (FabrikIkNode, 'solver.bend', True, 'solver.bend = True (bool), must be a string: one of '
     'any, up, down'),
    (ServoDriverNode, 'home_move_time_s', True,
     'home_move_time_s = True (bool), must be a float'),
    (ServoDriverNode, 'on_shutdown', 1, 'on_shutdown = 1 (integer), must be a string: one of '
     f'{FINAL_STATES}'),
    (ServoDriverNode, 'max_speed_rad_s', ['a', 'b', 'c', 'd'],
     "max_speed_rad_s = ['a', 'b', 'c', 'd'] (list of strings), must be a list of floats"),
])
def test_a_true_type_mismatch_is_refused_in_words(ros, arm_args, tmp_path, kind, name, value,
                                                  reason):
    node = _make(ros, kind, arm_args, tmp_path)
    before = node.get_parameter(name)
    result = node.set_parameters([Parameter(name, value=value)])[0]
    assert not result.successful
    assert result.reason == reason
    assert node.get_parameter(name).value == before.value
    assert node.describe_parameter(name).type == before.type_.value


def test_an_int_override_of_a_float_parameter_starts_the_node_with_that_float(
        ros, arm_args, tmp_path):
    node = _make(ros, ServoDriverNode, arm_args, tmp_path, '-p',
                 'home_move_time_s:=2', '-p', 'control_rate_hz:=100')
    assert node.get_parameter('home_move_time_s').value == 2.0
    assert node.get_parameter('control_rate_hz').type_ is Parameter.Type.DOUBLE


def test_a_mistyped_override_stops_the_node_in_words(ros, arm_args):
    with pytest.raises(ValueError) as refused:
        FabrikIkNode(context=ros.context, cli_args=[*arm_args, *IK, '-p',
                                                    'use_pose_orientation:=1'])
    assert str(refused.value) == ('use_pose_orientation = 1 (integer), must be a bool: true or '
                                  'false')


def test_describe_shows_each_range_and_choices(ros, arm_args, tmp_path):
    ik = _make(ros, FabrikIkNode, arm_args, tmp_path)
    driver = _make(ros, ServoDriverNode, arm_args, tmp_path)
    speed = ik.describe_parameter('path_speed_m_s')
    assert speed.type == ParameterType.PARAMETER_DOUBLE
    assert (speed.floating_point_range[0].from_value,
            speed.floating_point_range[0].to_value) == (0.001, 2.0)
    assert '[m/s]' in speed.description
    assert driver.describe_parameter('baud').integer_range[0].to_value == 4_000_000
    for node, name, words in ((driver, 'on_shutdown', FINAL_STATES),
                              (driver, 'protocol', 'native, ssc32, maestro, feetech, dynamixel'),
                              (driver, 'board_timeout_action', 'hold, detach'),
                              (ik, 'solver.bend', 'any, up, down'),
                              (ik, 'joints.elbow.kind', 'yaw, pitch, roll')):
        assert node.describe_parameter(name).additional_constraints == f'one of: {words}', name


def test_without_pre_set_callbacks_an_int_is_still_validated_as_a_float(
        ros, arm_args, tmp_path, monkeypatch):
    # ROS 2 Humble has no add_pre_set_parameters_callback: the int is checked as a float.
    monkeypatch.delattr(Node, 'add_pre_set_parameters_callback', raising=False)
    node = _make(ros, ServoDriverNode, arm_args, tmp_path)
    assert node.set_parameters([Parameter('home_move_time_s', value=2)])[0].successful
    assert node.get_parameter('home_move_time_s').value == 2
    refused = node.set_parameters([Parameter('home_move_time_s', value=-1)])[0]
    assert not refused.successful
    assert 'home_move_time_s' in refused.reason and '-1' in refused.reason
    assert not math.isclose(node.get_parameter('home_move_time_s').value, -1.0)


@pytest.mark.parametrize('key', ['joint_names', 'geometry.link_lengths_m'])
def test_an_empty_list_given_with_p_is_refused_by_name(ros, arm_args, key):
    # rcl drops `-p key:=[]` (no type) when the params file sets the key: the file's value
    # would be used without a word.
    with pytest.raises(ValueError) as refused:
        FabrikIkNode(context=ros.context, cli_args=[*arm_args, *IK, '-p', f'{key}:=[]'])
    assert str(refused.value).startswith(f'{key} = [], an empty list has no parameter type')


@pytest.mark.parametrize('kind', [FabrikIkNode, ServoDriverNode, SimArmNode, WebViewNode])
def test_every_node_names_a_key_its_params_file_sets_to_an_empty_list(
        ros, arm_args, tmp_path, kind):
    """The opening all nodes share (ConfiguredNode): rclpy alone names no key here."""
    empty = tmp_path / 'empty.yaml'
    empty.write_text('/**:\n  ros__parameters:\n    geometry:\n      link_lengths_m: []\n')
    with pytest.raises(ValueError) as refused:
        _make(ros, kind, arm_args, tmp_path, '--params-file', str(empty))
    assert str(refused.value).startswith('geometry.link_lengths_m = [], an empty list has no '
                                         'parameter type')


def test_a_misspelt_driver_parameter_stops_servo_driver_with_one_line_and_status_1(
        tmp_path, capfd):
    with pytest.raises(SystemExit) as exited:
        driver_node.main(['servo_driver', '--ros-args', '--params-file', str(ARM_CONFIG), '-p',
                          f'port:={tmp_path / "ttyNONE"}', '-p', 'on_shutdwn:=detach'])
    assert exited.value.code == 1
    err = capfd.readouterr().err
    assert [line for line in err.splitlines() if 'FATAL' in line] == [
        line for line in err.splitlines() if 'cannot start' in line]
    assert ("cannot start: on_shutdwn = 'detach', is not a parameter of servo_driver nor a key "
            'of the arm file; the closest known name is on_shutdown') in err
    assert 'board on' not in err   # refused before the port was opened


def test_empty_list_keys_are_found_under_any_node_name_or_namespace(tmp_path):
    path = tmp_path / 'params.yaml'
    path.write_text('/**:\n  ros__parameters:\n    joint_names: []\n'
                    'robot:\n  servo_driver:\n    ros__parameters:\n'
                    '      geometry: {link_lengths_m: []}\n      max_speed_rad_s: [1.0]\n')
    assert empty_list_keys(['--ros-args', '--params-file', str(path), '-p', 'x:=[]']) == [
        'joint_names', 'geometry.link_lengths_m', 'x']
    assert empty_list_keys(['--params-file', str(path)], files=False) == []
    assert empty_list_keys(['--params-file', str(tmp_path / 'absent.yaml')]) == []


def test_ros2_param_set_and_describe_through_the_parameter_services(ros, arm_args):
    # What `ros2 param set /fabrik_ik solver.tolerance_m -1` and `ros2 param describe` do.
    ik = _make(ros, FabrikIkNode, arm_args, None)
    client = AsyncParameterClient(ros.probe(), f'{ros.namespace}/fabrik_ik')
    ros.spin_until(client.services_are_ready, timeout_s=10.0, what='parameter services')

    def call(future):
        ros.spin_until(future.done, timeout_s=10.0, what='a parameter service answer')
        return future.result()

    refused = call(client.set_parameters([Parameter('solver.tolerance_m', value=-1)]))
    assert refused.results[0].reason == 'solver.tolerance_m = -1.0, must be a finite float > 0.0'
    accepted = call(client.set_parameters([Parameter('solver.tolerance_m', value=1)]))
    assert accepted.results[0].successful
    assert ik.get_parameter('solver.tolerance_m').value == 1.0
    bend, speed = call(client.describe_parameters(['solver.bend', 'path_speed_m_s'])).descriptors
    assert bend.additional_constraints == 'one of: any, up, down'
    assert speed.floating_point_range[0].to_value == 2.0
