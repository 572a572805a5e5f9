"""Fixtures for in-process node tests: the arm config (``ros`` is in test/conftest.py)."""

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ARM_CONFIG = REPO_ROOT / 'config' / 'arm_4dof.yaml'


@pytest.fixture
def arm_args(ros) -> list[str]:
    """Return the arguments that give a node the 4-DOF arm config and the test's namespace."""
    return ['--ros-args', '--params-file', str(ARM_CONFIG), *ros.ros_args]
