"""URDF text generated from an Arm, for robot_state_publisher and RViz.

Every joint gets a link of its own, named ``<joint>_link``. A yaw joint turns about +z at the
base origin; the first pitch joint sits ``shoulder_height_m`` above it; each further pitch
joint sits one link length along the previous link's +x; a roll joint shares its origin with
the joint before it and turns about +x. Pitch joints turn about -y, so a positive angle lifts
a link that points along +x, matching :meth:`Arm.fk`. A fixed ``tool_joint`` carries
``tool_link`` at the tool point.
"""

from typing import Protocol
from xml.etree import ElementTree as ET

from fabrik_ros.kinematics.description.joint import Joint, JointKind, Link

AXES = {JointKind.YAW: '0 0 1', JointKind.PITCH: '0 -1 0', JointKind.ROLL: '1 0 0'}
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


def arm_urdf(arm: ArmShape, *, name: str = 'fabrik_arm') -> str:
    """Return the URDF document of ``arm`` as a string."""
    robot = ET.Element('robot', name=name)
    ET.SubElement(robot, 'link', name=arm.base_frame)
    parent = arm.base_frame
    first_pitch = arm.links[0].joint
    lengths = {link.joint: link.length_m for link in arm.links}
    reach = 0.0  # length of the last pitch link: where the next pitch joint or the tool sits
    for joint in arm.joints:
        child = f'{joint.name}_link'
        _joint(robot, joint.name, 'revolute', parent, child,
               _origin(joint, first_pitch, arm.shoulder_height_m, reach), AXES[joint.kind],
               (joint.min_rad, joint.max_rad))
        _link(robot, child, lengths.get(joint.name, 0.0))
        if joint.kind is JointKind.PITCH:
            reach = lengths[joint.name]
        parent = child
    offset = (reach, 0.0, 0.0)
    _joint(robot, 'tool_joint', 'fixed', parent, 'tool_link', offset, None, None)
    ET.SubElement(robot, 'link', name='tool_link')
    ET.indent(robot)
    return ET.tostring(robot, encoding='unicode', xml_declaration=True)


def _origin(joint: Joint, first_pitch: str, shoulder_height_m: float,
            reach_m: float) -> tuple[float, float, float]:
    """Return a joint's origin in its parent link's frame."""
    if joint.name == first_pitch:
        return (0.0, 0.0, shoulder_height_m)
    if joint.kind is JointKind.ROLL:
        return (0.0, 0.0, 0.0)
    return (reach_m, 0.0, 0.0)


def _joint(robot: ET.Element, name: str, kind: str, parent: str, child: str,
           offset: tuple[float, float, float], axis: str | None,
           limits: tuple[float, float] | None) -> None:
    """Append a <joint> element."""
    element = ET.SubElement(robot, 'joint', name=name, type=kind)
    ET.SubElement(element, 'parent', link=parent)
    ET.SubElement(element, 'child', link=child)
    ET.SubElement(element, 'origin', xyz=' '.join(f'{v:.12g}' for v in offset), rpy='0 0 0')
    if axis is not None:
        ET.SubElement(element, 'axis', xyz=axis)
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
