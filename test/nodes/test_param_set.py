"""`ros2 param set` of a parameter a node does not have names it and the closest one (24.5).

rclpy answered "Invalid access to undeclared parameter(s): []" for
``ros2 param set /servo_driver home_move_tme_s 2.0``. The set goes through the node's real
parameter service here, as the CLI's does.
"""

import pytest
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient

from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.nodes.sim_arm_node import SimArmNode

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]


def _set(ros, name: str, parameter: Parameter):
    """Return the result the node's set_parameters service gives for ``parameter``."""
    client = AsyncParameterClient(ros.probe(), f'{ros.namespace}/{name}')
    ros.spin_until(client.services_are_ready, timeout_s=10.0, what='parameter services')
    future = client.set_parameters([parameter])
    ros.spin_until(future.done, timeout_s=10.0, what='a parameter service answer')
    return future.result().results[0]


@pytest.mark.parametrize('kind, extra, name, value, meant', [
    (ServoDriverNode, (), 'home_move_tme_s', 2.0, 'home_move_time_s'),
    (FabrikIkNode, ('-p', 'interactive_target:=false'), 'use_pose_orientaton', True,
     'use_pose_orientation'),
    (SimArmNode, (), 'servo_speed_rad', 1.0, 'servo_speed_rad_s'),
])
def test_a_misspelt_parameter_set_is_refused_naming_it_and_the_closest_name(
        ros, arm_args, tmp_path, kind, extra, name, value, meant):
    if kind is ServoDriverNode:
        extra = ('-p', f'port:={tmp_path / "ttyNONE"}')
    node = ros.add(kind(context=ros.context, cli_args=[*arm_args, *extra]))
    result = _set(ros, node.get_name(), Parameter(name, value=value))
    assert not result.successful
    assert result.reason == (f'{name} = {value!r}, is not a parameter of {node.get_name()}; '
                             f'the closest known name is {meant}')
    assert not node.has_parameter(name)


def test_a_known_parameter_is_still_set_through_the_service(ros, arm_args, tmp_path):
    driver = ros.add(ServoDriverNode(context=ros.context, cli_args=[
        *arm_args, '-p', f'port:={tmp_path / "ttyNONE"}']))
    result = _set(ros, 'servo_driver', Parameter('home_move_time_s', value=2.0))
    assert result.successful, result.reason
    assert driver.get_parameter('home_move_time_s').value == 2.0


def test_a_parameter_of_another_node_is_refused_naming_that_node(ros, arm_args):
    ros.add(SimArmNode(context=ros.context, cli_args=arm_args))
    result = _set(ros, 'sim_arm', Parameter('home_move_time_s', value=2.0))
    assert result.reason == ('home_move_time_s = 2.0, is not a parameter of sim_arm; it is one '
                             'of servo_driver')
