"""Fixtures for in-process node tests: a fresh rclpy Context per test and the arm config."""

from pathlib import Path

import pytest

from test.nodes.ros_harness import RosHarness

REPO_ROOT = Path(__file__).resolve().parents[2]
ARM_CONFIG = REPO_ROOT / 'config' / 'arm_4dof.yaml'


@pytest.fixture
def ros():
    """Yield a RosHarness; its nodes and Context are destroyed after the test."""
    harness = RosHarness()
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture
def arm_args(ros) -> list[str]:
    """Return the arguments that give a node the 4-DOF arm config and the test's namespace."""
    return ['--ros-args', '--params-file', str(ARM_CONFIG), *ros.ros_args]
