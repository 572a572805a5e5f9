"""Shared fixtures for the kinematics tests: the shipped arm configs and their parameters."""

import copy
from pathlib import Path

import pytest
import yaml

from fabrik_ros.kinematics import Arm, load_arm

CONFIG_DIR = Path(__file__).resolve().parents[2] / 'config'
ARM_CONFIGS = ('arm_4dof.yaml', 'arm_planar_3link.yaml', 'arm_6servo.yaml')


def shipped_params(name: str = 'arm_4dof.yaml') -> dict:
    """Return a fresh copy of a shipped config's ros__parameters mapping."""
    document = yaml.safe_load((CONFIG_DIR / name).read_text())
    return copy.deepcopy(document['/**']['ros__parameters'])


@pytest.fixture(scope='session')
def arm_4dof() -> Arm:
    return load_arm(CONFIG_DIR / 'arm_4dof.yaml')


@pytest.fixture(scope='session', params=ARM_CONFIGS)
def any_arm(request) -> Arm:
    return load_arm(CONFIG_DIR / request.param)
