"""Drive the follower arm with a leader arm moved by hand: servo_driver + leader_arm.

    ros2 launch fabrik_ros teleop.launch.py leader_port:=/dev/ttyACM1 follower_port:=/dev/ttyACM0
    ros2 launch fabrik_ros teleop.launch.py leader_port:=... follower_port:=... \
        leader_config:=my_so101_leader.yaml config:=my_so101.yaml
    ros2 launch fabrik_ros teleop.launch.py sim_device:=true rviz:=true  # two simulated buses
    ros2 launch fabrik_ros teleop.launch.py sim_device:=true namespace:=left rviz:=false

The leader's torque stays off (leader_arm never writes a goal or a torque-on); its positions,
through both arms' calibrations, are the follower's joint_commands, which servo_driver follows
at its speed limits. Every argument, the leader mapping, and every parameter of params_file:=
are checked before anything starts (fabrik_ros.launch_support.teleop_plan).
"""

from launch import LaunchDescription

from fabrik_ros.launch_support.actions import describe
from fabrik_ros.launch_support.teleop_plan import plan_teleop


def generate_launch_description():
    """Declare the arguments; start servo_driver + leader_arm (+ simulated buses, viewers)."""
    return LaunchDescription(describe('teleop.launch.py', plan_teleop))
