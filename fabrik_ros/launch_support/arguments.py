"""The launch files' arguments, checked all at once, and the plan of what to start.

launch/arm.launch.py and launch/sim.launch.py only declare :data:`ARM_ARGUMENTS` /
:data:`SIM_ARGUMENTS` and hand the values to :func:`plan_arm` / :func:`plan_sim` from one
OpaqueFunction (see :mod:`.actions`). A plan is made in full before any process starts, so a
bad argument (a value outside its choices, a config file that is missing or that rcl cannot
read, ``baud:=fast``, ``rviz:=true`` without rviz2, ``board:=simavr protocol:=ssc32``, a
``description:=`` URDF whose joints are not the arm file's) stops
the launch with one :class:`LaunchArgumentError` naming the argument, the value and what is
allowed, and leaves nothing running. Plain Python, without ROS 2's ``launch``, so every path
is unit-tested.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
import difflib
import os
from pathlib import Path
from typing import Union

import yaml

from fabrik_ros.boardsim import cli as boardsim_cli
from fabrik_ros.boardsim import simavr_board
from fabrik_ros.kinematics import Arm, load_arm
from fabrik_ros.kinematics.description.urdf_out import arm_urdf
from fabrik_ros.launch_support import description
from fabrik_ros.servo_io.protocols.dialect import OFFERED_PROTOCOLS

PACKAGE = 'fabrik_ros'
TRUE_FALSE = ('true', 'false')
TRUE_FALSE_AUTO = ('true', 'false', 'auto')
PROTOCOLS = tuple(p.value for p in OFFERED_PROTOCOLS)
BOARDS = boardsim_cli.BOARDS
# RViz's Publish Point and 2D Goal Pose tools publish here; the launched RViz sends them to
# the topics fabrik_ik follows instead.
RVIZ_TOOL_REMAPPINGS = (('/clicked_point', '/target_point'), ('/goal_pose', '/target_pose'))
# The Debian package that brings each optional viewer, for the error line.
_VIEWER_PACKAGES = {'rviz2': 'ros-$ROS_DISTRO-rviz2',
                    'robot_state_publisher': 'ros-$ROS_DISTRO-robot-state-publisher'}


class LaunchArgumentError(ValueError):
    """A launch argument's value cannot work; the message names it, its value and the rule."""


@dataclass(frozen=True)
class Argument:
    """One launch argument: its name, default, allowed values (empty: any) and meaning."""

    name: str
    default: str
    description: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Process:
    """One process to start: a ROS node (``node``) or a plain executable of ``package``.

    :param parameters: params files and dicts of parameter values, in order.
    :param arguments: command-line arguments (for a node: before --ros-args).
    :param required: when it ends, the whole launch ends (a simulated board).
    """

    package: str
    executable: str
    node: bool = True
    parameters: tuple[Union[str, dict], ...] = ()
    arguments: tuple[str, ...] = ()
    remappings: tuple[tuple[str, str], ...] = ()
    required: bool = False


@dataclass(frozen=True)
class Plan:
    """What a launch starts, and the lines it says first (why an optional part is left out)."""

    processes: tuple[Process, ...]
    notes: tuple[str, ...] = field(default=())


def _config_argument(share: Path) -> Argument:
    return Argument('config', str(share / 'config' / 'arm_4dof.yaml'),
                    'Arm parameter file (ROS 2 YAML) read by every node')


def _viewer_arguments(rviz_default: str) -> tuple[Argument, ...]:
    return (
        Argument('rviz', rviz_default,
                 'Start rviz2 with config/rviz/fabrik.rviz (auto: when installed)',
                 TRUE_FALSE_AUTO),
        Argument('robot_state_publisher', 'auto',
                 'Start robot_state_publisher with the URDF of description:= (auto: when '
                 'installed)', TRUE_FALSE_AUTO),
        Argument(description.ARGUMENT, '',
                 "The arm's own URDF file (the vendor's, xacro expanded) for "
                 'robot_state_publisher and so RViz, its movable joints named as the '
                 "arm file's joints and auxiliary servos; empty: the URDF generated from the "
                 'arm file'),
    )


