"""Run the real arm: fabrik_ik + servo_driver on a serial servo board.

    ros2 launch fabrik_ros arm.launch.py port:=/dev/serial/by-id/usb-1a86_USB_Serial-if00-port0
    ros2 launch fabrik_ros arm.launch.py protocol:=ssc32 baud:=9600 rviz:=true

robot_state_publisher (with the URDF generated from the arm config) starts where it is
installed (`auto`), so RViz or any TF consumer sees the arm the board reports.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from fabrik_ros.launch_support.viewers import viewer_actions, viewer_arguments


def generate_launch_description():
    """Describe fabrik_ik + servo_driver + optional robot_state_publisher and RViz."""
    share = FindPackageShare('fabrik_ros')
    config = LaunchConfiguration('config')

    return LaunchDescription([
        DeclareLaunchArgument(
            'config', default_value=PathJoinSubstitution([share, 'config', 'arm_4dof.yaml']),
            description='Arm parameter file (ROS 2 YAML) read by every node'),
        DeclareLaunchArgument(
            'port', default_value='/dev/ttyUSB0',
            description='Serial port of the servo board; a /dev/serial/by-id/ path survives '
                        'replugging'),
        DeclareLaunchArgument(
            'baud', default_value='115200',
            description='Serial speed [baud]: 115200 for the fabrik_ros firmware, as set on '
                        'the board for SSC-32U and Maestro'),
        DeclareLaunchArgument(
            'protocol', default_value='native', choices=['native', 'ssc32', 'maestro'],
            description='Board protocol: native = fabrik_ros firmware (hardware/PROTOCOL.md), '
                        'ssc32 = Lynxmotion SSC-32U, maestro = Pololu Maestro'),
        *viewer_arguments(rviz_default='false'),
        Node(package='fabrik_ros', executable='fabrik_ik', output='screen',
             parameters=[config, {'follow_rviz_tools': True}]),
        Node(package='fabrik_ros', executable='servo_driver', output='screen',
             parameters=[config, {
                 'port': LaunchConfiguration('port'),
                 'baud': ParameterValue(LaunchConfiguration('baud'), value_type=int),
                 'protocol': LaunchConfiguration('protocol')}]),
        OpaqueFunction(function=viewer_actions, args=[config]),
    ])
