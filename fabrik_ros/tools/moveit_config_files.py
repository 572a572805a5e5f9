"""The text of every file of a MoveIt configuration folder, by its path in the folder."""

from fabrik_ros.launch_support import moveit_plan as names
from fabrik_ros.tools import moveit_config_yaml as content
from fabrik_ros.tools.moveit_config_robot import MoveItRobot
from fabrik_ros.tools.moveit_config_srdf import ARM_GROUP, srdf_text

LAUNCH_TEXT = '''"""Plan and execute with MoveIt 2: move_group, RViz and fabrik_ros's nodes.

Written by moveit_config_from_arm from {source}.

    ros2 launch {folder}/launch/moveit.launch.py                      # sim_arm
    ros2 launch {folder}/launch/moveit.launch.py sim_device:=true     # driver, simulated board
    ros2 launch {folder}/launch/moveit.launch.py bringup:=arm port:=/dev/ttyUSB0
"""

from pathlib import Path

from launch import LaunchDescription

from fabrik_ros.launch_support.moveit_actions import describe_moveit


def generate_launch_description():
    """Declare the arguments; start the arm's launch file, move_group and RViz."""
    return LaunchDescription(describe_moveit(Path(__file__).resolve().parents[1]))
'''

RVIZ_TEXT = """Panels:
  - Class: rviz_common/Displays
    Name: Displays
  - Class: moveit_rviz_plugin/MotionPlanning
    Name: MotionPlanning
Visualization Manager:
  Class: ""
  Displays:
    - Class: rviz_default_plugins/Grid
      Name: Grid
      Enabled: true
      Cell Size: 0.1
      Plane Cell Count: 20
      Reference Frame: <Fixed Frame>
      Value: true
    - Class: moveit_rviz_plugin/MotionPlanning
      Name: MotionPlanning
      Enabled: true
      Move Group Namespace: ""
      Robot Description: robot_description
      Planning Scene Topic: /monitored_planning_scene
      Planning Request:
        Planning Group: {group}
        Interactive Marker Size: 0.1
      Value: true
  Global Options:
    Fixed Frame: {frame}
  Value: true
  Views:
    Current:
      Class: rviz_default_plugins/Orbit
      Distance: 1.0
      Focal Point:
        X: 0.1
        Y: 0.0
        Z: 0.1
      Name: Current View
      Target Frame: <Fixed Frame>
      Value: Orbit (rviz_default_plugins)
"""


def folder_files(robot: MoveItRobot, arm_text: str, *, source: str,
                 folder: str) -> dict[str, str]:
    """Return every file's text by its path in the folder (config/..., launch/...).

    :param arm_text: the arm file's text, copied so the folder stays what it was made from
    :param source: what the configuration was made from, for the comments
    :param folder: the folder's path, for the launch file's usage lines
    """
    made = f'made by moveit_config_from_arm from {source}'
    yaml_files = {
        names.KINEMATICS_FILE: (content.kinematics(robot), f'IK solver per group, {made}'),
        names.JOINT_LIMITS_FILE: (content.joint_limits(robot),
                                  f'position ranges and speed limits per joint, {made}'),
        names.CONTROLLERS_FILE: (content.moveit_controllers(robot),
                                 f"fabrik_ros's action servers as MoveIt's controllers, {made}"),
        names.OMPL_FILE: (content.ompl_planning(robot), f'the OMPL planning pipeline, {made}'),
    }
    files = {f'config/{name}': content.yaml_text(mapping, comment)
             for name, (mapping, comment) in yaml_files.items()}
    files[f'config/{names.ARM_FILE}'] = arm_text
    files[f'config/{names.URDF_FILE}'] = robot.urdf
    files[f'config/{names.SRDF_FILE}'] = srdf_text(robot)
    files[f'config/{names.RVIZ_FILE}'] = RVIZ_TEXT.format(group=ARM_GROUP, frame=robot.base_link)
    files[f'launch/{names.LAUNCH_FILE}'] = LAUNCH_TEXT.format(source=source, folder=folder)
    return files
