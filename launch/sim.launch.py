"""Run the arm without hardware: IK on a simulated arm, or the real driver on a simulated board.

    ros2 launch fabrik_ros sim.launch.py                       # fabrik_ik + sim_arm (+ RViz)
    ros2 launch fabrik_ros sim.launch.py sim_device:=true      # fabrik_ik + servo_driver + board
    ros2 launch fabrik_ros sim.launch.py sim_device:=true protocol:=maestro rviz:=false
    ros2 launch fabrik_ros sim.launch.py sim_device:=true board:=simavr   # the Uno firmware
    ros2 launch fabrik_ros sim.launch.py namespace:=left params_file:=my_nodes.yaml

robot_state_publisher and rviz2 start where they are installed (`auto`, saying so where not),
so the same file runs on a ROS 2 desktop and where only the Python wheels exist. The launched
RViz's Publish Point and 2D Goal Pose tools are remapped onto target_point and target_pose;
fabrik_ik also follows /clicked_point and /goal_pose of an RViz started separately. Under
namespace:= every node, topic and service of the arm is in it (fabrik_ros.launch_support.
namespace says which names are taken in, and why). Every argument, and every parameter of
params_file:=, is checked before anything starts (fabrik_ros.launch_support.arguments).
"""

from launch import LaunchDescription

from fabrik_ros.launch_support.actions import describe
from fabrik_ros.launch_support.arguments import plan_sim


def generate_launch_description():
    """Declare the arguments; start fabrik_ik + (sim_arm | board + servo_driver) + viewers."""
    return LaunchDescription(describe('sim.launch.py', plan_sim))
