"""teleop.launch.py's plan: leader_arm + servo_driver (+ two simulated buses), checked first.

Pure Python, as test/launch_support/test_arguments.py: ROS 2's `launch` is not needed; where
it is, the launch file's one OpaqueFunction is run as launch runs it.
"""

import pytest

from fabrik_ros.launch_support.arguments import defaults, LaunchArgumentError
from fabrik_ros.launch_support.teleop_plan import plan_teleop, teleop_arguments
from test.launch.test_launch_files import _ros_launch_available
from test.package_layout import REPO_ROOT

SHARE = REPO_ROOT
SO101 = str(REPO_ROOT / 'config' / 'so101.yaml')
PWM_ARM = str(REPO_ROOT / 'config' / 'arm_4dof.yaml')


def _plan(installed=lambda package: True, owner_of=lambda link: None, **given):
    return plan_teleop(defaults(teleop_arguments(SHARE), **given), share=SHARE,
                       installed=installed, owner_of=owner_of)


def _refused(**given) -> str:
    with pytest.raises(LaunchArgumentError) as refused:
        _plan(**given)
    return str(refused.value)


def _by_name(plan):
    return {process.executable: process for process in plan.processes}


def test_two_real_buses_start_the_driver_and_the_leader_on_their_ports():
    plan = _plan(leader_port='/dev/ttyACM1', follower_port='/dev/ttyACM0')
    started = _by_name(plan)
    assert [p.executable for p in plan.processes] == ['servo_driver', 'leader_arm',
                                                      'robot_state_publisher']
    assert started['servo_driver'].parameters == (
        SO101, {'port': '/dev/ttyACM0', 'protocol': 'feetech'})
    assert started['leader_arm'].parameters == (
        SO101, {'port': '/dev/ttyACM1', 'protocol': 'feetech', 'leader_config': SO101})


def test_sim_device_starts_two_buses_the_leaders_moved_by_a_hand(tmp_path):
    plan = _plan(sim_device='true', namespace='left')
    buses = [p for p in plan.processes if p.executable == 'sim_device']
    assert len(buses) == 2 and all(bus.required for bus in buses)
    follower, leader = (bus.arguments for bus in buses)
    assert '--hand' not in follower
    assert leader[leader.index('--link') + 1] == '/tmp/fabrik_ros_sim_board_left_leader'
    assert [leader[i + 1] for i, word in enumerate(leader) if word == '--hand'] == [
        '1:400:8', '3:300:6', '6:250:4']
    driver = _by_name(plan)['servo_driver'].parameters[1]
    assert driver['port'] == '/tmp/fabrik_ros_sim_board_left_follower'
    still = _plan(sim_device='true', sim_hand='false', follower_port=str(tmp_path / 'f'),
                  leader_port=str(tmp_path / 'l'))
    assert not any('--hand' in p.arguments for p in still.processes)


def test_viewers_start_as_asked():
    plan = _plan(sim_device='true', rviz='true', robot_state_publisher='true')
    assert {'rviz2', 'robot_state_publisher'} <= set(_by_name(plan))
    with pytest.raises(LaunchArgumentError, match='rviz:=true but rviz2 is not installed'):
        _plan(sim_device='true', rviz='true', installed=lambda package: False)


@pytest.mark.parametrize('given, words', [
    ({}, 'follower_port:= is empty'),
    ({'follower_port': '/dev/a'}, 'leader_port:= is empty'),
    ({'follower_port': '/dev/a', 'leader_port': '/dev/a'}, 'each arm needs a bus of its own'),
    ({'protocol': 'native'}, 'protocol:=native is not one of feetech|dynamixel'),
    ({'sim_device': 'yes'}, 'sim_device:=yes is not one of true|false'),
    ({'config': PWM_ARM, 'sim_device': 'true'}, 'calibrates pulse widths'),
    ({'leader_config': PWM_ARM, 'sim_device': 'true'}, f'config:={PWM_ARM} calibrates pulse'),
    ({'leader_config': '/nonexistent.yaml', 'sim_device': 'true'},
     'leader_config:=/nonexistent.yaml: no such file'),
    ({'sim_hand': 'false', 'follower_port': '/dev/a', 'leader_port': '/dev/b'},
     'sim_hand:=false needs sim_device:=true'),
    ({'namespace': 'not a name', 'sim_device': 'true'}, 'namespace:='),
])
def test_an_argument_that_cannot_work_is_refused_before_anything_starts(given, words):
    assert words in _refused(**given)


def test_a_link_a_live_board_owns_is_refused():
    assert 'is the link of a live simulated board (pid 42)' in _refused(
        sim_device='true', owner_of=lambda link: 42 if link.endswith('_leader') else None)


def test_a_mapping_that_cannot_work_is_refused_from_the_params_file(tmp_path):
    params = tmp_path / 'nodes.yaml'
    params.write_text('leader_arm:\n  ros__parameters:\n    directions: [1, 1, 1, 1, 1, 5]\n',
                      encoding='utf-8')
    assert 'leader_arm: directions[5] = 5 (follower gripper)' in _refused(
        sim_device='true', params_file=str(params))
    params.write_text('leader_arm:\n  ros__parameters:\n    port: /dev/x\n', encoding='utf-8')
    assert 'the launch argument leader_port:= sets it' in _refused(
        sim_device='true', params_file=str(params))
    params.write_text('leader_arm:\n  ros__parameters:\n    offsets_rad: [0.0, 0.0, 0.1, 0.0, '
                      '0.0, 0.0]\n', encoding='utf-8')
    plan = _plan(sim_device='true', params_file=str(params))
    assert _by_name(plan)['leader_arm'].parameters[-1] == {
        'offsets_rad': [0.0, 0.0, 0.1, 0.0, 0.0, 0.0]}


@pytest.mark.skipif(not _ros_launch_available(), reason="ROS 2 'launch' is not installed here")
def test_the_launch_file_refuses_a_misspelt_argument_and_starts_the_plan(monkeypatch):
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    from fabrik_ros.launch_support import actions
    monkeypatch.setattr(actions, 'share', lambda: REPO_ROOT)
    monkeypatch.setattr('sys.argv', ['/opt/ros/bin/ros2', 'launch', 'fabrik_ros',
                                     'teleop.launch.py'])
    entities = actions.describe('teleop.launch.py', plan_teleop)

    def run(**given):
        context = LaunchContext()
        for entity in entities:
            if isinstance(entity, DeclareLaunchArgument):
                context.launch_configurations[entity.name] = entity.default_value[0].text
        context.launch_configurations.update(given)
        opaque = [e for e in entities if isinstance(e, OpaqueFunction)]
        return opaque[0].execute(context)
    with pytest.raises(LaunchArgumentError, match='did you mean leader_port:='):
        run(leader_prot='/dev/x')
    started = run(leader_port='/dev/ttyACM1', follower_port='/dev/ttyACM0',
                  robot_state_publisher='false')
    assert [type(action).__name__ for action in started] == ['Node', 'Node']
