"""teleop.launch.py's arguments, checked all at once, and the plan: a leader arm drives a follower.

The follower is servo_driver on ``follower_port:=`` with the arm file ``config:=``; the leader
is leader_arm on ``leader_port:=``, calibrated by ``leader_config:=`` (by default the same
file), publishing the follower's ``joint_commands``. ``sim_device:=true`` starts two simulated
buses instead (the leader's moved by a simulated hand unless ``sim_hand:=false``), their links
named by the port arguments or, empty, by the namespace. As for the other launch files
(:mod:`.arguments`), the plan is made in full before anything starts: a bad argument, an arm
file that does not load or is not bus servos, a leader mapping that cannot work (from the
leader_arm section of ``config:=`` or ``params_file:=``), one port for both arms, a link a live
simulated board owns: one :class:`LaunchArgumentError`, and nothing runs.
"""

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Optional

from fabrik_ros.boardsim.link_claim import link_owner
from fabrik_ros.kinematics import Arm, load_arm
from fabrik_ros.launch_support import namespace
from fabrik_ros.launch_support.arguments import (
    _check_choices,
    _check_link,
    _check_servo_kind,
    _checked_config,
    _checked_description,
    _node_arguments,
    _node_values,
    _own,
    _viewer_arguments,
    _viewers,
    Argument,
    board_channels,
    PACKAGE,
    Plan,
    Process,
    TRUE_FALSE,
)
from fabrik_ros.launch_support.errors import LaunchArgumentError
from fabrik_ros.leader.leader_map import LeaderMap, MappingError
from fabrik_ros.servo_io.protocols.dialect import Protocol

BUS_PROTOCOLS = (Protocol.FEETECH.value, Protocol.DYNAMIXEL.value)
# The simulated hand on the leader: (index among the leader's routes, counts, period [s]);
# the yaw joint, a middle joint and the gripper, each at its own slow pace.
_HAND = ((0, 400, 8.0), (2, 300, 6.0), (-1, 250, 4.0))
_NODES = ('servo_driver', 'leader_arm')
# The node parameters an argument sets: node parameter -> argument.
_BY_ARGUMENT = {'servo_driver': {'port': 'follower_port', 'protocol': 'protocol'},
                'leader_arm': {'port': 'leader_port', 'protocol': 'protocol',
                               'leader_config': 'leader_config'}}


def teleop_arguments(share: Path) -> tuple[Argument, ...]:
    """Return the arguments of teleop.launch.py (``share``: the package's share folder)."""
    return (
        Argument('config', str(share / 'config' / 'so101.yaml'),
                 "The follower's arm file (ROS 2 YAML), read by every node"),
        Argument('leader_config', '',
                 "The leader's arm file (its own calibration, e.g. from "
                 "arm_calibration_from_lerobot); empty: config:='s"),
        *_node_arguments(),
        Argument('follower_port', '',
                 "Serial port of the follower's bus (a /dev/serial/by-id/ path survives "
                 'replugging); with sim_device:=true the link to its simulated bus (empty: '
                 f'{namespace.DEFAULT_LINK}_follower, the namespace in it)'),
        Argument('leader_port', '',
                 "Serial port of the leader's bus; with sim_device:=true the link to its "
                 f'simulated bus (empty: {namespace.DEFAULT_LINK}_leader)'),
        Argument('protocol', Protocol.FEETECH.value,
                 'The bus servos of both arms: feetech (STS3215, the SO-101) or dynamixel '
                 '(Protocol 2.0)', BUS_PROTOCOLS),
        Argument('sim_device', 'false',
                 'true: both arms on simulated buses (sim_device processes)', TRUE_FALSE),
        Argument('sim_hand', 'true',
                 'With sim_device:=true, a simulated hand moves three leader servos slowly '
                 'back and forth (false: the leader stands still)', TRUE_FALSE),
        *_viewer_arguments('false'),
    )


