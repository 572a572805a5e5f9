"""The launch files' arguments, checked all at once, and the plan of what to start.

launch/arm.launch.py and launch/sim.launch.py only declare :data:`ARM_ARGUMENTS` /
:data:`SIM_ARGUMENTS` and hand the values to :func:`plan_arm` / :func:`plan_sim` from one
OpaqueFunction (see :mod:`.actions`). A plan is made in full before any process starts, so a
bad argument (a value outside its choices, a config file that is missing or that rcl cannot
read, ``baud:=fast``, ``rviz:=true`` without rviz2, ``board:=simavr protocol:=ssc32``, a
``description:=`` URDF whose joints are not the arm file's, a ``namespace:=`` that is no ROS
name, a ``params_file:=`` section or parameter no node has, a ``link:=`` a live simulated
board owns) stops the launch with one :class:`LaunchArgumentError` naming the argument, the
value and what is allowed, and leaves nothing running. Plain Python, without ROS 2's
``launch``, so every path is unit-tested.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
import difflib
import os
from pathlib import Path
from typing import Optional, Union

import yaml

from fabrik_ros.boardsim import cli as boardsim_cli
from fabrik_ros.boardsim import simavr_board
from fabrik_ros.boardsim.link_claim import link_owner
from fabrik_ros.kinematics import Arm, load_arm
from fabrik_ros.kinematics.description.arm_keys import closest
from fabrik_ros.kinematics.description.urdf_out import arm_urdf
from fabrik_ros.launch_support import description, namespace, node_params, teleop_joy
from fabrik_ros.launch_support.errors import LaunchArgumentError
from fabrik_ros.servo_io.protocols.dialect import OFFERED_PROTOCOLS, Protocol

PACKAGE = 'fabrik_ros'
TRUE_FALSE = ('true', 'false')
TRUE_FALSE_AUTO = ('true', 'false', 'auto')
PROTOCOLS = tuple(p.value for p in OFFERED_PROTOCOLS)
BOARDS = boardsim_cli.BOARDS
# Names `ros2 launch` itself adds to the launch arguments (its --launch-prefix options).
ROS2_LAUNCH_NAMES = ('launch-prefix', 'launch-prefix-filter')
# The Debian package that brings each optional viewer, for the error line.
_VIEWER_PACKAGES = {'rviz2': 'ros-$ROS_DISTRO-rviz2',
                    'robot_state_publisher': 'ros-$ROS_DISTRO-robot-state-publisher'}


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
    """What a launch starts, and the lines it says first (why an optional part is left out).

    :param namespace: where every node runs ('' = the root namespace, else absolute).
    """

    processes: tuple[Process, ...]
    notes: tuple[str, ...] = field(default=())
    namespace: str = ''


def _config_argument(share: Path) -> Argument:
    return Argument('config', str(share / 'config' / 'arm_4dof.yaml'),
                    'Arm parameter file (ROS 2 YAML) read by every node')


def _node_arguments() -> tuple[Argument, ...]:
    return (
        Argument(namespace.ARGUMENT, '',
                 'ROS namespace of every node, topic and service of this arm (e.g. left); '
                 '/diagnostics stays global, its statuses named <namespace>/<node>'),
        Argument(node_params.ARGUMENT, '',
                 'File of node parameters, one section per node (fabrik_ik: ros__parameters: '
                 'use_pose_orientation: true); checked against what each node declares'),
    )


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
        *_node_arguments(),
        Argument('port', '/dev/ttyUSB0',
                 'Serial port of the servo board; a /dev/serial/by-id/ path survives '
                 'replugging'),
        Argument('baud', '0',
                 "Serial speed [bit/s]; 0 = the protocol's default: 115200 for the fabrik_ros "
                 'firmware, 1000000 for bus servos; as set on the board for SSC-32U and Maestro'),
        Argument('protocol', 'native',
                 'Board protocol: native = fabrik_ros firmware (hardware/PROTOCOL.md), ssc32 = '
                 'Lynxmotion SSC-32U, maestro = Pololu Maestro', PROTOCOLS),
        *_viewer_arguments('false'),
        *teleop_joy.arguments(share),
    )


def sim_arguments(share: Path) -> tuple[Argument, ...]:
    """Return the arguments of sim.launch.py (``share``: the package's share folder)."""
    return (
        _config_argument(share),
        *_node_arguments(),
        Argument('sim_device', 'false',
                 'true: servo_driver on a simulated servo board; false: sim_arm', TRUE_FALSE),
        Argument('board', 'python',
                 'With sim_device:=true, the simulated board: python = fabrik_ros.boardsim on '
                 'a pseudo-terminal; simavr = the Uno firmware in the simavr simulator '
                 '(protocol:=native only)', BOARDS),
        Argument('protocol', 'native',
                 'With sim_device:=true, the protocol board and driver speak', PROTOCOLS),
        Argument('link', '',
                 "With sim_device:=true, the symlink to the simulated board's pty (empty: "
                 f'{namespace.DEFAULT_LINK}, + _<namespace> under a namespace); refused while '
                 'a live simulated board owns it'),
        Argument('sim_object', '',
                 "With sim_device:=true and a bus protocol, ID:COUNT: an object in servo ID's "
                 'way at position COUNT (a gripper closing on something stops there and '
                 'stalls); empty: none'),
        *_viewer_arguments('auto'),
        *teleop_joy.arguments(share),
    )


# Each launch file of the package and its arguments, to tell a name meant for the other file.
def _teleop_arguments(share: Path) -> tuple[Argument, ...]:
    """Return teleop.launch.py's arguments (its plan, teleop_plan, imports this module)."""
    from fabrik_ros.launch_support.teleop_plan import teleop_arguments
    return teleop_arguments(share)


LAUNCH_FILES: dict[str, Callable[[Path], tuple[Argument, ...]]] = {
    'arm.launch.py': arm_arguments, 'sim.launch.py': sim_arguments,
    'teleop.launch.py': _teleop_arguments}


def check_given_names(given: Iterable[str], launch_file: str, share: Path, *,
                      top_level: bool = False) -> None:
    """Refuse a given argument name that ``launch_file`` does not declare.

    Launch ignores a name nobody declared, so ``protocl:=ssc32`` would drive the board with
    the default protocol. Run by ``ros2 launch`` itself (``top_level``), every name given is
    meant for this file: any other is refused, naming the closest. Included by a launch file
    of the robot's, the names include the parent's own: then only the other launch file's
    arguments and near misses of this file's are refused.

    :raises LaunchArgumentError: naming the argument, the closest one and what this launch
        file takes.
    """
    declared = [argument.name for argument in LAUNCH_FILES[launch_file](share)]
    takes = f'{launch_file} takes {", ".join(f"{name}:=" for name in declared)}'
    for name in sorted(set(given) - set(declared) - set(ROS2_LAUNCH_NAMES)):
        owner = next((other for other, arguments in LAUNCH_FILES.items()
                      if other != launch_file
                      and name in (argument.name for argument in arguments(share))), '')
        if owner:
            raise LaunchArgumentError(f'{name}:= is an argument of {owner}, not of '
                                      f'{launch_file}; {takes}')
        close = difflib.get_close_matches(name, declared, n=1, cutoff=0.75)
        if close or top_level:
            meant = close[0] if close else closest(name, declared)
            raise LaunchArgumentError(f'{name}:= is no argument of {launch_file}: did you '
                                      f'mean {meant}:=? {takes}')


def launched_directly(argv: Iterable[str], launch_file: str, path: Path) -> bool:
    """Return whether ``argv`` is ``ros2 launch`` run on this launch file (not a parent).

    >>> launched_directly(['/opt/bin/ros2', 'launch', 'fabrik_ros', 'sim.launch.py', 'a:=b'],
    ...                   'sim.launch.py', Path('/share/fabrik_ros/launch/sim.launch.py'))
    True
    >>> launched_directly(['ros2', 'launch', 'my_robot', 'sim.launch.py'], 'sim.launch.py',
    ...                   Path('/share/fabrik_ros/launch/sim.launch.py'))
    False
    """
    words = list(argv)
    if len(words) < 2 or Path(words[0]).name != 'ros2' or words[1] != 'launch':
        return False
    words = [word for word in words[2:] if ':=' not in word and not word.startswith('-')]
    named = any(package == PACKAGE and name == launch_file
                for package, name in zip(words, words[1:], strict=False))
    return named or any(os.path.realpath(word) == os.path.realpath(path) for word in words)


def plan_arm(values: Mapping[str, str], *, share: Path,
             installed: Callable[[str], bool]) -> Plan:
    """Check arm.launch.py's arguments; return fabrik_ik + servo_driver + viewers.

    :param installed: whether a ROS package is installed (for the optional viewers).
    :raises LaunchArgumentError: for the first argument that cannot work.
    """
    _check_choices(values, arm_arguments(share))
    space = namespace.checked_namespace(values[namespace.ARGUMENT])
    config = _checked_config(values['config'])
    loaded = load_arm(config)
    urdf = _checked_description(values, loaded)
    _check_servo_kind(values['protocol'], loaded, config, share)
    if not values['port']:
        raise LaunchArgumentError('port:= is empty; name the serial device of the board, e.g. '
                                  'port:=/dev/ttyUSB0')
    baud = _checked_baud(values['baud'])
    given = _node_values(values, ('fabrik_ik', 'servo_driver', *teleop_joy.started_nodes(values)),
                         space, _ARM_DRIVER_ARGUMENTS)
    viewers, notes = _viewers(values, urdf, share, installed, space)
    teleop, teleop_notes = teleop_joy.processes(values, arm=loaded, config=config,
                                                installed=installed, given=given)
    driver = Process(PACKAGE, 'servo_driver', parameters=(
        config, {'port': values['port'], 'baud': baud, 'protocol': values['protocol']},
        *_own(given, 'servo_driver')))
    return Plan((_ik(config, space, given), driver, *viewers, *teleop), notes + teleop_notes,
                space)


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
             simavr_check: Callable[[], None] = simavr_ready,
             owner_of: Callable[[str], Optional[int]] = link_owner) -> Plan:
    """Check sim.launch.py's arguments; return fabrik_ik + (sim_arm | board + driver) + viewers.

    :param installed: whether a ROS package is installed (for the optional viewers).
    :param simavr_check: raises :class:`LaunchArgumentError` if board:=simavr cannot run here.
    :param owner_of: the pid of the live simulated board that owns a link, if any.
    :raises LaunchArgumentError: for the first argument that cannot work.
    """
    _check_choices(values, sim_arguments(share))
    space = namespace.checked_namespace(values[namespace.ARGUMENT])
    config = _checked_config(values['config'])
    loaded = load_arm(config)
    urdf = _checked_description(values, loaded)
    board, protocol = values['board'], values['protocol']
    link = values['link'] or namespace.default_link(space)
    if values['sim_device'] == 'false':
        for name, default in (('board', 'python'), ('protocol', 'native'), ('sim_object', '')):
            if values[name] != default:
                raise LaunchArgumentError(
                    f'{name}:={values[name]} needs sim_device:=true (without it sim_arm '
                    f'stands in for driver and board)')
        given = _node_values(values, ('fabrik_ik', 'sim_arm', *teleop_joy.started_nodes(values)),
                             space, {})
        arm: tuple[Process, ...] = (Process(PACKAGE, 'sim_arm', parameters=(
            config, *_own(given, 'sim_arm'))),)
    else:
        if board == 'simavr':
            if protocol != 'native':
                raise LaunchArgumentError(
                    f'board:=simavr runs the fabrik_ros firmware, which speaks the native '
                    f'protocol only; protocol:={protocol} needs board:=python')
            simavr_check()
        _check_link(link, owner_of)
        _check_servo_kind(protocol, loaded, config, share)
        given = _node_values(values, ('fabrik_ik', 'servo_driver',
                                      *teleop_joy.started_nodes(values)), space,
                             _SIM_DRIVER_ARGUMENTS)
        held = ('--object', values['sim_object']) if values['sim_object'] else ()
        if held and not Protocol(protocol).is_bus:
            raise LaunchArgumentError(f'sim_object:={values["sim_object"]} needs a bus '
                                      f'protocol (feetech, dynamixel); protocol:={protocol} '
                                      'drives PWM servos')
        arm = (Process(PACKAGE, 'sim_device', node=False, required=True,
                       arguments=('--board', board, '--protocol', protocol,
                                  *_board_channels(board, protocol, loaded, config),
                                  '--link', link, *held)),
               Process(PACKAGE, 'servo_driver', parameters=(
                   config, {'port': link, 'protocol': protocol},
                   *_own(given, 'servo_driver'))))
    viewers, notes = _viewers(values, urdf, share, installed, space)
    teleop, teleop_notes = teleop_joy.processes(values, arm=loaded, config=config,
                                                installed=installed, given=given)
    return Plan((_ik(config, space, given), *arm, *viewers, *teleop), notes + teleop_notes,
                space)


