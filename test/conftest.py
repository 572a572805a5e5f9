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
from test.bench.processes import end_tagged, TAG, wait_until_gone

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
# Every process a test starts inherits this tag (test/bench/processes.py), so that what a test
# left running can be found at the end, whichever group or session it moved to. An xdist
# worker extends the controlling process's tag with its name: a worker's checks see its own
# tests' processes only, the controlling process (RUN_TAG) all of them once the workers ended.
RUN_TAG = os.environ.setdefault(TAG, f'session-{os.getpid()}')
_WORKER = os.environ.get('PYTEST_XDIST_WORKER', '')
SESSION_TAG = f'{RUN_TAG}-{_WORKER}' if _WORKER else RUN_TAG
os.environ[TAG] = SESSION_TAG
# A node's own cleanup takes well under this; only a leftover makes the session wait for it.
_LEFTOVER_WAIT_S = 10.0


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if a process of the package that a test started is still running.

    A node left behind keeps retrying its pseudo-terminal and can later write onto another
    test's simulated board that reused the pty's number: it is ended here and named.
    """
    if _WORKER:
        return            # the controlling process checks, once every worker has ended
    left = wait_until_gone(RUN_TAG, _LEFTOVER_WAIT_S, prefix=True)
    if not left:
        return
    end_tagged(RUN_TAG, prefix=True)
    reporter = session.config.pluginmanager.get_plugin('terminalreporter')
    if reporter is not None:
        reporter.write_line(f'still running after the tests (ended now): {left}', red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


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
