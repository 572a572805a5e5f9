"""Every shipped arm file through every node that reads it: a target in, servos moved, no error.

Issue 34.3: sim_arm raised in its joint_commands callback on the first command for any arm
with a gripper, and no test ran sim_arm with such an arm. Here each config/*.yaml goes through
sim_arm (every joint and auxiliary servo commanded at once), and through fabrik_ik with
servo_driver on a simulated board of the file's kind (a native PWM board with the channels
sim.launch.py gives it, or a Feetech bus), as two nodes and composed as fabrik_arm composes
them. Real rclpy nodes in one process, one Context per test.
"""

import time

from geometry_msgs.msg import PointStamped
import pytest
from sensor_msgs.msg import JointState

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.driver.aux_axis import aux_axes
from fabrik_ros.driver.servo_output import servo_addresses
from fabrik_ros.kinematics import Arm, load_arm
from fabrik_ros.launch_support.arguments import board_channels
from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.nodes.sim_arm_node import SimArmNode
from fabrik_ros.servo_io import Protocol
from test.nodes.conftest import REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

CONFIGS = sorted((REPO_ROOT / 'config').glob('*.yaml'))
# How far each joint is sent from home [rad], toward its wider side: a move that shows.
STEP_RAD = 0.2
TOLERANCE_RAD = 0.02
FAST = ['-p', 'home_move_time_s:=0.2', '-p', 'diagnostics_period_s:=0.1']


def _pose(arm: Arm) -> tuple[float, ...]:
    """Return every joint STEP_RAD from home toward its wider side, within its limits."""
    pose = []
    for joint in arm.joints:
        up = joint.max_rad - joint.home_rad >= joint.home_rad - joint.min_rad
        pose.append(joint.clamp(joint.home_rad + (STEP_RAD if up else -STEP_RAD)))
    return tuple(pose)


def _aux_pose(arm: Arm) -> tuple[float, ...]:
    """Return every auxiliary servo halfway between its home and the far end of its range."""
    return tuple((axis.home + (axis.high if axis.high - axis.home >= axis.home - axis.low
                               else axis.low)) / 2 for axis in aux_axes(arm.servo_map))


def _names(arm: Arm) -> list[str]:
    return [*arm.joint_names, *(axis.name for axis in aux_axes(arm.servo_map))]


def _no_exception(capfd, seen: list[str]) -> None:
    seen.append(capfd.readouterr().err)
    errors = [line for line in ''.join(seen).splitlines()
              if 'Exception' in line or 'Traceback' in line]
    assert not errors, errors


def _near(positions, expected, tolerance) -> bool:
    return len(positions) == len(expected) and all(
        abs(p - e) <= tolerance for p, e in zip(positions, expected, strict=True))


@pytest.mark.parametrize('config', CONFIGS, ids=lambda path: path.stem)
def test_sim_arm_follows_a_command_to_every_joint_and_auxiliary_servo(ros, config, capfd):
    arm = load_arm(config)
    ros.add(SimArmNode(context=ros.context, cli_args=[
        '--ros-args', '--params-file', str(config), *ros.ros_args, '-p', 'rate_hz:=100.0',
        '-p', 'servo_speed_rad_s:=20.0', '-p', 'aux_max_speed:=20.0']))
    probe = ros.probe()
    states: list[JointState] = []
    probe.create_subscription(JointState, 'joint_states', states.append, 100)
    commands = probe.create_publisher(JointState, 'joint_commands', 10)
    ros.spin_until(lambda: states and commands.get_subscription_count() > 0, timeout_s=10.0,
                   what='the first joint_states and sim_arm subscribed')
    target = (*_pose(arm), *_aux_pose(arm))
    commands.publish(JointState(name=_names(arm), position=list(target)))
    ros.spin_until(lambda: _near(states[-1].position, target, 1e-9), timeout_s=10.0,
                   what=lambda: f'joint_states at {target}, not {list(states[-1].position)}')
    assert list(states[-1].name) == _names(arm)
    _no_exception(capfd, [])


