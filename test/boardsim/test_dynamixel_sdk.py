"""The simulated Dynamixel bus as ROBOTIS' own SDK sees it, over a real pty at 1 Mbaud.

dynamixel_sdk (PortHandler, PacketHandler(2.0), GroupSyncRead, GroupSyncWrite) is the client:
an independent implementation of Protocol 2.0, so what passes here is what a real XL430 bus
answers. Register numbers are typed from the e-Manual's XL430-W250 control table, not taken
from fabrik_ros, so a wrong number in control_tables.py fails here too.
"""

from pathlib import Path
import subprocess
import sys
import time

from dynamixel_sdk import (
    COMM_RX_TIMEOUT,
    COMM_SUCCESS,
    GroupSyncRead,
    GroupSyncWrite,
    PacketHandler,
    PortHandler,
)
import pytest

from fabrik_ros.servo_io import Protocol
from fabrik_ros.servo_io.protocols.dynamixel import DynamixelCodec

pytestmark = pytest.mark.timeout(30)

# e-Manual, XL430-W250 control table (address, bytes).
MODEL_NUMBER = 0
HOMING_OFFSET = 20
MAX_POSITION_LIMIT = 48
MIN_POSITION_LIMIT = 52
TORQUE_ENABLE = 64
OPERATING_MODE = 11
EXTENDED_POSITION_MODE = 4
HARDWARE_ERROR_STATUS = 70
PROFILE_VELOCITY = 112
GOAL_POSITION = 116
PRESENT_LOAD = 126
PRESENT_POSITION = 132
XL430_W250 = 1060
ERRNUM_DATA_LENGTH, ERRNUM_DATA_LIMIT, ERRNUM_ACCESS = 5, 6, 7
ERRBIT_ALERT = 0x80
OVERLOAD = 0x20                 # Hardware Error Status bit 5
IDS = (1, 2, 3, 4, 5, 6)
WAIT_S = 5.0
REPO_ROOT = Path(__file__).parent.parent.parent


@pytest.fixture(autouse=True)
def patient_sdk(monkeypatch):
    """Give the SDK's answer timeout room for a loaded test machine (a slow adapter).

    The SDK waits 2 x its USB latency timer (16 ms) for an answer; a pty shares the CPU with
    whatever else runs, so 100 ms keeps a busy machine from reading as a lost packet.
    """
    monkeypatch.setattr('dynamixel_sdk.port_handler.LATENCY_TIMER', 100)


@pytest.fixture
def bus(sim_board):
    """Return ``(board, port, packet_handler)``: six XL430 and the SDK on their pty."""
    board = sim_board(Protocol.DYNAMIXEL, channels=6)
    port = PortHandler(board.path)
    assert port.openPort()
    assert port.setBaudRate(1_000_000)
    yield board, port, PacketHandler(2.0)
    port.closePort()


def ok(result, error=0):
    assert result == COMM_SUCCESS
    assert error == 0


def signed32(value):
    return value - (1 << 32) if value >> 31 else value


def present(board, servo_id):
    return board.firmware.present_positions(board._clock())[servo_id - 1]


def test_every_servo_pings_with_its_model_number_and_an_absent_id_times_out(bus):
    board, port, handler = bus
    for servo_id in IDS:
        model, result, error = handler.ping(port, servo_id)
        ok(result, error)
        assert model == XL430_W250
    assert handler.ping(port, 7)[1] == COMM_RX_TIMEOUT
    found, result = handler.broadcastPing(port)
    assert result == COMM_SUCCESS
    assert sorted(found) == list(IDS)
    assert {model for model, _ in found.values()} == {XL430_W250}


def test_servos_power_up_limp_and_read_their_model_and_position(bus):
    board, port, handler = bus
    torque, result, error = handler.read1ByteTxRx(port, 2, TORQUE_ENABLE)
    ok(result, error)
    assert torque == 0
    model, result, error = handler.read2ByteTxRx(port, 2, MODEL_NUMBER)
    ok(result, error)
    assert model == XL430_W250
    board.firmware.move_by_hand(2, 1234, board._clock())
    position, result, error = handler.read4ByteTxRx(port, 2, PRESENT_POSITION)
    ok(result, error)
    assert position == 1234 == present(board, 2)


