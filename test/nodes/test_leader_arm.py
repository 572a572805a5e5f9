"""leader_arm on two simulated buses: a leader moved by hand drives servo_driver's follower."""

import math
import threading
import time

import pytest
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.kinematics import load_arm
from fabrik_ros.leader.leader_map import MappingError
from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.leader_node import LeaderArmNode
from fabrik_ros.servo_io import Protocol
from fabrik_ros.servo_io.protocols.bus_codec import Instruction
from fabrik_ros.servo_io.protocols.control_tables import STS3215, XL430_W250
from fabrik_ros.servo_io.protocols.dynamixel import DynamixelCodec
from fabrik_ros.servo_io.protocols.feetech import FeetechCodec
from test.nodes.conftest import REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(90)]

CONFIG = REPO_ROOT / 'config' / 'so101.yaml'
ARM = load_arm(CONFIG)
IDS = [1, 2, 3, 4, 5, 6]
ELBOW = ARM.joint_names.index('elbow_flex')
FAST = ['-p', 'home_move_time_s:=0.3', '-p', 'max_speed_rad_s:=[6.0, 6.0, 6.0, 6.0, 6.0]',
        '-p', 'aux_max_speed:=6.0', '-p', 'diagnostics_period_s:=0.1']
CODECS = {Protocol.FEETECH: (FeetechCodec, STS3215), Protocol.DYNAMIXEL: (DynamixelCodec,
                                                                         XL430_W250)}


def _counts(angles, gripper_rad=0.0):
    gripper = ARM.servo_map.aux[0]
    return [*(round(float(u)) for u in ARM.servo_map.to_units(angles).units),
            round(gripper.units(gripper_rad))]


class TappedBus(SimBoard):
    """A simulated bus that keeps every instruction packet the host sent it."""

    def __init__(self, protocol, **options):
        super().__init__(protocol, **options)
        self._reader = CODECS[self.protocol][0]()
        self._lock = threading.Lock()
        self.packets = []

    def on_exchange(self, delivered, reply):
        with self._lock:
            self._reader.feed(delivered)
            packet = self._reader.take_instruction()
            while packet is not None:
                self.packets.append(packet)
                packet = self._reader.take_instruction()

    def writes(self):
        """Return (id, address, data) of every write the host sent (sync writes as id -1)."""
        codec, _ = CODECS[self.protocol]
        fields = codec.FIELD_BYTES
        with self._lock:
            packets = list(self.packets)
        found = []
        for packet in packets:
            if packet.instruction in (Instruction.PING, Instruction.READ, Instruction.SYNC_READ):
                continue
            address = int.from_bytes(packet.params[:fields], 'little')
            if packet.instruction == Instruction.WRITE:
                found.append((packet.id, address, bytes(packet.params[fields:])))
            else:
                found.append((-1, address, bytes(packet.params)))
        return found


class Teleop:
    """A follower bus with servo_driver, a tapped leader bus with leader_arm, a probe."""

    def __init__(self, ros, tmp_path, leader_protocol, leader_args=()):
        self.ros = ros
        self.follower = SimBoard(Protocol.FEETECH, channels=6,
                                 link_path=str(tmp_path / 'ttyFOLLOW')).start()
        self.leader = TappedBus(leader_protocol, channels=6,
                                link_path=str(tmp_path / 'ttyLEADER')).start()
        self.leader_protocol = leader_protocol
        common = ['--ros-args', '--params-file', str(CONFIG), *ros.ros_args]
        self.driver = ros.add(ServoDriverNode(context=ros.context, cli_args=[
            *common, '-p', f'port:={self.follower.path}', '-p', 'protocol:=feetech', *FAST]))
        self.leader_node = ros.add(LeaderArmNode(context=ros.context, cli_args=[
            *common, '-p', f'port:={self.leader.path}', '-p',
            f'protocol:={leader_protocol.value}', *leader_args]))
        self.probe = ros.probe()
        self.commands, self.states = [], []
        self.probe.create_subscription(JointState, 'joint_commands', self.commands.append, 10)
        self.probe.create_subscription(JointState, 'joint_states', self.states.append, 10)

    def present(self):
        return self.follower.firmware.present_positions(time.monotonic())

    def wait_follower_at(self, expected, what, *, during=None, tolerance=3):
        self.ros.spin_until(
            lambda: all(abs(p - e) <= tolerance for p, e in zip(self.present(), expected,
                                                                 strict=True)),
            timeout_s=20.0, during=during,
            what=lambda: f'{what}: follower {self.present()}, expected {expected}')

    def move_leader(self, angles, gripper_rad):
        now = time.monotonic()
        for servo_id, count in zip(IDS, _counts(angles, gripper_rad), strict=True):
            self.leader.firmware.move_by_hand(servo_id, count, now)

    def close(self):
        for node in (self.leader_node, self.driver):
            if node in self.ros.nodes:
                self.ros.destroy(node)
        self.leader.stop()
        self.follower.stop()