def _board_units(board: SimBoard, arm: Arm) -> list[float]:
    """Return what the board holds for every servo [µs or counts], in servo order."""
    if board.protocol.is_bus:
        firmware = board.firmware
        present = dict(zip(firmware.ids(), firmware.present_positions(time.monotonic()),
                           strict=True))
        return [present[servo_id] for servo_id in servo_addresses(arm.servo_map)]
    targets = board.targets()
    return [targets[channel] for channel in servo_addresses(arm.servo_map)]


def _expected_units(arm: Arm, angles, aux) -> list[float]:
    units = arm.servo_map.to_units(list(angles)).units
    return [*(float(u) for u in units),
            *(axis.units(p) for axis, p in zip(aux_axes(arm.servo_map), aux, strict=True))]


@pytest.mark.parametrize('composed', [False, True], ids=['two_nodes', 'fabrik_arm'])
@pytest.mark.parametrize('config', CONFIGS, ids=lambda path: path.stem)
def test_a_target_point_moves_the_simulated_board_and_a_gripper_command_its_servo(
        ros, config, composed, tmp_path, capfd):
    """fabrik_ik solves, servo_driver drives the board sim.launch.py would simulate."""
    arm = load_arm(config)
    protocol = Protocol.FEETECH if arm.servo_map.unit == 'count' else Protocol.NATIVE
    link = str(tmp_path / 'ttyARM')
    board = SimBoard(protocol, channels=board_channels(protocol, arm), link_path=link).start()
    try:
        _drive(ros, arm, config, protocol, link, board, composed, capfd)
    finally:
        for node in list(ros.nodes):
            ros.destroy(node)
        board.stop()


def _drive(ros, arm, config, protocol, link, board, composed, capfd):
    args = ['--ros-args', '--params-file', str(config), *ros.ros_args]
    drivers: list[ServoDriverNode] = []
    sink = {'command_sink': lambda angles: drivers[0].command(angles)} if composed else {}
    ros.add(FabrikIkNode(context=ros.context, cli_args=args, **sink))
    drivers.append(ros.add(ServoDriverNode(context=ros.context, cli_args=[
        *args, '-p', f'port:={link}', '-p', f'protocol:={protocol.value}', *FAST])))
    probe = ros.probe()
    solved: list[JointState] = []
    states: list[JointState] = []
    probe.create_subscription(JointState, 'joint_commands', solved.append, 10)
    probe.create_subscription(JointState, 'joint_states', states.append, 10)
    targets = probe.create_publisher(PointStamped, 'target_point', 10)
    commands = probe.create_publisher(JointState, 'joint_commands', 10)
    seen: list[str] = []
    ros.spin_until(lambda: states and targets.get_subscription_count() > 0, timeout_s=20.0,
                   what='servo_driver connected and fabrik_ik subscribed')
    aux_home = tuple(axis.home for axis in aux_axes(arm.servo_map))
    point = arm.fk(list(_pose(arm)))[-1]
    msg = PointStamped()
    msg.header.frame_id = arm.base_frame
    msg.point.x, msg.point.y, msg.point.z = (float(c) for c in point)
    targets.publish(msg)
    ros.spin_until(lambda: solved, timeout_s=10.0, what='fabrik_ik to publish joint_commands')
    angles = tuple(solved[-1].position)
    expected = _expected_units(arm, angles, aux_home)
    tolerance = 2.0 if protocol.is_bus else 1.0
    ros.spin_until(lambda: _near(_board_units(board, arm), expected, tolerance),
                   timeout_s=10.0, what=lambda: (f'the board at {expected}, not '
                                                 f'{_board_units(board, arm)}'))
    ros.spin_until(lambda: _near(states[-1].position[:len(angles)], angles, TOLERANCE_RAD),
                   timeout_s=10.0, what=lambda: f'joint_states at {angles}')
    _no_exception(capfd, seen)
    if not aux_home:
        return
    aux = _aux_pose(arm)
    commands.publish(JointState(name=[axis.name for axis in aux_axes(arm.servo_map)],
                                position=list(aux)))
    expected = _expected_units(arm, angles, aux)
    ros.spin_until(lambda: _near(_board_units(board, arm), expected, tolerance),
                   timeout_s=10.0, what=lambda: (f'the gripper on the board at {expected}, '
                                                 f'not {_board_units(board, arm)}'))
    _no_exception(capfd, seen)