def test_write_goal_then_torque_on_moves_the_servo_there(bus):
    board, port, handler = bus
    ok(*handler.write4ByteTxRx(port, 4, GOAL_POSITION, 3000))
    assert present(board, 4) == 2048                  # limp: a goal alone moves nothing
    ok(*handler.write1ByteTxRx(port, 4, TORQUE_ENABLE, 1))
    assert board.wait_until(lambda b: present(b, 4) == 3000, WAIT_S)
    position, result, error = handler.read4ByteTxRx(port, 4, PRESENT_POSITION)
    ok(result, error)
    assert position == 3000


def test_sync_write_moves_every_servo_and_sync_read_reports_them(bus):
    board, port, handler = bus
    goals = {servo_id: 1000 + 300 * servo_id for servo_id in IDS}
    writer = GroupSyncWrite(port, handler, GOAL_POSITION, 4)
    for servo_id, goal in goals.items():
        assert writer.addParam(servo_id, list(goal.to_bytes(4, 'little')))
    ok(writer.txPacket())
    torque = GroupSyncWrite(port, handler, TORQUE_ENABLE, 1)
    for servo_id in IDS:
        assert torque.addParam(servo_id, [1])
    ok(torque.txPacket())
    assert board.wait_until(
        lambda b: b.firmware.present_positions(b._clock()) == list(goals.values()), WAIT_S)
    reader = GroupSyncRead(port, handler, PRESENT_POSITION, 4)
    for servo_id in reversed(IDS):                    # answered in the order asked
        assert reader.addParam(servo_id)
    ok(reader.txRxPacket())
    for servo_id, goal in goals.items():
        assert reader.isAvailable(servo_id, PRESENT_POSITION, 4)
        assert reader.getData(servo_id, PRESENT_POSITION, 4) == goal


def test_eeprom_is_refused_with_torque_on_and_written_with_torque_off(bus):
    board, port, handler = bus
    ok(*handler.write1ByteTxRx(port, 1, TORQUE_ENABLE, 1))
    result, error = handler.write4ByteTxRx(port, 1, HOMING_OFFSET, 100)
    assert result == COMM_SUCCESS
    assert error == ERRNUM_ACCESS
    assert 'not available' in handler.getRxPacketError(error)
    offset, result, error = handler.read4ByteTxRx(port, 1, HOMING_OFFSET)
    ok(result, error)
    assert offset == 0
    ok(*handler.write1ByteTxRx(port, 1, TORQUE_ENABLE, 0))
    ok(*handler.write4ByteTxRx(port, 1, HOMING_OFFSET, (-100) & 0xFFFFFFFF))
    offset, result, error = handler.read4ByteTxRx(port, 1, HOMING_OFFSET)
    ok(result, error)
    assert signed32(offset) == -100
    position, result, error = handler.read4ByteTxRx(port, 1, PRESENT_POSITION)
    ok(result, error)
    assert position == 2048 - 100                     # Present = actual + Homing Offset


def test_goals_beyond_the_limit_registers_are_refused(bus):
    board, port, handler = bus
    ok(*handler.write4ByteTxRx(port, 5, MIN_POSITION_LIMIT, 1000))
    ok(*handler.write4ByteTxRx(port, 5, MAX_POSITION_LIMIT, 3000))
    ok(*handler.write4ByteTxRx(port, 5, GOAL_POSITION, 2500))
    assert handler.write4ByteTxRx(port, 5, GOAL_POSITION, 3001) == (COMM_SUCCESS,
                                                                    ERRNUM_DATA_LIMIT)
    assert handler.write2ByteTxRx(port, 5, GOAL_POSITION, 2000) == (COMM_SUCCESS,
                                                                    ERRNUM_DATA_LENGTH)
    writer = GroupSyncWrite(port, handler, GOAL_POSITION, 4)
    writer.addParam(5, list((999).to_bytes(4, 'little')))
    ok(writer.txPacket())                             # a sync write is never answered...
    goal, result, error = handler.read4ByteTxRx(port, 5, GOAL_POSITION)
    ok(result, error)
    assert goal == 2500                               # ...and the servo kept its goal
    low, result, error = handler.read4ByteTxRx(port, 5, MIN_POSITION_LIMIT)
    ok(result, error)
    assert low == 1000


