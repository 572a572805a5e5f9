"""The serial chain of a URDF from a base link to a tool link, its frames composed at q = 0.

Every joint on the way (fixed ones included) contributes its origin transform; a joint's
point and axis are then known in the base link's frame with all joint positions at zero,
which is all that is needed to read an arm's parameters off exactly.
"""

from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from fabrik_ros.kinematics.description.urdf_model import UrdfError, UrdfJoint, UrdfModel

Matrix = NDArray[np.float64]


@dataclass(frozen=True)
class ChainJoint:
    """A joint of the chain with its origin point [m] and unit axis in the base link's frame."""

    joint: UrdfJoint
    point: Matrix
    axis: Matrix


@dataclass(frozen=True)
class UrdfChain:
    """The joints from ``base_link`` to ``tool_link`` in order, and the tool point [m]."""

    base_link: str
    tool_link: str
    joints: tuple[ChainJoint, ...]
    tool_point: Matrix


def urdf_chain(model: UrdfModel, *, tool_link: str, base_link: str | None = None) -> UrdfChain:
    """Return the chain from ``base_link`` (default: the root) down to ``tool_link`` at q = 0.

    :raises UrdfError: a link is unknown, or the tool link is not below the base link.
    """
    base = model.root if base_link is None else base_link
    path: list[UrdfJoint] = []
    link = tool_link
    joint = model.joint_to(link)
    model.joint_to(base)  # raises for an unknown base link
    while link != base:
        if joint is None:
            raise UrdfError(f'tool link {tool_link!r} is not below base link {base!r}')
        path.append(joint)
        link = joint.parent
        joint = model.joint_to(link)
    if not path:
        raise UrdfError(f'tool link {tool_link!r} is the base link; the chain has no joints')
    frame = np.eye(4)
    joints: list[ChainJoint] = []
    for joint in reversed(path):
        frame = frame @ origin_transform(joint)
        joints.append(ChainJoint(joint=joint, point=frame[:3, 3].copy(),
                                 axis=frame[:3, :3] @ np.array(joint.axis)))
    return UrdfChain(base_link=base, tool_link=tool_link, joints=tuple(joints),
                     tool_point=frame[:3, 3].copy())


def origin_transform(joint: UrdfJoint) -> Matrix:
    """Return the 4x4 transform of a joint's origin: translation, then R = Rz(y) Ry(p) Rx(r)."""
    roll, pitch, yaw = joint.origin.rpy
    transform = np.eye(4)
    transform[:3, :3] = rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)
    transform[:3, 3] = joint.origin.xyz
    return transform


def rot_x(angle: float) -> Matrix:
    """Return the rotation about x by ``angle`` [rad]."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(angle: float) -> Matrix:
    """Return the rotation about y by ``angle`` [rad]."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(angle: float) -> Matrix:
    """Return the rotation about z by ``angle`` [rad]."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