def defaults(arguments: tuple[Argument, ...], **given: str) -> dict[str, str]:
    """Return every argument's value as launch would: ``given`` where set, else the default."""
    unknown = set(given) - {a.name for a in arguments}
    if unknown:
        raise LaunchArgumentError(f'unknown launch arguments {sorted(unknown)}')
    return {a.name: given.get(a.name, a.default) for a in arguments}


def _ik(config: str, space: str, given: node_params.NodeValues) -> Process:
    return Process(PACKAGE, 'fabrik_ik',
                   parameters=(config, {'follow_rviz_tools': True}, *_own(given, 'fabrik_ik')),
                   remappings=namespace.ik_remappings(space))


# The driver parameters each launch file sets from an argument: node parameter -> argument.
_ARM_DRIVER_ARGUMENTS = {'servo_driver': {'port': 'port', 'baud': 'baud',
                                          'protocol': 'protocol'}}
_SIM_DRIVER_ARGUMENTS = {'servo_driver': {'port': 'link', 'protocol': 'protocol'}}


def _node_values(values: Mapping[str, str], started: tuple[str, ...], space: str,
                 by_argument: Mapping[str, Mapping[str, str]]) -> node_params.NodeValues:
    """Return each node's parameters from config:='s node sections, then params_file:=."""
    given: node_params.NodeValues = {}
    for argument in ('config', node_params.ARGUMENT):
        if values[argument]:
            sections = node_params.node_sections(values[argument], argument=argument,
                                                 started=started, namespace=space,
                                                 by_argument=by_argument)
            for node, parameters in sections.items():
                given.setdefault(node, {}).update(parameters)
    return given


