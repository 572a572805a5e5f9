"""Keep every test's DDS traffic on loopback and its ROS files inside the build tree.

These variables must be set before rclpy loads the middleware, so they are set at import time
of this conftest, which pytest loads before any test module. fabrik_ros.ros_env decides them,
for the Makefile, the benchmarks and the demo too; ``force`` because a test must never leave
loopback, whatever the shell it was started from exported.
"""

import os
from pathlib import Path
import uuid

import pytest

from fabrik_ros.ros_env import isolate_ros

REPO_ROOT = Path(__file__).resolve().parent.parent


def _give_worker_its_domain() -> None:
    """Give each pytest-xdist worker a DDS domain of its own (`make test` runs two).

    The workers inherit the controlling process's environment, domain included: two workers
    in one domain would hear each other's target_point and joint_states. The run's id (the
    same in every worker) picks a base, each worker takes the next domain after it.
    """
    worker = os.environ.get('PYTEST_XDIST_WORKER', '')
    if not worker.startswith('gw'):
        return
    base = uuid.UUID(os.environ['PYTEST_XDIST_TESTRUNUID']).int % 100
    os.environ['ROS_DOMAIN_ID'] = str((base + int(worker[2:])) % 100 + 1)


_give_worker_its_domain()
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