def plan_teleop(values: Mapping[str, str], *, share: Path, installed: Callable[[str], bool],
                owner_of: Callable[[str], Optional[int]] = link_owner) -> Plan:
    """Check teleop.launch.py's arguments; return servo_driver + leader_arm (+ buses, viewers).

    :param installed: whether a ROS package is installed (for the optional viewers)
    :param owner_of: the pid of the live simulated board that owns a link, if any
    :raises LaunchArgumentError: for the first argument that cannot work
    """
    _check_choices(values, teleop_arguments(share))
    space = namespace.checked_namespace(values[namespace.ARGUMENT])
    config = _checked_config(values['config'])
    follower = load_arm(config)
    leader_config = _checked_leader_config(values['leader_config'] or config)
    leader = load_arm(leader_config)
    protocol = values['protocol']
    _check_servo_kind(protocol, follower, config, share)
    _check_servo_kind(protocol, leader, leader_config, share)
    given = _node_values(values, _NODES, space, _BY_ARGUMENT)
    routes = _checked_mapping(leader, follower, given.get('leader_arm', {}))
    urdf = _checked_description(values, follower)
    simulated = values['sim_device'] == 'true'
    ports = _ports(values, space, simulated)
    buses: tuple[Process, ...] = ()
    if simulated:
        for port in ports.values():
            _check_link(port, owner_of)
        hands = _hand_arguments(routes) if values['sim_hand'] == 'true' else ()
        buses = (_bus(protocol, follower, ports['follower']),
                 _bus(protocol, leader, ports['leader'], hands))
    elif values['sim_hand'] != 'true':
        raise LaunchArgumentError('sim_hand:=false needs sim_device:=true (a real leader is '
                                  'moved by your hand)')
    driver = Process(PACKAGE, 'servo_driver', parameters=(
        config, {'port': ports['follower'], 'protocol': protocol},
        *_own(given, 'servo_driver')))
    leader_node = Process(PACKAGE, 'leader_arm', parameters=(
        config, {'port': ports['leader'], 'protocol': protocol,
                 'leader_config': leader_config}, *_own(given, 'leader_arm')))
    viewers, notes = _viewers(values, urdf, share, installed, space)
    return Plan((*buses, driver, leader_node, *viewers), notes, space)


def _checked_leader_config(path: str) -> str:
    """Return ``path`` once it names an arm file that loads, refused as leader_config:=."""
    try:
        return _checked_config(path)
    except LaunchArgumentError as error:
        raise LaunchArgumentError(f'leader_{error}') from None


def _checked_mapping(leader: Arm, follower: Arm, own: Mapping[str, Any]) -> LeaderMap:
    """Return the leader map leader_arm will build; refuse one that cannot work."""
    lists = {}
    for key in ('leader_joints', 'offsets_rad', 'directions'):
        value = own.get(key)
        if value is not None and not isinstance(value, list):
            raise LaunchArgumentError(f'leader_arm: {key} = {value!r}: must be a list, one '
                                      'entry per follower servo')
        lists[key] = value
    try:
        return LeaderMap.build(leader, follower, leader_names=lists['leader_joints'],
                               offsets_rad=lists['offsets_rad'],
                               directions=lists['directions'])
    except MappingError as error:
        raise LaunchArgumentError(f'leader_arm: {error}') from None


def _ports(values: Mapping[str, str], space: str, simulated: bool) -> dict[str, str]:
    """Return each arm's port (a simulated bus's link by default); refuse missing or shared."""
    ports = {}
    for arm in ('follower', 'leader'):
        port = values[f'{arm}_port']
        if not port:
            if not simulated:
                raise LaunchArgumentError(
                    f"{arm}_port:= is empty; name the serial device of the {arm}'s bus, e.g. "
                    f'{arm}_port:=/dev/serial/by-id/usb-1a86_USB_Single_Serial_{arm}-if00 '
                    '(or sim_device:=true for simulated buses)')
            port = f'{namespace.default_link(space)}_{arm}'
        ports[arm] = port
    if ports['follower'] == ports['leader']:
        raise LaunchArgumentError(f'leader_port:= and follower_port:= are both {ports["leader"]}; '
                                  'each arm needs a bus of its own')
    return ports


def _hand_arguments(routes: LeaderMap) -> tuple[str, ...]:
    """Return sim_device's ``--hand`` arguments for the leader's servos (distinct ones)."""
    chosen: dict[int, str] = {}
    for index, counts, period in _HAND:
        if -len(routes.routes) <= index < len(routes.routes):
            servo_id = routes.routes[index].leader_id
            chosen.setdefault(servo_id, f'{servo_id}:{counts}:{period:g}')
    return tuple(word for sweep in chosen.values() for word in ('--hand', sweep))


def _bus(protocol: str, arm: Arm, link: str, hands: tuple[str, ...] = ()) -> Process:
    """Return the sim_device process of one arm's simulated bus."""
    channels = board_channels(Protocol(protocol), arm)
    return Process(PACKAGE, 'sim_device', node=False, required=True,
                   arguments=('--protocol', protocol, '--channels', str(channels),
                              '--link', link, *hands))
