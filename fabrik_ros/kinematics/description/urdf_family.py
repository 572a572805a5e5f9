"""Sort a URDF chain's movable joints into yaw, pitch and roll; refuse one outside the family.

The family an arm file describes: an optional yaw joint first (axis parallel to the base link's
z), one or more pitch joints (axes parallel to one another and perpendicular to the yaw axis;
without a yaw joint, parallel to the base link's y), and at most one roll joint after the last
pitch (axis perpendicular to the pitch axes). Axes are compared at q = 0, within
:data:`AXIS_TOLERANCE_RAD`: vendor URDFs write pi/2 as 1.5708, a tilt of 4e-6 rad, which moves a
point half a metre out by 2e-6 m.
"""

from dataclasses import dataclass
import math

import numpy as np

from fabrik_ros.kinematics.description.urdf_chain import ChainJoint, Matrix, UrdfChain
from fabrik_ros.kinematics.description.urdf_model import UrdfError, UrdfJointType

AXIS_TOLERANCE_RAD = 2e-5
BASE_Y = np.array([0.0, 1.0, 0.0])
BASE_Z = np.array([0.0, 0.0, 1.0])
REVOLUTE = (UrdfJointType.REVOLUTE, UrdfJointType.CONTINUOUS)


@dataclass(frozen=True)
class FamilyChain:
    """A chain's movable joints by kind (fixed joints are folded into the points at q = 0)."""

    chain: UrdfChain
    yaw: ChainJoint | None
    pitches: tuple[ChainJoint, ...]
    roll: ChainJoint | None


def family_chain(chain: UrdfChain) -> FamilyChain:
    """Return the chain's yaw, pitch and roll joints.

    :raises UrdfError: one line naming the joint that puts the chain outside the family and why.
    """
    movable = [j for j in chain.joints if j.joint.type is not UrdfJointType.FIXED]
    for joint in movable:
        if joint.joint.type not in REVOLUTE:
            raise UrdfError(f'joint {joint.joint.name!r} is {joint.joint.type.value}; an arm file '
                            'has revolute joints only (yaw, pitch, roll)')
    if not movable:
        raise UrdfError(f'the chain from {chain.base_link!r} to {chain.tool_link!r} has no '
                        'movable joint')
    yaw = movable[0] if _parallel(movable[0].axis, BASE_Z) else None
    rest = movable[1:] if yaw is not None else movable
    if not rest:
        raise UrdfError(f'joint {movable[0].joint.name!r} is the only movable joint from '
                        f'{chain.base_link!r} to {chain.tool_link!r}; an arm needs a pitch joint')
    _check_first_pitch(rest[0], yaw)
    pitches = [rest[0]]
    roll: ChainJoint | None = None
    for joint in rest[1:]:
        if _parallel(joint.axis, pitches[0].axis):
            if roll is not None:
                raise UrdfError(f'joint {roll.joint.name!r}: a roll joint between pitch joints '
                                f'{pitches[-1].joint.name!r} and {joint.joint.name!r}; a roll '
                                'joint may only follow the last pitch joint')
            pitches.append(joint)
        elif _perpendicular(joint.axis, pitches[0].axis):
            if roll is not None:
                raise UrdfError(f'joint {joint.joint.name!r}: a second roll joint after '
                                f'{roll.joint.name!r}; the family has at most one')
            roll = joint
        else:
            raise UrdfError(f'joint {joint.joint.name!r}: axis at {_angle_deg(joint, pitches[0])} '
                            f'deg to the pitch axis of {pitches[0].joint.name!r}; it must be '
                            'parallel (pitch) or perpendicular (roll) to it')
    return FamilyChain(chain=chain, yaw=yaw, pitches=tuple(pitches), roll=roll)


def _check_first_pitch(joint: ChainJoint, yaw: ChainJoint | None) -> None:
    """Refuse a first pitch joint whose axis does not fit the yaw joint (or, without one, y)."""
    name = joint.joint.name
    if yaw is None:
        if _perpendicular(joint.axis, BASE_Z):
            if not _parallel(joint.axis, BASE_Y):
                raise UrdfError(f'joint {name!r}: pitch axis {_xyz(joint.axis)} in a chain '
                                "without a yaw joint must be parallel to the base link's y")
            return
        tilt = math.degrees(math.acos(min(1.0, abs(float(joint.axis @ BASE_Z)))))
        raise UrdfError(f"joint {name!r}: axis {_xyz(joint.axis)} is {tilt:.4g} deg off the "
                        "base link's z; a yaw axis must be parallel to it, a first pitch axis "
                        'perpendicular')
    if _parallel(joint.axis, yaw.axis):
        raise UrdfError(f'joint {name!r}: a second yaw joint after {yaw.joint.name!r}; the '
                        'family has one yaw joint at most, first')
    if not _perpendicular(joint.axis, yaw.axis):
        off = math.degrees(math.asin(min(1.0, abs(float(joint.axis @ yaw.axis)))))
        raise UrdfError(f'joint {name!r}: axis {off:.4g} deg off perpendicular to the yaw axis '
                        f'of {yaw.joint.name!r}; a pitch axis must be perpendicular to it')


def _parallel(a: Matrix, b: Matrix) -> bool:
    """Return True when unit vectors ``a`` and ``b`` are parallel or opposite."""
    return float(np.linalg.norm(np.cross(a, b))) < AXIS_TOLERANCE_RAD


def _perpendicular(a: Matrix, b: Matrix) -> bool:
    """Return True when unit vectors ``a`` and ``b`` are perpendicular."""
    return abs(float(np.dot(a, b))) < AXIS_TOLERANCE_RAD


def _angle_deg(a: ChainJoint, b: ChainJoint) -> str:
    """Return the angle between two joints' axes [deg], formatted."""
    cosine = min(1.0, abs(float(np.dot(a.axis, b.axis))))
    return f'{math.degrees(math.acos(cosine)):.4g}'


def _xyz(axis: Matrix) -> str:
    """Return an axis for a message, in the base link's frame."""
    numbers = ', '.join(f'{round(float(v), 4) + 0.0:g}' for v in axis)
    return f"({numbers}) in the base link's frame"
