"""Keep the benchmarks' DDS traffic on loopback and their ROS files inside the build tree.

Call :func:`isolate_ros` before anything imports rclpy: the middleware reads these variables
once, when it loads. Child processes (the nodes under test) inherit them.
"""

import os
from pathlib import Path
import random

ROOT = Path(__file__).resolve().parent.parent


def isolate_ros() -> None:
    """Set loopback-only Fast DDS, a domain of the run's own and ROS_HOME under build/."""
    os.environ['RMW_IMPLEMENTATION'] = 'rmw_fastrtps_cpp'
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ['ROS_LOCALHOST_ONLY'] = '1'
    # A domain of our own, so a benchmark never hears a test run on the same machine.
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.SystemRandom().randint(1, 100)))
    ros_home = ROOT / 'build' / 'ros'
    os.environ.setdefault('ROS_HOME', str(ros_home))
    os.environ.setdefault('ROS_LOG_DIR', str(ros_home / 'log'))
    Path(os.environ['ROS_LOG_DIR']).mkdir(parents=True, exist_ok=True)