def arm_arguments(share: Path) -> tuple[Argument, ...]:
    """Return the arguments of arm.launch.py (``share``: the package's share folder)."""
    return (
        _config_argument(share),
        Argument('port', '/dev/ttyUSB0',
                 'Serial port of the servo board; a /dev/serial/by-id/ path survives '
                 'replugging'),
        Argument('baud', '115200',
                 'Serial speed [bit/s]: 115200 for the fabrik_ros firmware, as set on the board '
                 'for SSC-32U and Maestro'),
        Argument('protocol', 'native',
                 'Board protocol: native = fabrik_ros firmware (hardware/PROTOCOL.md), ssc32 = '
                 'Lynxmotion SSC-32U, maestro = Pololu Maestro', PROTOCOLS),
        *_viewer_arguments('false'),
    )


def sim_arguments(share: Path) -> tuple[Argument, ...]:
    """Return the arguments of sim.launch.py (``share``: the package's share folder)."""
    return (
        _config_argument(share),
        Argument('sim_device', 'false',
                 'true: servo_driver on a simulated servo board; false: sim_arm', TRUE_FALSE),
        Argument('board', 'python',
                 'With sim_device:=true, the simulated board: python = fabrik_ros.boardsim on '
                 'a pseudo-terminal; simavr = the Uno firmware in the simavr simulator '
                 '(protocol:=native only)', BOARDS),
        Argument('protocol', 'native',
                 'With sim_device:=true, the protocol board and driver speak', PROTOCOLS),
        Argument('link', '/tmp/fabrik_ros_sim_board',
                 "With sim_device:=true, the symlink to the simulated board's pty"),
        *_viewer_arguments('auto'),
    )


# Each launch file of the package and its arguments, to tell a name meant for the other file.
LAUNCH_FILES: dict[str, Callable[[Path], tuple[Argument, ...]]] = {
    'arm.launch.py': arm_arguments, 'sim.launch.py': sim_arguments}


def check_given_names(given: Iterable[str], launch_file: str, share: Path) -> None:
    """Refuse a given argument name that ``launch_file`` does not declare but surely meant.

    Launch ignores a name nobody declared, so ``confg:=my_arm.yaml`` would drive the arm with
    the default arm file. Refused: the other launch file's arguments and near misses of this
    file's; other names are left alone, as a launch file that includes this one may own them.

    :raises LaunchArgumentError: naming the argument and what this launch file takes.
    """
    declared = [argument.name for argument in LAUNCH_FILES[launch_file](share)]
    takes = f'{launch_file} takes {", ".join(f"{name}:=" for name in declared)}'
    for name in sorted(set(given) - set(declared)):
        owner = next((other for other, arguments in LAUNCH_FILES.items()
                      if other != launch_file
                      and name in (argument.name for argument in arguments(share))), '')
        if owner:
            raise LaunchArgumentError(f'{name}:= is an argument of {owner}, not of '
                                      f'{launch_file}; {takes}')
        close = difflib.get_close_matches(name, declared, n=1, cutoff=0.75)
        if close:
            raise LaunchArgumentError(f'{name}:= is no argument of {launch_file}: did you '
                                      f'mean {close[0]}:=? {takes}')


def plan_arm(values: Mapping[str, str], *, share: Path,
             installed: Callable[[str], bool]) -> Plan:
    """Check arm.launch.py's arguments; return fabrik_ik + servo_driver + viewers.

    :param installed: whether a ROS package is installed (for the optional viewers).
    :raises LaunchArgumentError: for the first argument that cannot work.
    """
    _check_choices(values, arm_arguments(share))
    config = _checked_config(values['config'])
    urdf = _checked_description(values, load_arm(config))
    if not values['port']:
        raise LaunchArgumentError('port:= is empty; name the serial device of the board, e.g. '
                                  'port:=/dev/ttyUSB0')
    baud = _checked_baud(values['baud'])
    viewers, notes = _viewers(values, urdf, share, installed)
    driver = Process(PACKAGE, 'servo_driver', parameters=(
        config, {'port': values['port'], 'baud': baud, 'protocol': values['protocol']}))
    return Plan((_ik(config), driver, *viewers), notes)


