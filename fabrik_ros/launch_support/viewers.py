"""The viewers both launch files may start: robot_state_publisher and RViz.

Shared by launch/arm.launch.py and launch/sim.launch.py (imported there, so only where ROS 2's
`launch` and `launch_ros` are installed). Each viewer starts when its launch argument is `true`,
or `auto` and its package is installed, so the launch files also run where only the Python
wheels exist.
"""

from ament_index_python.packages import get_package_share_directory, PackageNotFoundError
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from fabrik_ros.kinematics import load_arm
from fabrik_ros.kinematics.urdf import arm_urdf

# RViz's Publish Point and 2D Goal Pose tools publish here; the launched RViz sends them to
# the topics fabrik_ik follows instead.
RVIZ_TOOL_REMAPPINGS = [('/clicked_point', '/target_point'), ('/goal_pose', '/target_pose')]


def viewer_arguments(*, rviz_default: str) -> list[DeclareLaunchArgument]:
    """Return the `rviz` and `robot_state_publisher` launch arguments (true, false, auto)."""
    return [
        DeclareLaunchArgument(
            'rviz', default_value=rviz_default, choices=['true', 'false', 'auto'],
            description='Start rviz2 with config/rviz/fabrik.rviz (auto: when installed)'),
        DeclareLaunchArgument(
            'robot_state_publisher', default_value='auto', choices=['true', 'false', 'auto'],
            description='Start robot_state_publisher with the URDF generated from the arm '
                        'config (auto: when installed)'),
    ]


def wanted(argument: str, package: str, context) -> bool:
    """Return whether to start ``package``: argument true, false, or auto = when installed."""
    value = LaunchConfiguration(argument).perform(context)
    if value != 'auto':
        return value == 'true'
    try:
        get_package_share_directory(package)
    except PackageNotFoundError:
        return False
    return True


def viewer_actions(context, config: LaunchConfiguration) -> list[Node]:
    """Return robot_state_publisher (URDF generated from ``config``) and RViz, as wanted."""
    actions = []
    if wanted('robot_state_publisher', 'robot_state_publisher', context):
        urdf = arm_urdf(load_arm(config.perform(context)))
        actions.append(Node(package='robot_state_publisher', executable='robot_state_publisher',
                            output='screen', parameters=[{'robot_description': urdf}]))
    if wanted('rviz', 'rviz2', context):
        rviz_config = PathJoinSubstitution([FindPackageShare('fabrik_ros'), 'config', 'rviz',
                                            'fabrik.rviz'])
        actions.append(Node(package='rviz2', executable='rviz2', output='screen',
                            arguments=['-d', rviz_config], remappings=RVIZ_TOOL_REMAPPINGS))
    return actions