def test_a_hardware_error_sets_the_alert_bit_cuts_torque_and_a_reboot_clears_it(bus):
    board, port, handler = bus
    ok(*handler.write1ByteTxRx(port, 3, TORQUE_ENABLE, 1))
    with board.firmware.lock:
        board.firmware.servo(3).error_bits = OVERLOAD
    status, result, error = handler.read1ByteTxRx(port, 3, HARDWARE_ERROR_STATUS)
    assert result == COMM_SUCCESS
    assert error == ERRBIT_ALERT
    assert status == OVERLOAD
    assert 'Hardware error' in handler.getRxPacketError(error)
    assert DynamixelCodec().hardware_error_words(status) == ('overload',)
    torque, _, error = handler.read1ByteTxRx(port, 3, TORQUE_ENABLE)
    assert (torque, error) == (0, ERRBIT_ALERT)       # Shutdown(63) names overload
    handler.write1ByteTxRx(port, 3, TORQUE_ENABLE, 1)
    assert handler.read1ByteTxRx(port, 3, TORQUE_ENABLE)[0] == 0    # off until a reboot
    assert handler.ping(port, 2)[2] == 0              # the others are fine
    ok(*handler.reboot(port, 3))
    ok(*handler.write1ByteTxRx(port, 3, TORQUE_ENABLE, 1))
    torque, result, error = handler.read1ByteTxRx(port, 3, TORQUE_ENABLE)
    ok(result, error)
    assert torque == 1


def test_a_silent_servo_times_out_and_the_others_still_answer_a_sync_read(bus):
    board, port, handler = bus
    with board.firmware.lock:
        board.firmware.servo(6).silent = True
    assert handler.ping(port, 6)[1] == COMM_RX_TIMEOUT
    reader = GroupSyncRead(port, handler, PRESENT_POSITION, 4)
    for servo_id in IDS:
        reader.addParam(servo_id)
    assert reader.txRxPacket() == COMM_RX_TIMEOUT     # the SDK then flags the whole read
    received = {i: len(reader.data_dict[i]) for i in IDS}
    assert received == {1: 4, 2: 4, 3: 4, 4: 4, 5: 4, 6: 0}
    with board.firmware.lock:
        board.firmware.servo(6).silent = False
    ok(*handler.ping(port, 6)[1:])


def test_a_replugged_adapter_finds_the_servos_as_they_were(bus):
    board, port, handler = bus
    ok(*handler.write4ByteTxRx(port, 2, GOAL_POSITION, 2500))
    ok(*handler.write1ByteTxRx(port, 2, TORQUE_ENABLE, 1))
    port.closePort()
    board.replug()
    port = PortHandler(board.path)
    assert port.openPort()
    torque, result, error = handler.read1ByteTxRx(port, 2, TORQUE_ENABLE)
    ok(result, error)
    assert torque == 1
    assert handler.read4ByteTxRx(port, 2, GOAL_POSITION)[0] == 2500
    port.closePort()


def test_homing_offset_beyond_a_quarter_turn_is_ignored_in_position_mode(bus):
    board, port, handler = bus
    ok(*handler.write4ByteTxRx(port, 1, HOMING_OFFSET, 2000))      # answered without error
    assert handler.read4ByteTxRx(port, 1, HOMING_OFFSET)[0] == 0
    assert handler.read4ByteTxRx(port, 1, PRESENT_POSITION)[0] == 2048
    ok(*handler.write4ByteTxRx(port, 1, HOMING_OFFSET, 1024))
    assert handler.read4ByteTxRx(port, 1, PRESENT_POSITION)[0] == 3072
    ok(*handler.write1ByteTxRx(port, 2, OPERATING_MODE, EXTENDED_POSITION_MODE))
    ok(*handler.write4ByteTxRx(port, 2, HOMING_OFFSET, 2000))
    assert handler.read4ByteTxRx(port, 2, HOMING_OFFSET)[0] == 2000


def test_the_sdks_unstuffed_write_is_taken_by_length_as_the_servo_takes_it(bus):
    board, port, handler = bus
    # Homing Offset -3 then Moving Threshold 253: FD FF FF FF FD .. holds FF FF FD, which the
    # SDK's txPacket leaves unstuffed; the servo reads by length and checks the CRC.
    data = list((-3).to_bytes(4, 'little', signed=True) + (253).to_bytes(4, 'little'))
    ok(*handler.writeTxRx(port, 1, HOMING_OFFSET, 8, data))
    assert signed32(handler.read4ByteTxRx(port, 1, HOMING_OFFSET)[0]) == -3
    port.writePort(DynamixelCodec().write(2, HOMING_OFFSET, bytes(data)))    # stuffed
    assert board.wait_until(lambda b: b.firmware.servo(2).homing_offset == -3, WAIT_S)