def simavr_ready() -> None:
    """Check that board:=simavr can build and run the firmware here, before anything starts.

    :raises LaunchArgumentError: saying what to install or set.
    """
    try:
        boardsim_cli.locate_hardware()
    except boardsim_cli.SetupError as error:
        raise LaunchArgumentError(f'board:=simavr: {error}') from None
    missing = simavr_board.missing_prerequisites()
    if missing:
        raise LaunchArgumentError(
            f'board:=simavr needs {", ".join(missing)} to build and simulate the firmware; on '
            f'Debian/Ubuntu: sudo apt-get install make gcc gcc-avr avr-libc simavr '
            f'libsimavr-dev libelf-dev (or use board:=python)')


def plan_sim(values: Mapping[str, str], *, share: Path, installed: Callable[[str], bool],
             simavr_check: Callable[[], None] = simavr_ready) -> Plan:
    """Check sim.launch.py's arguments; return fabrik_ik + (sim_arm | board + driver) + viewers.

    :param installed: whether a ROS package is installed (for the optional viewers).
    :param simavr_check: raises :class:`LaunchArgumentError` if board:=simavr cannot run here.
    :raises LaunchArgumentError: for the first argument that cannot work.
    """
    _check_choices(values, sim_arguments(share))
    config = _checked_config(values['config'])
    urdf = _checked_description(values, load_arm(config))
    board, protocol, link = values['board'], values['protocol'], values['link']
    if values['sim_device'] == 'false':
        for name, default in (('board', 'python'), ('protocol', 'native')):
            if values[name] != default:
                raise LaunchArgumentError(
                    f'{name}:={values[name]} needs sim_device:=true (without it sim_arm '
                    f'stands in for driver and board)')
        arm: tuple[Process, ...] = (Process(PACKAGE, 'sim_arm', parameters=(config,)),)
    else:
        if board == 'simavr':
            if protocol != 'native':
                raise LaunchArgumentError(
                    f'board:=simavr runs the fabrik_ros firmware, which speaks the native '
                    f'protocol only; protocol:={protocol} needs board:=python')
            simavr_check()
        _check_link(link)
        arm = (Process(PACKAGE, 'sim_device', node=False, required=True,
                       arguments=('--board', board, '--protocol', protocol, '--link', link)),
               Process(PACKAGE, 'servo_driver',
                       parameters=(config, {'port': link, 'protocol': protocol})))
    viewers, notes = _viewers(values, urdf, share, installed)
    return Plan((_ik(config), *arm, *viewers), notes)


def defaults(arguments: tuple[Argument, ...], **given: str) -> dict[str, str]:
    """Return every argument's value as launch would: ``given`` where set, else the default."""
    unknown = set(given) - {a.name for a in arguments}
    if unknown:
        raise LaunchArgumentError(f'unknown launch arguments {sorted(unknown)}')
    return {a.name: given.get(a.name, a.default) for a in arguments}


def _ik(config: str) -> Process:
    return Process(PACKAGE, 'fabrik_ik', parameters=(config, {'follow_rviz_tools': True}))


def _check_choices(values: Mapping[str, str], arguments: tuple[Argument, ...]) -> None:
    for argument in arguments:
        value = values[argument.name]
        if argument.choices and value not in argument.choices:
            raise LaunchArgumentError(f'{argument.name}:={value} is not one of '
                                      f'{"|".join(argument.choices)}')


