"""Run the arm without hardware: IK on a simulated arm, or the real driver on a simulated board.

    ros2 launch fabrik_ros sim.launch.py                       # fabrik_ik + sim_arm (+ RViz)
    ros2 launch fabrik_ros sim.launch.py sim_device:=true      # fabrik_ik + servo_driver + board
    ros2 launch fabrik_ros sim.launch.py sim_device:=true protocol:=maestro rviz:=false
    ros2 launch fabrik_ros sim.launch.py sim_device:=true board:=simavr   # the Uno firmware

robot_state_publisher and rviz2 start where they are installed (`auto`), so the same file runs
on a ROS 2 desktop and where only the Python wheels exist. The launched RViz's Publish Point
and 2D Goal Pose tools are remapped onto target_point and target_pose; fabrik_ik also follows
/clicked_point and /goal_pose of an RViz started separately.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackagePrefix, FindPackageShare

from fabrik_ros.boardsim.simavr_board import BUILD_DIR, build_hardware, FIRMWARE_ELF, HARNESS
from fabrik_ros.launch_support.viewers import viewer_actions, viewer_arguments


def generate_launch_description():
    """Describe fabrik_ik + (sim_arm | servo_driver + simulated board) + viewers."""
    share = FindPackageShare('fabrik_ros')
    config = LaunchConfiguration('config')
    sim_device = LaunchConfiguration('sim_device')
    protocol = LaunchConfiguration('protocol')
    link = LaunchConfiguration('link')

    def python_board(context):
        """Return the simulated board of fabrik_ros.boardsim on a pty at `link`."""
        script = PathJoinSubstitution([FindPackagePrefix('fabrik_ros'), 'lib', 'fabrik_ros',
                                       'sim_device'])
        return [ExecuteProcess(cmd=[script, '--protocol', protocol, '--link', link],
                               name='sim_device', output='screen')]

    def simavr_board(context):
        """Return the Uno firmware of hardware/ running in simavr, its UART on a pty at `link`.

        Builds firmware and harness first (make -C hardware); needs a source checkout, found
        beside the package or through FABRIK_ROS_HARDWARE_DIR.
        """
        build_hardware('firmware', 'sim')
        return [ExecuteProcess(
            cmd=[str(HARNESS), '--pty-link', link, '--log', '/dev/null',
                 '--eeprom', str(BUILD_DIR / 'simavr_eeprom.bin'), str(FIRMWARE_ELF)],
            name='simavr_board', output='screen')]

    # Simulated boards behind the pty at `link`, by the name given as board:=...
    boards = {'python': python_board, 'simavr': simavr_board}

    def board(context):
        """Start the board named by board:=, for servo_driver to talk to."""
        return boards[LaunchConfiguration('board').perform(context)](context)

    return LaunchDescription([
        DeclareLaunchArgument(
            'config', default_value=PathJoinSubstitution([share, 'config', 'arm_4dof.yaml']),
            description='Arm parameter file (ROS 2 YAML) read by every node'),
        DeclareLaunchArgument(
            'sim_device', default_value='false', choices=['true', 'false'],
            description='true: servo_driver on a simulated servo board; false: sim_arm'),
        DeclareLaunchArgument(
            'board', default_value='python', choices=sorted(boards),
            description='With sim_device:=true, the simulated board: python = '
                        'fabrik_ros.boardsim on a pseudo-terminal; simavr = the '
                        'Uno firmware of hardware/ in the simavr simulator (protocol:=native)'),
        DeclareLaunchArgument(
            'protocol', default_value='native', choices=['native', 'ssc32', 'maestro'],
            description='With sim_device:=true, the protocol board and driver speak'),
        DeclareLaunchArgument(
            'link', default_value='/tmp/fabrik_ros_sim_board',
            description="With sim_device:=true, the symlink to the simulated board's pty"),
        *viewer_arguments(rviz_default='auto'),
        Node(package='fabrik_ros', executable='fabrik_ik', output='screen',
             parameters=[config, {'follow_rviz_tools': True}]),
        Node(package='fabrik_ros', executable='sim_arm', output='screen',
             parameters=[config], condition=UnlessCondition(sim_device)),
        OpaqueFunction(function=board, condition=IfCondition(sim_device)),
        Node(package='fabrik_ros', executable='servo_driver', output='screen',
             parameters=[config, {'port': link, 'protocol': protocol}],
             condition=IfCondition(sim_device)),
        OpaqueFunction(function=viewer_actions, args=[config]),
    ])
