"""URDF text generated from an Arm, for robot_state_publisher and RViz.

Every joint gets a link of its own, named ``<joint>_link``, and turns about its own axis from
its own zero, as the arm file says (so a vendor URDF's joint positions mean the same here). A
yaw joint sits at ``base_xyz_m`` and turns about z; the first pitch joint sits
``shoulder_offset_m`` forward, ``lateral_offset_m`` aside and ``shoulder_height_m`` up from
it; each further pitch joint sits one link length along the previous link's +x; a roll joint
sits ``roll_axis_offset_m`` above the last pitch joint (its link's +z) and turns about +x. A
joint's zero is its origin's rotation (about z for yaw, -y for pitch, x for roll) and its
direction the sign of its axis, so a positive geometric pitch lifts a link that points along
+x, matching :meth:`Arm.fk`. A fixed ``tool_joint`` carries ``tool_link`` at the tool point:
``tool_length_m`` along the last link and ``tool_offset_m`` off the roll axis.
"""

from typing import Protocol
from xml.etree import ElementTree as ET

from fabrik_ros.kinematics.description.joint import Joint, JointKind, Link
from fabrik_ros.kinematics.description.offsets import Offsets

Triple = tuple[float, float, float]
AXES: dict[JointKind, Triple] = {JointKind.YAW: (0.0, 0.0, 1.0),
                                 JointKind.PITCH: (0.0, -1.0, 0.0),
                                 JointKind.ROLL: (1.0, 0.0, 0.0)}
# URDF requires effort [N m] and velocity [rad/s] on revolute joints; hobby servos report
# neither, so these are nominal figures for a 9 g class servo (about 0.1 s per 60 degrees).
NOMINAL_EFFORT = 0.2
NOMINAL_VELOCITY = 10.0
LINK_RADIUS_M = 0.01


class ArmShape(Protocol):
    """What the URDF is written from: an :class:`~fabrik_ros.kinematics.Arm`'s description.

    A protocol rather than the Arm class, which composes the solvers: the description does
    not import them.
    """

    @property
    def base_frame(self) -> str:
        """Return the frame targets and joint positions are expressed in."""

    @property
    def joints(self) -> tuple[Joint, ...]:
        """Return every actuated joint, config order."""

    @property
    def shoulder_height_m(self) -> float:
        """Return the height of the first pitch joint above the base origin [m]."""

    @property
    def links(self) -> tuple[Link, ...]:
        """Return one link per pitch joint, out to the next pitch joint (the last: the tool)."""

    @property
    def offsets(self) -> Offsets:
        """Return where the base, shoulder, plane and tool sit off the ideal chain."""


def arm_urdf(arm: ArmShape, *, name: str = 'fabrik_arm') -> str:
    """Return the URDF document of ``arm`` as a string."""
    robot = ET.Element('robot', name=name)
    ET.SubElement(robot, 'link', name=arm.base_frame)
    parent = arm.base_frame
    lengths = {link.joint: link.length_m for link in arm.links}
    previous: Joint | None = None
    for joint in arm.joints:
        child = f'{joint.name}_link'
        _joint(robot, joint.name, 'revolute', parent, child, _origin(arm, joint, previous),
               _zero_rpy(joint), _scaled(AXES[joint.kind], joint.direction),
               (joint.min_rad, joint.max_rad))
        _link(robot, child, lengths.get(joint.name, 0.0))
        parent, previous = child, joint
    _joint(robot, 'tool_joint', 'fixed', parent, 'tool_link', _tool_origin(arm, previous),
           (0.0, 0.0, 0.0), None, None)
    ET.SubElement(robot, 'link', name='tool_link')
    ET.indent(robot)
    return ET.tostring(robot, encoding='unicode', xml_declaration=True)


def _origin(arm: ArmShape, joint: Joint, previous: Joint | None) -> Triple:
    """Return a joint's origin in its parent link's frame."""
    offsets = arm.offsets
    if previous is None and joint.kind is JointKind.YAW:
        return offsets.base_xyz_m
    if previous is None or previous.kind is JointKind.YAW:
        shoulder = (offsets.shoulder_offset_m, offsets.lateral_offset_m, arm.shoulder_height_m)
        if previous is not None:
            return shoulder
        return tuple(b + v for b, v in zip(offsets.base_xyz_m, shoulder, strict=True))  # type: ignore
    if joint.kind is JointKind.ROLL:
        above = offsets.roll_axis_offset_m if previous.kind is JointKind.PITCH else 0.0
        return (0.0, 0.0, above)
    return (next(link.length_m for link in arm.links if link.joint == previous.name), 0.0, 0.0)


def _tool_origin(arm: ArmShape, last: Joint | None) -> Triple:
    """Return the tool point in the last joint's link frame."""
    tool = arm.links[-1].length_m
    if last is not None and last.kind is JointKind.ROLL:
        return (tool, 0.0, arm.offsets.tool_offset_m)
    return (tool, 0.0, arm.offsets.roll_axis_offset_m)


def _zero_rpy(joint: Joint) -> Triple:
    """Return the origin rotation that puts a joint's zero where the arm file says."""
    axis = AXES[joint.kind]
    if joint.kind is JointKind.PITCH:
        return (0.0, -joint.zero_rad, 0.0)
    return tuple(joint.zero_rad * abs(v) for v in axis)  # type: ignore[return-value]


def _joint(robot: ET.Element, name: str, kind: str, parent: str, child: str,
           offset: Triple, rpy: Triple, axis: Triple | None,
           limits: tuple[float, float] | None) -> None:
    """Append a <joint> element."""
    element = ET.SubElement(robot, 'joint', name=name, type=kind)
    ET.SubElement(element, 'parent', link=parent)
    ET.SubElement(element, 'child', link=child)
    ET.SubElement(element, 'origin', xyz=_text(offset), rpy=_text(rpy))
    if axis is not None:
        ET.SubElement(element, 'axis', xyz=_text(axis))
    if limits is not None:
        ET.SubElement(element, 'limit', lower=f'{limits[0]:.12g}', upper=f'{limits[1]:.12g}',
                      effort=f'{NOMINAL_EFFORT}', velocity=f'{NOMINAL_VELOCITY}')


def _link(robot: ET.Element, name: str, length_m: float) -> None:
    """Append a <link>, drawn as a cylinder along +x when it has a length."""
    link = ET.SubElement(robot, 'link', name=name)
    if length_m <= 0.0:
        return
    visual = ET.SubElement(link, 'visual')
    ET.SubElement(visual, 'origin', xyz=f'{length_m / 2:.12g} 0 0', rpy='0 1.5707963268 0')
    geometry = ET.SubElement(visual, 'geometry')
    ET.SubElement(geometry, 'cylinder', radius=f'{LINK_RADIUS_M}', length=f'{length_m:.12g}')


def _text(values: Triple) -> str:
    """Return three numbers as URDF writes them (-0.0 as 0)."""
    return ' '.join(f'{v + 0.0:.12g}' for v in values)


def _scaled(values: Triple, factor: float) -> Triple:
    """Return three numbers times ``factor`` (an axis turned round by a joint's direction)."""
    x, y, z = values
    return (x * factor, y * factor, z * factor)
