"""What a MoveIt configuration says about an arm, drawn from its arm file and its URDF.

MoveIt plans in the URDF's joints and executes through this package's servers, so every name
it is given must be one servo_driver and sim_arm know: the arm joints (the arm file's
``joint_names``, radians) and the gripper, the auxiliary servo the gripper actions drive, in
the unit joint_states publishes it in (PWM: the fraction of its pulse range, 0.0 at
``min_us``; bus: radians). The URDF is the one generated from the arm file, with the gripper
joint added below the tool link, or the vendor's own, checked to hold those joints.

The speed limits come from the arm file's ``servo_driver`` section where it gives
``max_speed_rad_s`` (and ``aux_max_speed``), else from servo_driver's defaults: MoveIt must not
plan faster than the driver follows, or the driver refuses the trajectory.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from typing import Any, Optional
from xml.etree import ElementTree as ET

from fabrik_ros.driver.aux_axis import aux_axes, AuxAxis, PulseAux
from fabrik_ros.kinematics import Arm, Joint
from fabrik_ros.kinematics.description.arm_file import WILDCARD
from fabrik_ros.kinematics.description.urdf_chain import urdf_chain
from fabrik_ros.kinematics.description.urdf_model import (
    parse_urdf,
    UrdfError,
    UrdfJointType,
    UrdfModel,
)
from fabrik_ros.kinematics.description.urdf_out import arm_urdf

# servo_driver's default for max_speed_rad_s, per joint [rad/s] (driver_node.py declares it;
# test/tools/test_moveit_config.py holds the two equal).
SERVO_DRIVER_MAX_SPEED_RAD_S = 1.5
DRIVER_NODE = 'servo_driver'
# The generated URDF's names (urdf_out's): its robot and its tool link.
GENERATED_ROBOT = 'fabrik_arm'
GENERATED_TOOL_LINK = 'tool_link'
# What --gripper takes to leave the gripper out (servo_driver's gripper_servo says the same).
NO_GRIPPER = 'none'
# The gripper joint of the generated URDF: nominal effort [N m], as urdf_out's joints.
_GRIPPER_EFFORT = 0.2


class MoveItConfigError(ValueError):
    """The arm (or its URDF) cannot be given to MoveIt as asked; the message says why."""


@dataclass(frozen=True)
class GripperJoint:
    """The auxiliary servo the gripper actions drive, as a URDF joint MoveIt plans for.

    :param low: lowest position, in ``unit``
    :param high: highest position, in ``unit``
    :param home: where the driver starts it, in ``unit``
    :param speed: fastest the driver moves it, ``unit`` per second
    """

    name: str
    low: float
    high: float
    home: float
    speed: float
    unit: str


@dataclass(frozen=True)
class MoveItRobot:
    """The arm as MoveIt sees it.

    :param urdf: the URDF text move_group and robot_state_publisher get
    :param joints: the arm joints, chain order (the arm file's)
    :param speeds_rad_s: the driver's speed limit of each joint [rad/s]
    :param adjacent: every (parent link, child link) pair a URDF joint connects
    """

    name: str
    urdf: str
    base_link: str
    tool_link: str
    joints: tuple[Joint, ...]
    speeds_rad_s: tuple[float, ...]
    gripper: Optional[GripperJoint]
    adjacent: tuple[tuple[str, str], ...]

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the arm joints' names, chain order."""
        return tuple(joint.name for joint in self.joints)


def moveit_robot(arm: Arm, document: Mapping[str, Any], *, gripper: Optional[str] = None,
                 vendor_urdf: Optional[str] = None,
                 tool_link: Optional[str] = None) -> MoveItRobot:
    """Return what MoveIt is to know of ``arm``.

    :param document: the arm file as parsed (its node sections give the driver's speeds)
    :param gripper: the auxiliary servo that is the gripper; None: the arm file's only one
        (none without auxiliary servos); ``'none'``: no gripper
    :param vendor_urdf: the vendor's URDF text instead of the one generated from ``arm``
    :param tool_link: the vendor URDF's tool link (needed with ``vendor_urdf``)
    :raises MoveItConfigError: naming the servo, joint, link or key and the rule
    """
    axis = _gripper_axis(arm, gripper)
    driver = _driver_parameters(document)
    speeds = _joint_speeds(driver, len(arm.joints))
    joint = None if axis is None else _gripper_joint(axis, driver)
    if vendor_urdf is None:
        text = generated_urdf(arm, joint)
        tool = GENERATED_TOOL_LINK
    else:
        if not tool_link:
            raise MoveItConfigError('--urdf needs --tool-link: the link at the end of the '
                                    "arm's chain that MoveIt's arm group ends at")
        text, tool = vendor_urdf, tool_link
    model = _parsed(text)
    if vendor_urdf is not None:
        _check_vendor(model, arm, tool, joint)
    adjacent = tuple((j.parent, j.child) for j in model.joints)
    return MoveItRobot(model.name, text, arm.base_frame, tool, arm.joints, speeds, joint,
                       adjacent)


def generated_urdf(arm: Arm, gripper: Optional[GripperJoint]) -> str:
    """Return urdf_out's URDF of ``arm`` with the gripper joint (if any) below the tool link.

    The gripper joint is revolute about the tool link's z, its limits the gripper's range in
    its own unit (for a PWM gripper the fraction of the pulse range: RViz turns the jaw link
    by that many radians, which only draws it).
    """
    text = arm_urdf(arm, name=GENERATED_ROBOT)
    if gripper is None:
        return text
    robot = ET.fromstring(text)
    link = f'{gripper.name}_link'
    element = ET.SubElement(robot, 'joint', name=gripper.name, type='revolute')
    ET.SubElement(element, 'parent', link=GENERATED_TOOL_LINK)
    ET.SubElement(element, 'child', link=link)
    ET.SubElement(element, 'origin', xyz='0 0 0', rpy='0 0 0')
    ET.SubElement(element, 'axis', xyz='0 0 1')
    ET.SubElement(element, 'limit', lower=f'{gripper.low:.12g}', upper=f'{gripper.high:.12g}',
                  effort=f'{_GRIPPER_EFFORT}', velocity=f'{gripper.speed:.12g}')
    ET.SubElement(robot, 'link', name=link)
    ET.indent(robot)
    return ET.tostring(robot, encoding='unicode', xml_declaration=True)


def _gripper_axis(arm: Arm, choice: Optional[str]) -> Optional[AuxAxis]:
    """Return the auxiliary servo that is the gripper, as servo_driver's gripper_servo picks it."""
    axes = {axis.name: axis for axis in aux_axes(arm.servo_map)}
    if choice == NO_GRIPPER:
        return None
    if choice:
        if choice not in axes:
            known = ', '.join(axes) or 'none'
            raise MoveItConfigError(f'--gripper {choice}: no auxiliary servo of that name in '
                                    f'the arm file (aux_servos: {known})')
        return axes[choice]
    if len(axes) > 1:
        raise MoveItConfigError(f'the arm file has {len(axes)} auxiliary servos '
                                f'({", ".join(axes)}): name the gripper with --gripper NAME '
                                f'(or --gripper {NO_GRIPPER})')
    return next(iter(axes.values()), None)


def _driver_parameters(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return the ``servo_driver`` section's parameters of the arm file ({} without one)."""
    for key, section in document.items():
        if key == WILDCARD or str(key).rsplit('/', 1)[-1] != DRIVER_NODE:
            continue
        parameters = section.get('ros__parameters') if isinstance(section, Mapping) else None
        if not isinstance(parameters, Mapping):
            raise MoveItConfigError(f'{key}: must hold ros__parameters: (a node section)')
        return parameters
    return {}


def _joint_speeds(driver: Mapping[str, Any], count: int) -> tuple[float, ...]:
    """Return max_speed_rad_s of the servo_driver section, else servo_driver's default."""
    value = driver.get('max_speed_rad_s')
    if value is None:
        return (SERVO_DRIVER_MAX_SPEED_RAD_S,) * count
    where = f'{DRIVER_NODE}.ros__parameters.max_speed_rad_s = {value!r}'
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != count:
        raise MoveItConfigError(f'{where}: must be a list of {count} speeds [rad/s], one per '
                                f'joint')
    if not all(_positive(item) for item in value):
        raise MoveItConfigError(f'{where}: every speed must be a finite number above 0')
    return tuple(float(item) for item in value)


def _gripper_joint(axis: AuxAxis, driver: Mapping[str, Any]) -> GripperJoint:
    """Return the gripper joint, its speed servo_driver's aux_max_speed (0: the axis default)."""
    value = driver.get('aux_max_speed', 0.0)
    if value != 0.0 and not _positive(value):
        raise MoveItConfigError(f'{DRIVER_NODE}.ros__parameters.aux_max_speed = {value!r}: '
                                f'must be a finite number, 0 or above')
    speed = float(value) or axis.default_speed
    unit = 'fraction of the pulse range' if isinstance(axis, PulseAux) else 'rad'
    return GripperJoint(axis.name, axis.low, axis.high, axis.home, speed, unit)


def _positive(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0)


def _parsed(text: str) -> UrdfModel:
    try:
        return parse_urdf(text)
    except UrdfError as error:
        raise MoveItConfigError(f'not a URDF: {error}') from None


def _check_vendor(model: UrdfModel, arm: Arm, tool_link: str,
                  gripper: Optional[GripperJoint]) -> None:
    """Refuse a vendor URDF whose chain or joints are not the arm file's."""
    try:
        chain = urdf_chain(model, tool_link=tool_link, base_link=arm.base_frame)
    except UrdfError as error:
        raise MoveItConfigError(f"{error} (the base link is the arm file's base_frame)") \
            from None
    movable = tuple(c.joint.name for c in chain.joints
                    if c.joint.type is not UrdfJointType.FIXED)
    if movable != arm.joint_names:
        raise MoveItConfigError(
            f'the movable joints from {arm.base_frame} to {tool_link} are '
            f'[{", ".join(movable)}], the arm file\'s joint_names [{", ".join(arm.joint_names)}]: '
            f'they must be the same, in order')
    if gripper is not None and gripper.name not in model.movable_joint_names:
        raise MoveItConfigError(
            f'the gripper {gripper.name} (aux_servos.{gripper.name}) is no movable joint of '
            f'the URDF; name the URDF joint as the auxiliary servo, or give --gripper '
            f'{NO_GRIPPER}')
