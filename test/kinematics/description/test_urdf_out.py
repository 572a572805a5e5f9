"""The generated URDF describes the same chain as Arm.fk: parsed back and walked joint by joint."""

import math
from xml.etree import ElementTree as ET

import numpy as np
import pytest

from fabrik_ros.kinematics import Arm
from fabrik_ros.kinematics.description.urdf_out import arm_urdf


def axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Return the rotation matrix about a unit axis (Rodrigues)."""
    x, y, z = axis
    skew = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + math.sin(angle) * skew + (1.0 - math.cos(angle)) * skew @ skew


def urdf_frames(urdf: str, angles: dict[str, float]) -> dict[str, np.ndarray]:
    """Return each link's origin in the root frame by walking the URDF's joints."""
    robot = ET.fromstring(urdf)
    frames: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    root = robot.find('link').get('name')
    frames[root] = (np.eye(3), np.zeros(3))
    for joint in robot.findall('joint'):
        rotation, origin = frames[joint.find('parent').get('link')]
        offset = np.array([float(v) for v in joint.find('origin').get('xyz').split()])
        assert joint.find('origin').get('rpy') == '0 0 0'
        turn = np.eye(3)
        if joint.get('type') == 'revolute':
            axis = np.array([float(v) for v in joint.find('axis').get('xyz').split()])
            turn = axis_rotation(axis, angles[joint.get('name')])
        frames[joint.find('child').get('link')] = (rotation @ turn, origin + rotation @ offset)
    return {name: origin for name, (_, origin) in frames.items()}


def test_urdf_chain_matches_fk(any_arm: Arm):
    urdf = arm_urdf(any_arm)
    rng = np.random.default_rng(4)
    for _ in range(20):
        angles = np.array([rng.uniform(j.min_rad, j.max_rad) for j in any_arm.joints])
        frames = urdf_frames(urdf, dict(zip(any_arm.joint_names, angles, strict=True)))
        points = any_arm.fk(angles)
        for index, name in enumerate(any_arm.joint_names):
            assert np.allclose(frames[f'{name}_link'], points[index], atol=1e-12), name
        assert np.allclose(frames['tool_link'], points[-1], atol=1e-12)


def test_urdf_joints_carry_limits_and_the_base_frame(any_arm: Arm):
    robot = ET.fromstring(arm_urdf(any_arm))
    assert robot.find('link').get('name') == any_arm.base_frame
    joints = {j.get('name'): j for j in robot.findall('joint')}
    assert set(joints) == set(any_arm.joint_names) | {'tool_joint'}
    for joint in any_arm.joints:
        limit = joints[joint.name].find('limit')
        assert float(limit.get('lower')) == pytest.approx(joint.min_rad, abs=1e-11)
        assert float(limit.get('upper')) == pytest.approx(joint.max_rad, abs=1e-11)
        assert float(limit.get('effort')) > 0.0 and float(limit.get('velocity')) > 0.0
    links = {link.get('name') for link in robot.findall('link')}
    for joint in joints.values():
        assert joint.find('parent').get('link') in links
        assert joint.find('child').get('link') in links