@pytest.fixture
def make_teleop(ros, tmp_path):
    rigs = []

    def make(leader_protocol=Protocol.FEETECH, leader_args=()):
        rig = Teleop(ros, tmp_path, leader_protocol, leader_args)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        rig.close()


@pytest.mark.parametrize('protocol', [Protocol.FEETECH, Protocol.DYNAMIXEL],
                         ids=lambda p: p.value)
def test_the_follower_and_its_gripper_follow_a_leader_moved_by_hand_never_driven(make_teleop,
                                                                                 protocol):
    rig = make_teleop(protocol)
    rig.ros.spin_until(lambda: not any(rig.leader.firmware.torques()), timeout_s=20.0,
                       what=lambda: f'the leader limp: torques {rig.leader.firmware.torques()}')
    pose = list(ARM.home)
    pose[ELBOW] += 0.6
    pose[0] -= 0.4
    rig.move_leader(pose, 0.8)
    rig.wait_follower_at(_counts(pose, 0.8), 'the follower where the leader was moved')
    last = rig.commands[-1]
    assert 'gripper' in last.name and all(math.isfinite(p) for p in last.position)
    _, table = CODECS[protocol]
    writes = rig.leader.writes()
    assert all(address == table.torque_enable.address and data == b'\x00'
               for _, address, data in writes), \
        f'the leader got only torque-off writes: {writes}'
    if protocol is Protocol.FEETECH:        # torqued at power-up: each turned off
        assert {servo_id for servo_id, _, _ in writes} == set(IDS)
    else:                                   # limp at power-up: nothing written at all
        assert writes == []


def test_a_leader_beyond_the_followers_limits_is_clamped(make_teleop):
    rig = make_teleop()
    rig.ros.spin_until(lambda: not any(rig.leader.firmware.torques()), timeout_s=20.0,
                       what='the leader limp')
    pose = list(ARM.home)
    beyond = ARM.joints[ELBOW].max_rad + 0.3
    now = time.monotonic()
    cal = ARM.servo_map.calibrations[ELBOW]
    rig.leader.firmware.move_by_hand(IDS[ELBOW], cal.unclamped_units(beyond), now)
    rig.ros.spin_until(lambda: rig.commands and 'elbow_flex' in rig.commands[-1].name
                       and rig.commands[-1].position[rig.commands[-1].name.index(
                           'elbow_flex')] == pytest.approx(ARM.joints[ELBOW].max_rad),
                       timeout_s=20.0, what=lambda: f'elbow_flex at its limit: '
                       f'{rig.commands[-1:]}')
    pose[ELBOW] = ARM.joints[ELBOW].max_rad
    rig.wait_follower_at(_counts(pose), 'the follower at its elbow limit')


def test_an_unplugged_leader_holds_the_follower_and_a_replug_follows_without_a_jump(
        make_teleop, capfd):
    rig = make_teleop()
    rig.ros.spin_until(lambda: not any(rig.leader.firmware.torques()), timeout_s=20.0,
                       what='the leader limp')
    first = list(ARM.home)
    first[ELBOW] += 0.3
    rig.move_leader(first, 0.2)
    rig.wait_follower_at(_counts(first, 0.2), 'the follower following')
    rig.leader.unplug()
    rig.ros.spin_until(lambda: rig.leader_node._watch.silent, timeout_s=20.0,
                       what='the leader said silent')
    heard = len(rig.commands)
    held = rig.present()
    far = list(first)
    far[ELBOW] -= 1.2           # moved by hand while its bus is unplugged
    rig.move_leader(far, 0.2)
    states = len(rig.states)
    rig.ros.spin_until(lambda: len(rig.states) >= states + 10, timeout_s=20.0,
                       what='ten more joint_states of the follower (half a second)')
    assert len(rig.commands) == heard, 'nothing published while the leader is silent'
    assert all(abs(p - h) <= 3 for p, h in zip(rig.present(), held, strict=True)), \
        'the follower holds where it was'
    slow = 1.5
    rig.driver.set_parameters([Parameter('max_speed_rad_s', value=[slow] * 5)])
    seen = []
    rig.leader.replug()
    asked = time.monotonic()
    rig.wait_follower_at(_counts(far, 0.2), 'the follower at the leader again',
                         during=lambda: seen.append(rig.present()[ELBOW]))
    took = time.monotonic() - asked
    target = _counts(far, 0.2)[ELBOW]
    assert all(b <= a + 3 for a, b in zip(seen, seen[1:], strict=False)) and \
        min(seen) >= target - 3, f'straight to the leader, no jump elsewhere: {seen}'
    assert took >= 0.9 * 1.2 / slow, f'at the speed limit, not at once: {took:.2f} s'
    assert not rig.leader_node._watch.silent
    logged = capfd.readouterr().err
    assert logged.count('the follower holds where it is') == 1, logged
    assert logged.count('leader readings again after') == 1, logged


