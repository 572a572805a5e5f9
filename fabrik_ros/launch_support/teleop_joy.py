"""``teleop:=joy``: a gamepad drives the arm; what the launch files start for it.

joy's ``joy_node`` reads the pad; teleop_twist_joy's ``teleop_node`` turns its sticks into
``geometry_msgs/TwistStamped`` on ``jog/twist`` (``cmd_vel`` remapped; ``publish_stamped_twist``
and ``frame``, the arm file's base frame, set here whatever the file says), which fabrik_ik
jogs the tool by; gripper_buttons turns two buttons into gripper goals. All three take
``joy_config:=`` (config/teleop/joy.yaml: an Xbox pad's layout), each its own section. joy and
teleop_twist_joy are optional ROS packages (C++, not on PyPI): where one is not installed the
launch says so in one line and goes on, as for RViz. An arm without a gripper starts no
gripper_buttons, said the same way. Everything runs in the launch's namespace, so the relative
``joy`` and ``jog/twist`` follow ``namespace:=``.
"""

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from fabrik_ros.driver.gripper_drive import AmbiguousGripperError, gripper_axis
from fabrik_ros.kinematics import Arm
from fabrik_ros.launch_support.errors import LaunchArgumentError
from fabrik_ros.launch_support.node_params import NodeValues, read_mapping

if TYPE_CHECKING:       # arguments imports this module: its types are read at call time
    from fabrik_ros.launch_support.arguments import Argument, Process

ARGUMENT = 'teleop'
CONFIG_ARGUMENT = 'joy_config'
CHOICES = ('none', 'joy')
GRIPPER_NODE = 'gripper_buttons'
# The optional packages, their executable and the Debian package that brings each.
PACKAGES = (('joy', 'joy_node', 'ros-$ROS_DISTRO-joy'),
            ('teleop_twist_joy', 'teleop_node', 'ros-$ROS_DISTRO-teleop-twist-joy'))
TWIST_TOPIC = 'jog/twist'


def arguments(share: Path) -> tuple['Argument', ...]:
    """Return the two arguments both launch files take for it."""
    from fabrik_ros.launch_support.arguments import Argument
    return (
        Argument(ARGUMENT, 'none',
                 'joy: drive the tool from a gamepad: joy_node + teleop_twist_joy (jog/twist, '
                 'where installed) + gripper_buttons (where the arm has a gripper); none: no',
                 CHOICES),
        Argument(CONFIG_ARGUMENT, str(share / 'config' / 'teleop' / 'joy.yaml'),
                 'With teleop:=joy, the parameter file of joy_node, teleop_twist_joy_node and '
                 'gripper_buttons (the shipped one maps an Xbox pad)'),
    )


def started_nodes(values: Mapping[str, str]) -> tuple[str, ...]:
    """Return the fabrik_ros nodes teleop:= may start (their sections of params_file:=)."""
    return (GRIPPER_NODE,) if values[ARGUMENT] == 'joy' else ()


def processes(values: Mapping[str, str], *, arm: Arm, config: str,
              installed: Callable[[str], bool], given: NodeValues
              ) -> tuple[tuple['Process', ...], tuple[str, ...]]:
    """Return what teleop:= starts, and a line for each part left out.

    :param arm: the arm of ``config`` (its base frame, its gripper)
    :param config: the arm file, which gripper_buttons reads as every node
    :param installed: whether a ROS package is installed
    :param given: each fabrik_ros node's parameters from config:= and params_file:=
    :raises LaunchArgumentError: for a joy_config:= that is no readable parameter file, or a
        gripper_servo that names no auxiliary servo
    """
    from fabrik_ros.launch_support.arguments import PACKAGE, Process
    if values[ARGUMENT] != 'joy':
        return (), ()
    joy_config = values[CONFIG_ARGUMENT]
    read_mapping(joy_config, f'{CONFIG_ARGUMENT}:={joy_config}')
    started: list[Process] = []
    notes: list[str] = []
    for package, executable, debian in PACKAGES:
        if not installed(package):
            notes.append(f'{package} is not installed: not started (teleop:=joy; on a ROS 2 '
                         f'install: apt-get install {debian})')
        elif package == 'joy':
            started.append(Process(package, executable, parameters=(joy_config,)))
        else:
            started.append(Process(
                package, executable, parameters=(
                    joy_config, {'publish_stamped_twist': True, 'frame': arm.base_frame}),
                remappings=(('cmd_vel', TWIST_TOPIC),)))
    own = given.get(GRIPPER_NODE, {})
    note = _no_gripper(arm, str(own.get('gripper_servo', '')), config)
    if note:
        notes.append(note)
    else:
        started.append(Process(PACKAGE, GRIPPER_NODE, parameters=(
            config, joy_config, *((own,) if own else ()))))
    return tuple(started), tuple(notes)


def _no_gripper(arm: Arm, servo: str, config: str) -> str:
    """Return why gripper_buttons does not start ('' when it does)."""
    try:
        axis = gripper_axis(arm, servo)
    except AmbiguousGripperError as error:
        return (f'{GRIPPER_NODE} not started: {error} (gripper_servo, in its section '
                'of params_file:=)')
    except ValueError as error:
        raise LaunchArgumentError(f'{GRIPPER_NODE}: gripper_servo = {servo!r} {error}') from None
    if axis is None:
        return (f'the arm has no gripper (no aux_servos in config:={config}): '
                f'{GRIPPER_NODE} not started (teleop:=joy)')
    return ''