def _own(given: node_params.NodeValues, node: str) -> tuple[dict, ...]:
    """Return the node's parameters from the files as one more entry, none if it has none."""
    return (given[node],) if given.get(node) else ()


def _check_servo_kind(protocol: str, arm: Arm, config: str, share: Path) -> None:
    """Refuse a protocol that drives another kind of servo than the arm file calibrates.

    Said here once, before servo_driver would refuse the arm file at its start.
    """
    bus = Protocol(protocol).is_bus
    if bus == (arm.servo_map.unit == 'count'):
        return
    if bus:
        raise LaunchArgumentError(
            f'protocol:={protocol} drives bus servos calibrated in counts (id, zero_count), '
            f'but config:={config} calibrates pulse widths (channel, min_us, max_us); give a '
            f"bus arm file, e.g. config:={share / 'config' / 'so101.yaml'}")
    raise LaunchArgumentError(
        f'protocol:={protocol} drives a PWM board in pulse widths, but config:={config} '
        f'calibrates bus servos in counts; give protocol:=feetech or protocol:=dynamixel')


def board_channels(protocol: Protocol, arm: Arm) -> int:
    """Return how many outputs the simulated board needs for ``arm``'s servos.

    A bus has a servo for every id from 1 to the arm's highest; a PWM board has at least
    the Uno firmware's six channels, and more where the arm file uses a higher channel (an
    ``arm_from_urdf --first-channel 1 --aux-servo gripper`` file of a six-servo arm uses
    channel 6). Below the arm's need, servo_driver would refuse the board and retry forever.

    >>> from fabrik_ros.kinematics import load_arm
    >>> from pathlib import Path
    >>> config = Path(__file__).parents[2] / 'config'
    >>> board_channels(Protocol.FEETECH, load_arm(config / 'so101.yaml'))
    6
    >>> board_channels(Protocol.NATIVE, load_arm(config / 'arm_4dof.yaml'))
    6
    """
    servo_map = arm.servo_map
    highest = max(s.channel for s in (*servo_map.calibrations, *servo_map.aux))
    if protocol.is_bus:
        return highest
    return max(boardsim_cli.DEFAULT_CHANNELS, highest + 1)