@pytest.mark.parametrize('args, words', [
    (['-p', 'directions:=[1, 1, 2, 1, 1, 1]'], 'directions[2] = 2 (follower elbow_flex)'),
    (['-p', "leader_joints:=['shoulder_pan', 'nope', 'elbow_flex', 'wrist_flex', "
      "'wrist_roll', 'gripper']"], "leader_joints[1] = 'nope'"),
    (['-p', 'offsets_rad:=[0.0, 0.0, 0.0]'], 'offsets_rad has 3 entries, must have 6'),
    (['-p', 'offsets_rad:=[0.0, 0.0, 9.0, 0.0, 0.0, 0.0]'], 'offsets_rad[2] = 9.0'),
    (['-p', "leader_joints:=['shoulder_pan', 'shoulder_pan', 'elbow_flex', 'wrist_flex', "
      "'wrist_roll', 'gripper']"], 'already drives shoulder_pan'),
])
def test_a_bad_mapping_is_refused_at_start_naming_the_entry(ros, args, words):
    cli = ['--ros-args', '--params-file', str(CONFIG), *ros.ros_args,
           '-p', 'port:=/nonexistent/ttyLEADER', *args]
    with pytest.raises(MappingError) as refused:
        LeaderArmNode(context=ros.context, cli_args=cli)
    assert words in str(refused.value)


def test_a_leader_config_that_does_not_load_is_refused_naming_it(ros, tmp_path):
    cli = ['--ros-args', '--params-file', str(CONFIG), *ros.ros_args,
           '-p', f'leader_config:={tmp_path / "missing.yaml"}']
    with pytest.raises(ValueError, match='leader_config'):
        LeaderArmNode(context=ros.context, cli_args=cli)


def test_the_parameter_table_row_of_leader_arm_is_what_it_declares(ros, tmp_path):
    from fabrik_ros.kinematics.description.arm_keys import TOP_KEYS
    from fabrik_ros.node_parameters import node_parameters
    from fabrik_ros.nodes.ros_parameters import _DECLARED
    node = ros.add(LeaderArmNode(context=ros.context, cli_args=[
        '--ros-args', '--params-file', str(CONFIG), *ros.ros_args,
        '-p', f'port:={tmp_path / "ttyNONE"}']))
    declared = tuple(name for name in _DECLARED[node] if name.split('.')[0] not in TOP_KEYS)
    assert node_parameters().of('leader_arm') == declared


def test_a_leader_whose_servo_supply_is_cycled_is_turned_limp_again_and_never_driven(
        make_teleop):
    """The supply off: the servos fall silent; back on, torqued at power-up, admitted anew."""
    rig = make_teleop()
    servos = rig.leader.firmware.servos
    rig.ros.spin_until(lambda: not any(rig.leader.firmware.torques()), timeout_s=20.0,
                       what='the leader limp')
    writes = len(rig.leader.writes())
    for servo in servos:
        servo.silent = True
    rig.ros.spin_until(lambda: rig.leader_node._watch.silent, timeout_s=20.0,
                       what='the leader said silent')
    rig.leader.firmware.power_cycle_servos(time.monotonic())
    assert all(rig.leader.firmware.torques()), 'torqued at power-up'
    for servo in servos:
        servo.silent = False
    rig.ros.spin_until(lambda: not any(rig.leader.firmware.torques()), timeout_s=20.0,
                       what=lambda: f'the leader limp again: {rig.leader.firmware.torques()}')
    again = rig.leader.writes()[writes:]
    assert {servo_id for servo_id, _, _ in again} == set(IDS)
    assert all(address == STS3215.torque_enable.address and data == b'\x00'
               for _, address, data in again), again
    pose = list(ARM.home)
    pose[ELBOW] -= 0.5
    rig.move_leader(pose, 0.3)
    rig.wait_follower_at(_counts(pose, 0.3), 'the follower following again')
