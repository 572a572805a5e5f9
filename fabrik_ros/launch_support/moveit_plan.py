"""The plan of a MoveIt configuration's launch file: move_group, its RViz, and the arm's launch.

``moveit_config_from_arm`` writes a folder whose ``launch/moveit.launch.py`` hands its own
folder to :func:`plan_moveit`: it loads the configuration files as move_group takes them (the
layout moveit_configs_utils gives a MoveIt config package), and includes this package's
arm.launch.py or sim.launch.py (``bringup:=arm|sim``) with the folder's arm file and URDF, so
robot_state_publisher, move_group and RViz share one URDF. Every other argument given is
handed to that launch file, which checks it; one it does not take (or a launch argument this
launch sets itself) stops the launch here with one line. Plain Python, without ``launch``.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fabrik_ros.launch_support.arguments import (
    Argument,
    LAUNCH_FILES,
    ROS2_LAUNCH_NAMES,
    TRUE_FALSE_AUTO,
)
from fabrik_ros.launch_support.errors import LaunchArgumentError

# The files of a configuration folder, under config/ (launch/moveit.launch.py beside).
ARM_FILE = 'arm.yaml'
URDF_FILE = 'robot.urdf'
SRDF_FILE = 'robot.srdf'
KINEMATICS_FILE = 'kinematics.yaml'
JOINT_LIMITS_FILE = 'joint_limits.yaml'
CONTROLLERS_FILE = 'moveit_controllers.yaml'
OMPL_FILE = 'ompl_planning.yaml'
RVIZ_FILE = 'moveit.rviz'
CONFIG_FILES = (ARM_FILE, URDF_FILE, SRDF_FILE, KINEMATICS_FILE, JOINT_LIMITS_FILE,
                CONTROLLERS_FILE, OMPL_FILE, RVIZ_FILE)
LAUNCH_FILE = 'moveit.launch.py'
PIPELINE = 'ompl'
MOVE_GROUP_PACKAGE = 'moveit_ros_move_group'
BRINGUPS = {'sim': 'sim.launch.py', 'arm': 'arm.launch.py'}
# The arguments of the arm's launch file this launch sets itself.
SET_HERE = ('config', 'description', 'rviz', 'namespace')
MAX_FILE_BYTES = 4_000_000

ARGUMENTS = (
    Argument('bringup', 'sim', 'The arm under MoveIt: sim = sim.launch.py (sim_arm; '
             'sim_device:=true for servo_driver on a simulated board), arm = arm.launch.py '
             '(servo_driver on the board at port:=); their other arguments pass through',
             tuple(BRINGUPS)),
    Argument('rviz', 'auto', 'Start rviz2 with the MotionPlanning display (auto: when '
             'installed)', TRUE_FALSE_AUTO),
)


@dataclass(frozen=True)
class MoveItPlan:
    """What the launch starts: the arm's launch file and its arguments, move_group, RViz.

    :param rviz: whether to start rviz2 (with ``rviz_config``), given the MoveIt parameters
    """

    launch_file: Path
    launch_arguments: dict[str, str]
    move_group: dict[str, Any]
    rviz: bool
    rviz_config: Path


def plan_moveit(folder: Path, given: Mapping[str, str], *, share: Path,
                installed: Callable[[str], bool]) -> MoveItPlan:
    """Check the arguments and the folder; return the plan.

    :param folder: the configuration folder (holding config/ and launch/)
    :param given: every launch configuration set (the declared ones with their defaults)
    :param share: this package's share folder (its launch/ and config/)
    :param installed: whether a ROS package is installed
    :raises LaunchArgumentError: one line naming the argument or file and the rule
    """
    bringup = given.get('bringup', ARGUMENTS[0].default)
    if bringup not in BRINGUPS:
        raise LaunchArgumentError(f'bringup:={bringup} is not one of {"|".join(BRINGUPS)}')
    launch_file = BRINGUPS[bringup]
    passed = _passed(given, launch_file, share)
    config = folder / 'config'
    arguments = {'config': str(config / ARM_FILE), 'rviz': 'false', **passed}
    if passed.get('robot_state_publisher') != 'false':
        arguments['description'] = str(config / URDF_FILE)
    if not installed(MOVE_GROUP_PACKAGE):
        raise LaunchArgumentError(f'{MOVE_GROUP_PACKAGE} is not installed: install MoveIt 2 '
                                  f'(apt-get install ros-$ROS_DISTRO-moveit)')
    rviz = _rviz(given.get('rviz', ARGUMENTS[1].default), installed)
    return MoveItPlan(share / 'launch' / launch_file, arguments, move_group_parameters(config),
                      rviz, config / RVIZ_FILE)


def move_group_parameters(config: Path) -> dict[str, Any]:
    """Return move_group's parameters from the files in ``config`` (nested; launch_ros flattens).

    :raises LaunchArgumentError: for a file that is missing or not what it should be
    """
    return {
        'robot_description': _text(config / URDF_FILE),
        'robot_description_semantic': _text(config / SRDF_FILE),
        'robot_description_kinematics': _mapping(config / KINEMATICS_FILE),
        'robot_description_planning': _mapping(config / JOINT_LIMITS_FILE),
        'planning_pipelines': [PIPELINE],
        'default_planning_pipeline': PIPELINE,
        PIPELINE: _mapping(config / OMPL_FILE),
        **_mapping(config / CONTROLLERS_FILE),
        'publish_planning_scene': True,
        'publish_geometry_updates': True,
        'publish_state_updates': True,
        'publish_transforms_updates': True,
    }


def rviz_parameters(move_group: Mapping[str, Any]) -> dict[str, Any]:
    """Return what the MotionPlanning display reads: the robot, its groups, IK and limits."""
    names = ('robot_description', 'robot_description_semantic',
             'robot_description_kinematics', 'robot_description_planning')
    return {name: move_group[name] for name in names}


def _passed(given: Mapping[str, str], launch_file: str, share: Path) -> dict[str, str]:
    """Return the given arguments meant for ``launch_file``; refuse the others."""
    own = {argument.name for argument in ARGUMENTS}
    takes = {argument.name for argument in LAUNCH_FILES[launch_file](share)}
    passed = {}
    for name, value in given.items():
        if name in own or name in ROS2_LAUNCH_NAMES:
            continue
        if name in SET_HERE:
            raise LaunchArgumentError(
                f'{name}:= is set by this MoveIt launch (the arm file and URDF of its folder, '
                f"MoveIt's RViz, the root namespace): regenerate the folder with "
                f'moveit_config_from_arm for another arm file or URDF')
        if name not in takes:
            others = [other for other, file in BRINGUPS.items() if file != launch_file
                      and name in {a.name for a in LAUNCH_FILES[file](share)}]
            hint = f' (an argument of bringup:={others[0]})' if others else ''
            raise LaunchArgumentError(
                f'{name}:= is no argument of this launch nor of {launch_file}{hint}; it takes '
                f'{", ".join(f"{a}:=" for a in sorted(own | takes - set(SET_HERE)))}')
        passed[name] = value
    return passed


def _rviz(value: str, installed: Callable[[str], bool]) -> bool:
    if value not in TRUE_FALSE_AUTO:
        raise LaunchArgumentError(f'rviz:={value} is not one of {"|".join(TRUE_FALSE_AUTO)}')
    if value == 'false':
        return False
    if installed('rviz2'):
        return True
    if value == 'true':
        raise LaunchArgumentError('rviz:=true but rviz2 is not installed (apt-get install '
                                  'ros-$ROS_DISTRO-rviz2); use rviz:=auto or rviz:=false')
    return False


def _text(path: Path) -> str:
    try:
        with path.open(encoding='utf-8') as stream:
            text = stream.read(MAX_FILE_BYTES + 1)
    except (OSError, UnicodeDecodeError) as error:
        raise LaunchArgumentError(f'{path}: cannot be read ({error}); regenerate the folder '
                                  f'with moveit_config_from_arm') from None
    if len(text) > MAX_FILE_BYTES:
        raise LaunchArgumentError(f'{path}: longer than {MAX_FILE_BYTES} characters')
    return text


def _mapping(path: Path) -> dict[str, Any]:
    try:
        content = yaml.safe_load(_text(path))
    except yaml.YAMLError as error:
        raise LaunchArgumentError(f'{path}: not YAML: {" ".join(str(error).split())}') from None
    if not isinstance(content, dict):
        raise LaunchArgumentError(f'{path}: must hold a mapping')
    return content