def _board_channels(board: str, protocol: str, arm: Arm, config: str) -> tuple[str, ...]:
    """Return sim_device's ``--channels`` for ``arm``; refuse what the board cannot have.

    :raises LaunchArgumentError: for an arm that needs more channels than the firmware in
        simavr drives or than the protocol can address.
    """
    channels = board_channels(Protocol(protocol), arm)
    if board == 'simavr':
        if channels > simavr_board.CHANNELS:
            raise LaunchArgumentError(
                f'board:=simavr runs the Uno firmware, which drives '
                f'{simavr_board.CHANNELS} channels (0..'
                f'{simavr_board.CHANNELS - 1}), but config:={config} uses '
                f'{channels}; use board:=python, which simulates a board of {channels}')
        return ()
    most = boardsim_cli.MAX_CHANNELS[Protocol(protocol)]
    if channels > most:
        raise LaunchArgumentError(
            f'config:={config} uses {channels} channels, but protocol:={protocol} addresses '
            f'at most {most}')
    return ('--channels', str(channels))


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
    if baud < 0 or (baud == 0 and text.strip() != '0'):
        raise LaunchArgumentError(f'baud:={text} is not a positive whole number of bit/s '
                                  f"(e.g. baud:=115200), nor 0 (the protocol's default)")
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


