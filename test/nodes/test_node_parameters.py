"""The table of each node's own parameters, read from the sources, is what real nodes declare.

fabrik_ros.node_parameters parses the nodes' ``declare`` calls (the launch files and the
arm loader read it without rclpy); here each node is built with rclpy and its declarations,
arm keys aside, must be the table's row for it, in order.
"""

import os

import pytest

from fabrik_ros.kinematics.description.arm_keys import TOP_KEYS
from fabrik_ros.node_parameters import node_parameters
from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.gripper_buttons_node import GripperButtonsNode
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.nodes.jog_keyboard import JogKeyboardNode
from fabrik_ros.nodes.ros_parameters import _DECLARED
from fabrik_ros.nodes.sim_arm_node import SimArmNode
from fabrik_ros.nodes.web_view_node import WebViewNode
from test.nodes.conftest import ARM_CONFIG, REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

_OWN_ARGUMENTS = {FabrikIkNode: ('-p', 'interactive_target:=false'),
                  WebViewNode: ('-p', 'port:=0'), SimArmNode: (), GripperButtonsNode: ()}
# The nodes that need an arm with a gripper.
_GRIPPER_ARM = ('--ros-args', '--params-file', str(REPO_ROOT / 'config' / 'so101.yaml'))


@pytest.mark.parametrize('kind', [FabrikIkNode, ServoDriverNode, SimArmNode, WebViewNode,
                                  GripperButtonsNode])
def test_the_table_row_of_each_node_is_what_it_declares(ros, arm_args, tmp_path, kind):
    own = _OWN_ARGUMENTS.get(kind, ('-p', f'port:={tmp_path / "ttyNONE"}'))
    if kind is GripperButtonsNode:
        arm_args = [*_GRIPPER_ARM, *ros.ros_args]
    node = ros.add(kind(context=ros.context, cli_args=[*arm_args, *own]))
    declared = tuple(name for name in _DECLARED[node] if name.split('.')[0] not in TOP_KEYS)
    assert declared
    assert node_parameters().of(node.get_name()) == declared


def test_the_table_knows_every_node_the_package_runs():
    assert set(node_parameters().nodes) == {'fabrik_ik', 'servo_driver', 'sim_arm', 'web_view',
                                            'leader_arm', 'gripper_buttons', 'jog_keyboard'}


def test_a_node_parameter_under_the_wildcard_stops_the_other_nodes_saying_whose_it_is(
        ros, tmp_path):
    # A copied arm file with use_pose_orientation under /**: every node gets it.
    copied = tmp_path / 'arm.yaml'
    line = '    base_frame: base_link\n'
    copied.write_text(ARM_CONFIG.read_text(encoding='utf-8').replace(
        line, f'{line}    use_pose_orientation: true\n'), encoding='utf-8')
    with pytest.raises(ValueError) as refused:
        SimArmNode(context=ros.context, cli_args=['--ros-args', '--params-file', str(copied),
                                                  *ros.ros_args])
    assert str(refused.value) == (
        'use_pose_orientation = True, is not a parameter of sim_arm nor a key of the arm file: '
        "it is a parameter of the node fabrik_ik (also of web_view); give it in that node's "
        'own section, fabrik_ik: ros__parameters: use_pose_orientation: true, of a file of '
        'node parameters (launch files: params_file:=<file>; ros2 run: --params-file <file>)')


def test_the_table_row_of_jog_keyboard_is_what_it_declares(ros):
    master, slave = os.openpty()
    try:
        node = ros.add(JogKeyboardNode(terminal_fd=slave, context=ros.context,
                                       cli_args=[*_GRIPPER_ARM, *ros.ros_args]))
        declared = tuple(name for name in _DECLARED[node] if name.split('.')[0] not in TOP_KEYS)
        assert declared
        assert node_parameters().of('jog_keyboard') == declared
        ros.destroy(node)
    finally:
        os.close(master)
        os.close(slave)
