"""The ROS 2 wheels work here: two in-process nodes exchange a PoseStamped over loopback DDS."""

import os
import time

import pytest

from fabrik_ros.ros_env import detect_distro, LOCALHOST_ONLY_DISTROS

rclpy = pytest.importorskip('rclpy')

from geometry_msgs.msg import PoseStamped  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402


def test_environment_keeps_dds_on_loopback_the_way_this_distro_understands():
    if detect_distro() in LOCALHOST_ONLY_DISTROS:
        assert os.environ['ROS_LOCALHOST_ONLY'] == '1'
        assert 'ROS_AUTOMATIC_DISCOVERY_RANGE' not in os.environ
    else:
        assert os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
        assert 'ROS_LOCALHOST_ONLY' not in os.environ
    assert os.environ['RMW_IMPLEMENTATION'] == 'rmw_fastrtps_cpp'
    assert 0 < int(os.environ['ROS_DOMAIN_ID']) <= 101
    assert os.environ['ROS_LOG_DIR'].startswith(os.environ['ROS_HOME'])


@pytest.mark.ros
@pytest.mark.timeout(60)
def test_pose_stamped_travels_between_two_nodes():
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    talker = rclpy.create_node('wheels_talker', context=context)
    listener = rclpy.create_node('wheels_listener', context=context)
    received: list[PoseStamped] = []
    try:
        listener.create_subscription(PoseStamped, 'wheels_pose', received.append, 10)
        publisher = talker.create_publisher(PoseStamped, 'wheels_pose', 10)
        executor.add_node(talker)
        executor.add_node(listener)
        sent = PoseStamped()
        sent.header.frame_id = 'base_link'
        sent.pose.position.x, sent.pose.position.y, sent.pose.position.z = 0.1, -0.2, 0.3
        sent.pose.orientation.w = 1.0
        deadline = time.monotonic() + 20.0
        while not received and time.monotonic() < deadline:
            publisher.publish(sent)
            executor.spin_once(timeout_sec=0.05)
    finally:
        executor.shutdown()
        talker.destroy_node()
        listener.destroy_node()
        rclpy.shutdown(context=context)
    assert received, 'no PoseStamped arrived within 20 s'
    got = received[0]
    assert got.header.frame_id == 'base_link'
    assert (got.pose.position.x, got.pose.position.y, got.pose.position.z) == (0.1, -0.2, 0.3)