def _check_link(link: str, owner_of: Callable[[str], Optional[int]]) -> None:
    if not os.path.isdir(os.path.dirname(os.path.abspath(link))):
        raise LaunchArgumentError(f'link:={link}: its folder does not exist')
    if os.path.lexists(link) and not os.path.islink(link):
        raise LaunchArgumentError(f'link:={link} exists and is not a symlink; it is never '
                                  f'replaced: choose a free path')
    owner = owner_of(link)
    if owner is not None:
        raise LaunchArgumentError(f'link:={link} is the link of a live simulated board (pid '
                                  f'{owner}); give this launch another namespace:= or link:=, '
                                  f'or stop that board')


def _viewers(values: Mapping[str, str], urdf: str, share: Path, installed: Callable[[str], bool],
             space: str) -> tuple[tuple[Process, ...], tuple[str, ...]]:
    """Return robot_state_publisher (with ``urdf``) and rviz2 as asked, a note for each not.

    Under a namespace both are remapped into it (TF included; see :mod:`.namespace`).
    """
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
                                     parameters=({'robot_description': urdf},),
                                     remappings=namespace.state_publisher_remappings(space)))
        else:
            rviz_config = share / 'config' / 'rviz' / 'fabrik.rviz'
            processes.append(Process(package, package, arguments=('-d', str(rviz_config)),
                                     remappings=namespace.rviz_remappings(space, rviz_config)))
    return tuple(processes), tuple(notes)
