"""Run the real arm: fabrik_ik + servo_driver on a serial servo board.

    ros2 launch fabrik_ros arm.launch.py port:=/dev/serial/by-id/usb-1a86_USB_Serial-if00-port0
    ros2 launch fabrik_ros arm.launch.py protocol:=ssc32 baud:=9600 rviz:=true
    ros2 launch fabrik_ros arm.launch.py namespace:=left params_file:=my_nodes.yaml

robot_state_publisher (with the URDF generated from the arm config) starts where it is
installed (`auto`, saying so where not), so RViz or any TF consumer sees the arm the board
reports. Under namespace:= every node, topic and service of the arm is in it. Every argument,
and every parameter of params_file:=, is checked before anything starts
(fabrik_ros.launch_support.arguments).
"""

from launch import LaunchDescription

from fabrik_ros.launch_support.actions import describe
from fabrik_ros.launch_support.arguments import plan_arm


def generate_launch_description():
    """Declare the arguments; start fabrik_ik + servo_driver + viewers."""
    return LaunchDescription(describe('arm.launch.py', plan_arm))
