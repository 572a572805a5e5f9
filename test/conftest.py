"""Keep every test's DDS traffic on loopback and its ROS files inside the build tree.

These variables must be set before rclpy loads the middleware, so they are set at import time
of this conftest, which pytest loads before any test module.
"""

import os
from pathlib import Path
import random

REPO_ROOT = Path(__file__).resolve().parent.parent


def _isolate_ros() -> None:
    os.environ['RMW_IMPLEMENTATION'] = 'rmw_fastrtps_cpp'
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ['ROS_LOCALHOST_ONLY'] = '1'
    # A domain of our own per run, so two runs on one machine never see each other.
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.SystemRandom().randint(1, 100)))
    ros_home = REPO_ROOT / 'build' / 'ros'
    os.environ['ROS_HOME'] = str(ros_home)
    os.environ['ROS_LOG_DIR'] = str(ros_home / 'log')
    (ros_home / 'log').mkdir(parents=True, exist_ok=True)


_isolate_ros()
