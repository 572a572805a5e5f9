"""namespace:= on both launch files, and argument names launch would ignore (issue 24.3).

Pure Python, as test_arguments.py: the plans the launch files turn into actions.
"""

from pathlib import Path

import pytest

from fabrik_ros.launch_support.arguments import (
    arm_arguments,
    check_given_names,
    defaults,
    LAUNCH_FILES,
    LaunchArgumentError,
    launched_directly,
    plan_arm,
    plan_sim,
    sim_arguments,
)
from fabrik_ros.launch_support.namespace import absolute_names, DEFAULT_LINK
from test.package_layout import REPO_ROOT

SHARE = REPO_ROOT
RVIZ = REPO_ROOT / 'config' / 'rviz' / 'fabrik.rviz'


def _sim(owner_of=lambda link: None, **given):
    return plan_sim(defaults(sim_arguments(SHARE), **given), share=SHARE,
                    installed=lambda package: True, simavr_check=lambda: None,
                    owner_of=owner_of)


def _arm(**given):
    return plan_arm(defaults(arm_arguments(SHARE), **given), share=SHARE,
                    installed=lambda package: True)


def _process(plan, executable):
    return next(p for p in plan.processes if p.executable == executable)


@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_both_launch_files_put_every_node_in_the_namespace(plan):
    assert plan(namespace='left').namespace == '/left'
    assert plan(namespace='/robots/left').namespace == '/robots/left'
    assert plan().namespace == ''


def test_under_a_namespace_rviz_state_publisher_and_ik_keep_to_it():
    plan = _sim(namespace='left')
    rviz = dict(_process(plan, 'rviz2').remappings)
    assert rviz['/clicked_point'] == 'target_point' and rviz['/goal_pose'] == 'target_pose'
    for name in ('/robot_description', '/ik_markers', '/fabrik_ik/target/update',
                 '/fabrik_ik/target/get_interactive_markers', '/tf', '/tf_static'):
        assert rviz[name] == name[1:]
    assert dict(_process(plan, 'robot_state_publisher').remappings) == {
        '/tf': 'tf', '/tf_static': 'tf_static'}
    assert dict(_process(plan, 'fabrik_ik').remappings) == {
        '/clicked_point': 'clicked_point', '/goal_pose': 'goal_pose'}
    assert not _process(plan, 'sim_arm').remappings


def test_every_absolute_name_of_the_rviz_config_is_taken_into_the_namespace():
    names = absolute_names(RVIZ)
    assert {'/robot_description', '/ik_markers', '/clicked_point', '/goal_pose'} <= set(names)
    remapped = dict(_process(_sim(namespace='left'), 'rviz2').remappings)
    assert all(not remapped[name].startswith('/') for name in names)


def test_without_a_namespace_nothing_is_remapped_but_the_rviz_tools():
    plan = _sim()
    assert dict(_process(plan, 'rviz2').remappings) == {'/clicked_point': 'target_point',
                                                         '/goal_pose': 'target_pose'}
    assert not _process(plan, 'robot_state_publisher').remappings
    assert not _process(plan, 'fabrik_ik').remappings


@pytest.mark.parametrize('bad', ['left arm', '1left', 'left//x', 'left/', 'left-arm', '~/x'])
def test_a_namespace_that_is_no_ros_name_is_refused(bad):
    with pytest.raises(LaunchArgumentError) as refused:
        _sim(namespace=bad)
    assert str(refused.value).startswith(f'namespace:={bad} is not a ROS namespace')


def test_two_namespaced_sim_launches_get_different_default_links():
    def link(plan):
        return _process(plan, 'sim_device').arguments[-1]
    left, right = (_sim(sim_device='true', namespace=side) for side in ('left', 'right'))
    assert (link(left), link(right)) == (f'{DEFAULT_LINK}_left', f'{DEFAULT_LINK}_right')
    assert _process(left, 'servo_driver').parameters[1]['port'] == link(left)
    assert link(_sim(sim_device='true')) == DEFAULT_LINK


def test_a_link_a_live_board_owns_is_refused_before_anything_starts(tmp_path):
    link = str(tmp_path / 'ttyA')
    with pytest.raises(LaunchArgumentError) as refused:
        _sim(sim_device='true', link=link, owner_of=lambda path: 4242 if path == link else None)
    assert str(refused.value) == (f'link:={link} is the link of a live simulated board (pid '
                                  f'4242); give this launch another namespace:= or link:=, or '
                                  f'stop that board')


# -- argument names launch would ignore ------------------------------------------------------

@pytest.mark.parametrize('launch_file', sorted(LAUNCH_FILES))
def test_run_by_ros2_launch_any_unknown_name_is_refused_naming_the_closest(launch_file):
    with pytest.raises(LaunchArgumentError) as refused:
        check_given_names(['config', 'namspace_of_arm'], launch_file, SHARE, top_level=True)
    assert str(refused.value).startswith(f'namspace_of_arm:= is no argument of {launch_file}: '
                                         f'did you mean namespace:=? {launch_file} takes ')


@pytest.mark.parametrize('launch_file', sorted(LAUNCH_FILES))
def test_the_issue_names_are_refused_or_taken(launch_file):
    with pytest.raises(LaunchArgumentError, match='did you mean protocol:='):
        check_given_names(['protocl'], launch_file, SHARE)
    check_given_names(['namespace', 'params_file', 'launch-prefix'], launch_file, SHARE,
                      top_level=True)


def test_included_by_a_parent_its_far_names_pass():
    check_given_names(['robot_name', 'use_sim_time'], 'sim.launch.py', SHARE)


def test_launched_directly_by_path_or_by_package_but_not_through_a_parent(tmp_path):
    path = tmp_path / 'sim.launch.py'
    path.write_text('', encoding='utf-8')
    assert launched_directly(['ros2', 'launch', str(path), 'namespace:=left'],
                             'sim.launch.py', path)
    assert launched_directly(['ros2', 'launch', '-d', 'fabrik_ros', 'sim.launch.py'],
                             'sim.launch.py', Path('/elsewhere'))
    assert not launched_directly(['ros2', 'launch', 'my_robot', 'bringup.launch.py'],
                                 'sim.launch.py', path)
    assert not launched_directly(['pytest', 'sim.launch.py'], 'sim.launch.py', path)
