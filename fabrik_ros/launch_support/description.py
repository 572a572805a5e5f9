"""The ``description:=`` launch argument: a vendor's own URDF for robot_state_publisher.

robot_state_publisher places a link from the joint_states position of the joint above it,
so the vendor's model (with its meshes) moves with our joint_states only when the names
agree both ways: every joint of the arm file is a movable joint of the URDF (else its servo
moves nothing on screen), and every movable joint of the URDF is a joint or an auxiliary
servo of the arm file (else robot_state_publisher never places the links below it). A
``<mimic>`` joint follows the joint it names, so it needs no state of its own. The file
comes from the command line: its size is bounded and it is read by
:func:`~fabrik_ros.kinematics.description.urdf_model.parse_urdf` (no DOCTYPE, a tree).
"""

import os
from xml.etree import ElementTree as ET

from fabrik_ros.kinematics import Arm
from fabrik_ros.kinematics.description.urdf_model import (
    MAX_URDF_CHARS,
    parse_urdf,
    UrdfError,
    UrdfModel,
)

ARGUMENT = 'description'


class DescriptionError(ValueError):
    """The URDF named by description:= cannot be shown for this arm; the message says why."""


def vendor_urdf(path: str, arm: Arm) -> str:
    """Return the text of the URDF at ``path`` once its joints match ``arm``'s.

    :raises DescriptionError: one line naming the argument, the file and the rule broken.
    """
    where = f'{ARGUMENT}:={path}'
    text = _read(path, where)
    try:
        model = parse_urdf(text)
    except UrdfError as error:
        raise DescriptionError(f'{where}: not a URDF: {error}') from None
    mismatch = _joint_mismatch(model, _mimic_joints(text), arm)
    if mismatch:
        raise DescriptionError(f"{where}: its joints do not match the arm file's "
                               f'(robot_state_publisher places a link by the name of the '
                               f'joint above it): {mismatch}')
    return text


def _read(path: str, where: str) -> str:
    if not os.path.isfile(path):
        raise DescriptionError(f'{where}: no such file; name the URDF of the arm (xacro '
                               f'expanded), or leave it empty for the one generated from the '
                               f'arm file')
    try:
        with open(path, encoding='utf-8') as stream:
            text = stream.read(MAX_URDF_CHARS + 1)
    except (OSError, UnicodeDecodeError) as error:
        raise DescriptionError(f'{where}: not readable as UTF-8 text: {error}') from None
    if len(text) > MAX_URDF_CHARS:
        raise DescriptionError(f'{where}: longer than {MAX_URDF_CHARS} characters, more than '
                               f'any URDF without inlined meshes')
    return text


def _mimic_joints(text: str) -> frozenset[str]:
    """Return the joints that copy another joint's position (parse_urdf checked the text)."""
    robot = ET.fromstring(text)
    return frozenset(joint.get('name', '') for joint in robot.findall('joint')
                     if joint.find('mimic') is not None)


def _joint_mismatch(model: UrdfModel, mimic: frozenset[str], arm: Arm) -> str:
    """Return which names are missing on which side, or '' when the joints match."""
    movable = set(model.movable_joint_names)
    fixed = {joint.name for joint in model.joints} - movable
    aux = [servo.name for servo in arm.servo_map.aux]
    parts = []
    unmoved = [name for name in arm.joint_names if name not in movable]
    if unmoved:
        named = [f'{name} (fixed there)' if name in fixed else name for name in unmoved]
        parts.append(f'joints of the arm file that are no movable joint of the URDF: '
                     f'{", ".join(named)}')
    unplaced = [name for name in model.movable_joint_names
                if name not in mimic and name not in arm.joint_names and name not in aux]
    if unplaced:
        parts.append(f'movable joints of the URDF that are neither a joint nor an auxiliary '
                     f'servo of the arm file: {", ".join(unplaced)}')
    return '; '.join(parts)