def test_a_status_packet_that_needs_stuffing_is_unstuffed_by_the_sdk(bus):
    board, port, handler = bus
    ok(*handler.write4ByteTxRx(port, 3, PROFILE_VELOCITY, 3))       # 47 counts/s
    ok(*handler.write4ByteTxRx(port, 3, GOAL_POSITION, 0))
    ok(*handler.write1ByteTxRx(port, 3, TORQUE_ENABLE, 1))
    with board.firmware.lock:
        board.firmware.servo(3).load = -1
    replies = []
    board.on_exchange = lambda delivered, reply: replies.append(reply)
    # Present Load -1 (FF FF) then Present Velocity -3 (FD FF FF FF): FF FF FD in the answer.
    data, result, error = handler.readTxRx(port, 3, PRESENT_LOAD, 6)
    ok(result, error)
    assert bytes(data).hex(' ') == 'ff ff fd ff ff ff'
    assert b'\x55\x00\xff\xff\xfd\xfd\xff\xff\xff' in replies[-1]     # stuffed on the line


def test_corrupted_bytes_never_write_a_value_nobody_sent(sim_board, monkeypatch):
    monkeypatch.setattr('dynamixel_sdk.port_handler.LATENCY_TIMER', 5)  # lost answers expected
    board = sim_board(Protocol.DYNAMIXEL, channels=2, corrupt_rate=0.02, seed=7)
    port = PortHandler(board.path)
    assert port.openPort()
    handler = PacketHandler(2.0)
    sent = set()
    answered = 0
    for goal in range(1500, 1620, 2):
        sent.add(goal)
        result, _ = handler.write4ByteTxRx(port, 1, GOAL_POSITION, goal)
        answered += result == COMM_SUCCESS
        with board.firmware.lock:
            assert board.firmware.servo(1).register(board.firmware.table.goal_position) in (
                sent | {2048})
    port.closePort()
    assert 0 < answered < 60           # some packets were lost to the corruption, not all


def test_the_line_is_throttled_to_1_mbaud_by_default(bus):
    board, port, handler = bus
    reader = GroupSyncRead(port, handler, PRESENT_POSITION, 4)
    for servo_id in IDS:
        reader.addParam(servo_id)
    start = time.monotonic()
    for _ in range(20):
        ok(reader.txRxPacket())
    elapsed = time.monotonic() - start
    # Each round: a 20-byte sync read, then six 15-byte status packets, 10 bits a byte.
    assert board.baud == 1_000_000
    assert elapsed >= 20 * (20 + 6 * 15) * 10 / 1_000_000


@pytest.mark.timeout(20)
def test_sim_device_protocol_dynamixel_serves_limp_servos_and_reports_them(tmp_path):
    link = tmp_path / 'ttyDXL'
    process = subprocess.Popen(
        [sys.executable, '-m', 'fabrik_ros.boardsim', '--protocol', 'dynamixel', '--channels',
         '3', '--link', str(link), '--linger-s', '0.2'], stdout=subprocess.PIPE, text=True,
        cwd=REPO_ROOT)
    try:
        banner = process.stdout.readline()
        port = PortHandler(str(link))
        assert port.openPort()
        handler = PacketHandler(2.0)
        models = [handler.ping(port, servo_id)[0] for servo_id in (1, 2, 3)]
        ok(*handler.write4ByteTxRx(port, 2, GOAL_POSITION, 2500))
        ok(*handler.write1ByteTxRx(port, 2, TORQUE_ENABLE, 1))
        end = time.monotonic() + WAIT_S
        while handler.read4ByteTxRx(port, 2, PRESENT_POSITION)[0] != 2500:
            assert time.monotonic() < end, 'servo 2 never reached its goal'
        port.closePort()
    finally:
        process.terminate()
        try:
            output, _ = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()       # never left running, even when it hangs on the way out
            process.communicate()
            raise
    assert 'dynamixel' in banner and str(link) in banner
    assert models == [XL430_W250] * 3
    assert 'torque [False, True, False] positions [2048, 2500, 2048] counts' in output
    assert process.returncode == 0
