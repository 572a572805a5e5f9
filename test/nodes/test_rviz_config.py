"""config/rviz/fabrik.rviz shows what the nodes publish and sends what fabrik_ik follows."""

import yaml

from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes.interactive_target import TOPIC_NAMESPACE
from test.nodes.conftest import ARM_CONFIG, REPO_ROOT

RVIZ = yaml.safe_load((REPO_ROOT / 'config' / 'rviz' / 'fabrik.rviz').read_text())
MANAGER = RVIZ['Visualization Manager']


def _by_class(entries, name):
    return [e for e in entries if e['Class'] == f'rviz_default_plugins/{name}']


def test_the_fixed_frame_is_the_arms_base_frame():
    assert MANAGER['Global Options']['Fixed Frame'] == load_arm(ARM_CONFIG).base_frame


def test_the_displays_show_the_robot_the_ik_markers_and_the_3d_target():
    displays = MANAGER['Displays']
    robot, = _by_class(displays, 'RobotModel')
    assert robot['Description Topic']['Value'] == '/robot_description'
    markers, = _by_class(displays, 'MarkerArray')
    assert markers['Topic']['Value'] == '/ik_markers'
    assert markers['Topic']['Durability Policy'] == 'Transient Local', 'fabrik_ik latches them'
    target, = _by_class(displays, 'InteractiveMarkers')
    assert target['Interactive Markers Namespace'] == TOPIC_NAMESPACE.replace('~', '/fabrik_ik')
    assert _by_class(displays, 'TF')


def test_the_tools_publish_where_fabrik_ik_listens_with_follow_rviz_tools():
    tools = MANAGER['Tools']
    point, = _by_class(tools, 'PublishPoint')
    goal, = _by_class(tools, 'SetGoal')
    assert point['Topic']['Value'] == '/clicked_point'
    assert goal['Topic']['Value'] == '/goal_pose'
