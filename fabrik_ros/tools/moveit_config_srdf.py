"""The SRDF of an arm: its planning groups, its home state, the collisions MoveIt may skip.

- group ``arm``: the chain from the base frame to the tool link (every joint on the way,
  which are the arm file's joints and fixed ones);
- group ``gripper`` (one joint, the gripper servo's) and an end effector on the tool link,
  where the arm has a gripper;
- group_state ``home`` of each group: the arm file's home pose (``home_deg``; the gripper's
  ``home_us`` or ``home_deg``), where servo_driver starts the arm;
- disable_collisions, reason Adjacent, for the two links of every URDF joint: they touch by
  construction.
"""

from xml.etree import ElementTree as ET

from fabrik_ros.tools.moveit_config_robot import MoveItRobot

ARM_GROUP = 'arm'
GRIPPER_GROUP = 'gripper'
END_EFFECTOR = 'gripper'
HOME_STATE = 'home'


def srdf_text(robot: MoveItRobot) -> str:
    """Return the SRDF document of ``robot``."""
    root = ET.Element('robot', name=robot.name)
    group = ET.SubElement(root, 'group', name=ARM_GROUP)
    ET.SubElement(group, 'chain', base_link=robot.base_link, tip_link=robot.tool_link)
    gripper = robot.gripper
    if gripper is not None:
        group = ET.SubElement(root, 'group', name=GRIPPER_GROUP)
        ET.SubElement(group, 'joint', name=gripper.name)
    _state(root, ARM_GROUP, [(joint.name, joint.home_rad) for joint in robot.joints])
    if gripper is not None:
        _state(root, GRIPPER_GROUP, [(gripper.name, gripper.home)])
        ET.SubElement(root, 'end_effector', name=END_EFFECTOR, parent_link=robot.tool_link,
                      group=GRIPPER_GROUP, parent_group=ARM_GROUP)
    for parent, child in robot.adjacent:
        ET.SubElement(root, 'disable_collisions', link1=parent, link2=child, reason='Adjacent')
    ET.indent(root)
    return ET.tostring(root, encoding='unicode', xml_declaration=True) + '\n'


def _state(root: ET.Element, group: str, values: list[tuple[str, float]]) -> None:
    """Append the ``home`` group_state of ``group``."""
    state = ET.SubElement(root, 'group_state', name=HOME_STATE, group=group)
    for name, value in values:
        ET.SubElement(state, 'joint', name=name, value=f'{value:.12g}')