def _checked_config(path: str) -> str:
    """Return ``path`` once it names an arm file that rcl can read and that loads.

    rcl refuses a list that mixes integers and floats (``[-1, 0.098]``) with a 17-line
    traceback per node; said here once, before any node starts.
    """
    if not os.path.isfile(path):
        raise LaunchArgumentError(f'config:={path}: no such file; name an arm parameter file, '
                                  f'e.g. the shipped config/arm_4dof.yaml')
    try:
        with open(path, encoding='utf-8') as stream:
            document = yaml.safe_load(stream)
    except (OSError, yaml.YAMLError) as error:
        raise LaunchArgumentError(f'config:={path}: not readable YAML: '
                                  f'{" ".join(str(error).split())}') from None
    mixed = _mixed_number_list(document, '')
    if mixed:
        raise LaunchArgumentError(
            f'config:={path}: {mixed} mixes integers and floats, which ROS parameters refuse; '
            f'write every number of a float list with a decimal point (-1.0, not -1)')
    try:
        load_arm(path)
    except ValueError as error:
        raise LaunchArgumentError(f'config:={path}: {error}') from None
    return path


def _mixed_number_list(value: object, key: str) -> str:
    """Return ``key: value`` of the first list holding both ints and floats, else ''."""
    if isinstance(value, dict):
        for name, item in value.items():
            found = _mixed_number_list(item, f'{key}.{name}' if key else str(name))
            if found:
                return found
    elif isinstance(value, list):
        kinds = {type(item) for item in value if not isinstance(item, bool)}
        if {int, float} <= kinds:
            return f'{key}: {value}'
    return ''


def _checked_baud(text: str) -> int:
    try:
        baud = int(text)
    except ValueError:
        baud = 0
    if baud <= 0:
        raise LaunchArgumentError(f'baud:={text} is not a positive whole number of bit/s '
                                  f'(e.g. baud:=115200)')
    return baud


def _checked_description(values: Mapping[str, str], arm: Arm) -> str:
    """Return the URDF robot_state_publisher is to get: description:='s file, else ``arm``'s."""
    path = values[description.ARGUMENT]
    if not path:
        return arm_urdf(arm)
    if values['robot_state_publisher'] == 'false':
        raise LaunchArgumentError(f'{description.ARGUMENT}:={path} needs robot_state_publisher '
                                  f'(true or auto): with robot_state_publisher:=false no '
                                  f'one shows it')
    try:
        return description.vendor_urdf(path, arm)
    except description.DescriptionError as error:
        raise LaunchArgumentError(str(error)) from None


def _check_link(link: str) -> None:
    if not link:
        raise LaunchArgumentError('link:= is empty; name the path of the symlink to the '
                                  "simulated board's pty, e.g. link:=/tmp/fabrik_ros_sim_board")
    if not os.path.isdir(os.path.dirname(os.path.abspath(link))):
        raise LaunchArgumentError(f'link:={link}: its folder does not exist')
    if os.path.lexists(link) and not os.path.islink(link):
        raise LaunchArgumentError(f'link:={link} exists and is not a symlink; it is never '
                                  f'replaced: choose a free path')


def _viewers(values: Mapping[str, str], urdf: str, share: Path,
             installed: Callable[[str], bool]) -> tuple[tuple[Process, ...], tuple[str, ...]]:
    """Return robot_state_publisher (with ``urdf``) and rviz2 as asked, a note for each not."""
    processes, notes = [], []
    for argument in ('robot_state_publisher', 'rviz'):
        package = 'rviz2' if argument == 'rviz' else argument
        value = values[argument]
        if value == 'false':
            continue
        if not installed(package):
            if value == 'true':
                raise LaunchArgumentError(
                    f'{argument}:=true but {package} is not installed (on a ROS 2 desktop: '
                    f'apt-get install {_VIEWER_PACKAGES[package]}); use {argument}:=auto or '
                    f'{argument}:=false to go on without it')
            notes.append(f'{package} is not installed: not started ({argument}:=auto)')
            continue
        if package == 'robot_state_publisher':
            processes.append(Process(package, package,
                                     parameters=({'robot_description': urdf},)))
        else:
            rviz_config = str(share / 'config' / 'rviz' / 'fabrik.rviz')
            processes.append(Process(package, package, arguments=('-d', rviz_config),
                                     remappings=RVIZ_TOOL_REMAPPINGS))
    return tuple(processes), tuple(notes)
