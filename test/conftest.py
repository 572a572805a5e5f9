"""Keep every test's DDS traffic on loopback and its ROS files inside the build tree.

These variables must be set before rclpy loads the middleware, so they are set at import time
of this conftest, which pytest loads before any test module. fabrik_ros.ros_env decides them,
for the Makefile, the benchmarks and the demo too; ``force`` because a test must never leave
loopback, whatever the shell it was started from exported.
"""

from pathlib import Path

import pytest

from fabrik_ros.ros_env import isolate_ros

REPO_ROOT = Path(__file__).resolve().parent.parent

isolate_ros(ros_home=REPO_ROOT / 'build' / 'ros', force=True)


@pytest.fixture
def ros():
    """Yield a RosHarness (its own Context); its nodes and Context are destroyed after the test.

    The import is here, not at the top, so that tests of the pure core never load rclpy.
    """
    from test.nodes.ros_harness import RosHarness

    harness = RosHarness()
    try:
        yield harness
    finally:
        harness.close()
