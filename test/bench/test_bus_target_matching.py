"""Matching sync writes on a simulated servo bus to the targets that produced them (bench/)."""

from pathlib import Path
import sys

import pytest

BENCH = Path(__file__).resolve().parents[2] / 'bench'
sys.path.insert(0, str(BENCH))

from board_timing import Chunk, frames_from_chunks, pulse_of, SyncGoals, TimedBoard  # noqa: E402
from target_matching import match_frames, YawSweep  # noqa: E402

from fabrik_ros.kinematics import load_arm  # noqa: E402
from fabrik_ros.servo_io import Protocol  # noqa: E402
from fabrik_ros.servo_io.protocols.control_tables import span, STS3215, XL430_W250  # noqa: E402
from fabrik_ros.servo_io.protocols.dynamixel import DynamixelCodec  # noqa: E402
from fabrik_ros.servo_io.protocols.feetech import FeetechCodec  # noqa: E402

SO101 = Path(__file__).resolve().parents[2] / 'config' / 'so101.yaml'
BYTE_S = 10.0 / 1_000_000


@pytest.fixture(scope='module')
def so101():
    return load_arm(SO101)


def goals_packet(codec, table, goals: dict[int, int], speed: int = 0) -> bytes:
    """Return the sync write the bus link sends: goal position and speed of every servo."""
    address, size = span(table.goal_position, table.goal_speed)
    data = {}
    for servo_id, goal in goals.items():
        block = bytearray(size)
        for register, value in ((table.goal_position, goal), (table.goal_speed, speed)):
            block[register.address - address:register.end - address] = register.encode(value)
        data[servo_id] = bytes(block)
    return codec.sync_write(address, size, data)


def test_a_feetech_sync_write_is_stamped_from_its_first_byte_and_read_per_id():
    codec = FeetechCodec()
    poll = codec.sync_read(STS3215.present_position.address, 2, [1, 2, 3])
    goals = goals_packet(codec, STS3215, {1: 1838, 2: 2048, 3: 0}, speed=700)
    data = poll + goals
    frames = frames_from_chunks([Chunk(3.0, data[:20]), Chunk(4.0, data[20:])], 1_000_000,
                                Protocol.FEETECH)
    assert [pulse_of(f.frame, 1) for f in frames] == [None, 1838]
    assert not isinstance(frames[0].frame, SyncGoals)
    assert frames[0].first_byte_s == pytest.approx(3.0)
    assert frames[1].first_byte_s == pytest.approx(3.0 + len(poll) * BYTE_S)
    assert frames[1].frame.counts == {1: 1838, 2: 2048, 3: 0}    # count 0 is a goal too


def test_a_dynamixel_sync_write_is_stamped_from_its_first_byte_after_stuffing():
    codec = DynamixelCodec()
    torque = codec.write(1, XL430_W250.torque_enable.address, b'\x01')
    # Profile_Velocity 0xFDFFFF00 puts FF FF FD in the body: the packet goes out stuffed
    address, size = span(XL430_W250.goal_position, XL430_W250.goal_speed)
    stuffed = codec.sync_write(address, size, {
        1: (0xFDFFFF00).to_bytes(4, 'little') + XL430_W250.goal_position.encode(2100)})
    goals = goals_packet(codec, XL430_W250, {1: 2101, 5: 4095})
    data = b'\xff' + torque + stuffed + goals          # a stray byte first: skipped
    frames = frames_from_chunks([Chunk(1.0, data)], 1_000_000, Protocol.DYNAMIXEL)
    assert [pulse_of(f.frame, 1) for f in frames] == [None, 2100, 2101]
    assert [pulse_of(f.frame, 5) for f in frames] == [None, None, 4095]
    assert frames[0].first_byte_s == pytest.approx(1.0 + BYTE_S)
    assert frames[1].first_byte_s == pytest.approx(1.0 + (1 + len(torque)) * BYTE_S)
    assert frames[2].first_byte_s == pytest.approx(1.0 + (1 + len(torque) + len(stuffed))
                                                   * BYTE_S)


def test_a_sync_write_that_does_not_cover_the_goal_register_carries_no_goal():
    codec = FeetechCodec()
    speeds = codec.sync_write(STS3215.goal_speed.address, 2, {1: b'\x10\x00'})
    frames = frames_from_chunks([Chunk(0.0, speeds)], 1_000_000, Protocol.FEETECH)
    assert len(frames) == 1 and pulse_of(frames[0].frame, 1) is None


def test_the_so101_sweep_codes_targets_by_the_pan_servos_goal_count(so101):
    sweep = YawSweep(so101)
    assert sweep.channel == 1                 # shoulder_pan, bus id 1
    sweep.check()                             # each solved yaw count is its target's code
    YawSweep(so101, bob_m=0.01).check()


def test_the_so101_sweep_stays_within_the_shipped_speed_limit_at_500_hz(so101):
    sweep = YawSweep(so101)
    home = so101.servo_map.to_units(so101.home).units
    moved = home.copy()
    moved[sweep.joint] += 1
    rad_per_count = abs(so101.servo_map.to_angles(moved)[sweep.joint]
                        - so101.servo_map.to_angles(home)[sweep.joint])
    travel = sum(abs(sweep.pulse(i + 1) - sweep.pulse(i)) for i in range(sweep.period))
    assert travel * rad_per_count * 500 / sweep.period < 1.5


def test_bus_sync_writes_match_the_targets_whose_goal_counts_they_carry(so101):
    sweep = YawSweep(so101, hold_every=0)
    codec = FeetechCodec()
    stamps = [10.0 + 0.002 * i for i in range(6)]
    packets = [(10.0031, goals_packet(codec, STS3215, {1: sweep.pulse(1), 2: 2048})),
               (10.0091, goals_packet(codec, STS3215, {1: sweep.pulse(4), 2: 2048}))]
    frames = [f for at, packet in packets
              for f in frames_from_chunks([Chunk(at, packet)], 1_000_000, Protocol.FEETECH)]
    match = match_frames([(f.first_byte_s, pulse_of(f.frame, sweep.channel)) for f in frames],
                         stamps, 0, sweep)
    assert match.latency_s == pytest.approx({1: 0.0011, 4: 0.0011})


@pytest.mark.parametrize('protocol, torque_at_power_up',
                         [(Protocol.FEETECH, True), (Protocol.DYNAMIXEL, False)])
def test_a_timed_bus_board_reports_torque_and_goal_registers_by_id(protocol, torque_at_power_up):
    board = TimedBoard(protocol, channels=6)
    assert [board.holds(servo_id) for servo_id in range(1, 7)] == [torque_at_power_up] * 6
    assert board.goals() == {servo_id: 2048 for servo_id in range(1, 7)}
    with board.firmware.lock:
        board.firmware.servo(3).write(STS3215.goal_position.address
                                      if protocol is Protocol.FEETECH
                                      else XL430_W250.goal_position.address,
                                      (1000).to_bytes(2 if protocol is Protocol.FEETECH else 4,
                                                      'little'), 0.0)
    assert board.goals()[3] == 1000
