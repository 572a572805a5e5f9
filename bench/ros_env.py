"""Keep the benchmarks' DDS traffic on loopback and their ROS files inside the build tree.

Call :func:`isolate_ros` before anything imports rclpy: the middleware reads these variables
once, when it loads. Child processes (the nodes under test) inherit them. fabrik_ros.ros_env
decides the variables, for the tests, the Makefile and the demo too.
"""

from pathlib import Path

from fabrik_ros import ros_env

ROOT = Path(__file__).resolve().parent.parent


def isolate_ros() -> None:
    """Set loopback-only Fast DDS, a domain of the run's own and ROS_HOME under build/."""
    ros_env.isolate_ros(ros_home=ROOT / 'build' / 'ros', force=True)
