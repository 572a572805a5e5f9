"""The simulated Feetech bus, driven over a real pty by the maker's own SDK (scservo_sdk).

scservo_sdk is an independent client: if it pings, reads, writes, sync reads and sync writes
the simulated STS3215 servos and sees what a real bus would answer, the simulator speaks the
protocol. Positions are checked board side under a deadline, never after a sleep.
"""

import time

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
import scservo_sdk as scs

from fabrik_ros.boardsim import cli
from fabrik_ros.boardsim.feetech_bus import FeetechBusFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io import Protocol
from fabrik_ros.servo_io.protocols.control_tables import STS3215
from fabrik_ros.servo_io.protocols.feetech import FeetechCodec

IDS = (1, 2, 3, 4, 5, 6)
BYTE = st.integers(0, 255)
DEADLINE_S = 10.0


@pytest.fixture
def bus(sim_board, monkeypatch):
    """Return ``(board, port, packet_handler)``: six STS3215 and the SDK's port open on them."""
    # The SDK waits 2 x its USB latency timer (16 ms) for an answer; a loaded test machine
    # may need longer, as a slow USB adapter does.
    monkeypatch.setattr(scs.port_handler, 'LATENCY_TIMER', 100)
    board = sim_board(Protocol.FEETECH, channels=len(IDS))
    port = scs.PortHandler(board.path)
    assert port.openPort()
    yield board, port, scs.PacketHandler(0)
    port.closePort()


def word(value: int) -> list[int]:
    return [scs.SCS_LOBYTE(value), scs.SCS_HIBYTE(value)]


def settles_at(board, servo_id: int, count: int) -> bool:
    return board.wait_until(
        lambda b: b.firmware.present_positions(time.monotonic())[servo_id - 1] == count,
        DEADLINE_S)


def test_every_servo_answers_a_ping_with_the_sts3215_model_number(bus):
    board, port, ph = bus
    for servo_id in IDS:
        assert ph.ping(port, servo_id) == (777, scs.COMM_SUCCESS, 0)
    assert ph.ping(port, 9)[1] == scs.COMM_RX_TIMEOUT


def test_the_servos_power_up_with_torque_on_holding_where_they_stand(bus):
    board, port, ph = bus
    assert ph.read1ByteTxRx(port, 3, 40) == (1, scs.COMM_SUCCESS, 0)
    assert ph.read2ByteTxRx(port, 3, 42)[0] == ph.read2ByteTxRx(port, 3, 56)[0] == 2048


def test_a_written_goal_is_reached_at_the_goal_speed_and_read_back(bus):
    board, port, ph = bus
    assert ph.write2ByteTxRx(port, 2, 46, 100) == (scs.COMM_SUCCESS, 0)    # 100 counts/s
    assert ph.write2ByteTxRx(port, 2, 42, 1048) == (scs.COMM_SUCCESS, 0)
    assert ph.read1ByteTxRx(port, 2, 66)[0] == 1                           # Moving
    speed = ph.read2ByteTxRx(port, 2, 58)[0]
    assert scs.SCS_TOHOST(speed, 15) == -100                               # toward 1048
    ph.write2ByteTxRx(port, 2, 46, 0)                                      # 0 = fastest
    ph.write2ByteTxRx(port, 2, 42, 1048)
    assert settles_at(board, 2, 1048)
    assert ph.read2ByteTxRx(port, 2, 56) == (1048, scs.COMM_SUCCESS, 0)
    assert ph.read1ByteTxRx(port, 2, 66)[0] == 0


def test_one_sync_write_moves_every_servo_and_one_sync_read_reports_them(bus):
    board, port, ph = bus
    writer = scs.GroupSyncWrite(port, ph, 42, 2)
    for servo_id in IDS:
        assert writer.addParam(servo_id, word(1000 + 100 * servo_id))
    assert writer.txPacket() == scs.COMM_SUCCESS
    for servo_id in IDS:
        assert settles_at(board, servo_id, 1000 + 100 * servo_id)
    reader = scs.GroupSyncRead(port, ph, 56, 2)
    for servo_id in reversed(IDS):        # the statuses come back in the order asked
        reader.addParam(servo_id)
    assert reader.txRxPacket() == scs.COMM_SUCCESS
    assert [reader.getData(servo_id, 56, 2) for servo_id in IDS] == [1100, 1200, 1300, 1400,
                                                                     1500, 1600]


def test_the_codec_sizes_are_the_bytes_the_sdks_sync_read_puts_on_the_line(bus):
    board, port, ph = bus
    codec = FeetechCodec()
    received, sent = board.bytes_received, board.bytes_sent
    reader = scs.GroupSyncRead(port, ph, 56, 2)
    for servo_id in IDS:
        reader.addParam(servo_id)
    assert reader.txRxPacket() == scs.COMM_SUCCESS
    request = len(codec.sync_read(56, 2, IDS))
    answers = len(IDS) * codec.status_size(2)
    assert (request, answers) == (14, 48)          # 620 µs at 1 Mbaud
    assert board.wait_until(lambda b: (b.bytes_received - received, b.bytes_sent - sent)
                            == (request, answers), DEADLINE_S)


def test_telemetry_and_error_bits_come_back_as_the_sdk_reads_them(bus):
    board, port, ph = bus
    servo = board.firmware.servo(4)
    servo.voltage_v, servo.temperature_c, servo.load = 7.4, 61.0, -250
    servo.error_bits = 0x24                                    # overheat + overload
    data, result, error = ph.readTxRx(port, 4, 56, 8)
    assert (result, error) == (scs.COMM_SUCCESS, 0x24)
    assert 'Overheat' in ph.getRxPacketError(error)
    block = bytes(data)
    assert STS3215.present_load.value_in(block, 56) == -250
    assert STS3215.present_voltage.value_in(block, 56) == 74
    assert STS3215.present_temperature.value_in(block, 56) == 61
    assert ph.read1ByteTxRx(port, 4, 65) == (0x24, scs.COMM_SUCCESS, 0x24)   # Status register
    assert ph.ping(port, 5) == (777, scs.COMM_SUCCESS, 0)                    # the others: none


def test_a_silent_servo_times_out_and_leaves_the_others_answering(bus):
    board, port, ph = bus
    board.firmware.servo(2).silent = True
    assert ph.ping(port, 2)[1] == scs.COMM_RX_TIMEOUT
    ph.write2ByteTxRx(port, 2, 42, 100)
    reader = scs.GroupSyncRead(port, ph, 56, 2)
    for servo_id in (1, 2, 3):
        reader.addParam(servo_id)
    assert reader.txRxPacket() == scs.COMM_RX_TIMEOUT         # at id 2
    assert reader.getData(1, 56, 2) == 2048
    board.firmware.servo(2).silent = False
    assert ph.read2ByteTxRx(port, 2, 42) == (2048, scs.COMM_SUCCESS, 0)   # it never heard


def test_torque_off_lets_a_hand_move_the_servo_and_torque_on_drives_to_the_goal_register(bus):
    board, port, ph = bus
    assert ph.write1ByteTxRx(port, 5, 40, 0) == (scs.COMM_SUCCESS, 0)
    board.firmware.move_by_hand(5, 3210, time.monotonic())
    assert ph.read2ByteTxRx(port, 5, 56)[0] == 3210
    ph.write2ByteTxRx(port, 5, 42, 3210)                      # the goal first: no jump
    ph.write1ByteTxRx(port, 5, 40, 1)
    assert ph.read2ByteTxRx(port, 5, 56)[0] == 3210
    board.firmware.move_by_hand(5, 3000, time.monotonic())   # pushed, it drives back
    assert settles_at(board, 5, 3210)
    ph.write1ByteTxRx(port, 5, 40, 0)
    board.firmware.move_by_hand(5, 1500, time.monotonic())
    ph.write1ByteTxRx(port, 5, 40, 1)                         # a stale goal: it jumps back
    assert settles_at(board, 5, 3210)


def test_goals_are_clamped_into_the_position_limit_registers(bus):
    board, port, ph = bus
    assert ph.write2ByteTxRx(port, 1, 11, 3000) == (scs.COMM_SUCCESS, 0)
    assert ph.write2ByteTxRx(port, 1, 9, 1000) == (scs.COMM_SUCCESS, 0)
    ph.write2ByteTxRx(port, 1, 42, 3500)
    assert settles_at(board, 1, 3000)
    assert board.firmware.servo(1).goal_target() == 3000
    ph.write2ByteTxRx(port, 1, 42, 200)
    assert settles_at(board, 1, 1000)
    assert (ph.read2ByteTxRx(port, 1, 9)[0], ph.read2ByteTxRx(port, 1, 11)[0]) == (1000, 3000)


def test_the_homing_offset_shifts_present_position_and_is_kept_only_when_unlocked(bus):
    board, port, ph = bus
    ph.write1ByteTxRx(port, 6, 40, 0)
    board.firmware.move_by_hand(6, 100, time.monotonic())
    ph.write2ByteTxRx(port, 6, 31, scs.SCS_TOSCS(-500, 11))   # locked: takes effect only
    assert ph.read2ByteTxRx(port, 6, 56)[0] == 600             # Present = shaft - offset
    board.firmware.power_cycle_servos(time.monotonic())
    assert ph.read2ByteTxRx(port, 6, 31)[0] == 0
    assert ph.read2ByteTxRx(port, 6, 56)[0] == 100
    assert ph.read1ByteTxRx(port, 6, 40)[0] == 1               # powered up stiff again
    ph.write1ByteTxRx(port, 6, 40, 0)                          # limp before the offset moves
    ph.write1ByteTxRx(port, 6, 55, 0)                          # unlock EEPROM
    ph.write2ByteTxRx(port, 6, 31, scs.SCS_TOSCS(200, 11))
    ph.write1ByteTxRx(port, 6, 55, 1)
    assert ph.read2ByteTxRx(port, 6, 56)[0] == 4096 - 100      # wrapped past the seam
    board.firmware.power_cycle_servos(time.monotonic())
    assert scs.SCS_TOHOST(ph.read2ByteTxRx(port, 6, 31)[0], 11) == 200
    assert ph.read2ByteTxRx(port, 6, 56)[0] == 4096 - 100


def test_a_replugged_adapter_finds_the_servos_as_they_were(bus):
    board, port, ph = bus
    ph.write2ByteTxRx(port, 3, 42, 777)
    assert settles_at(board, 3, 777)
    port.closePort()
    board.replug()
    assert port.openPort()
    assert ph.read2ByteTxRx(port, 3, 56) == (777, scs.COMM_SUCCESS, 0)
    assert ph.read1ByteTxRx(port, 3, 40)[0] == 1


def test_corrupted_bytes_fail_some_exchanges_and_never_the_bus(bus, monkeypatch):
    board, port, ph = bus
    monkeypatch.setattr(scs.port_handler, 'LATENCY_TIMER', 16)     # failures wait less
    board.corrupt_rate = 0.03
    results = [ph.ping(port, 1 + n % 6)[1] for n in range(40)]
    assert scs.COMM_SUCCESS in results
    assert set(results) - {scs.COMM_SUCCESS}
    board.corrupt_rate = 0.0
    monkeypatch.setattr(scs.port_handler, 'LATENCY_TIMER', 100)
    # A packet cut short by a corrupted length byte is dropped once the line is quiet; the SDK
    # never empties its own input, so late answers are thrown away here, as a host must.
    assert board.wait_until(lambda b: b.firmware.codec.pending == 0, DEADLINE_S)
    port.ser.reset_input_buffer()
    assert all(ph.ping(port, servo_id)[1] == scs.COMM_SUCCESS for servo_id in IDS)


def test_a_packet_cut_short_is_dropped_once_the_line_has_been_quiet():
    firmware = FeetechBusFirmware(ServoModel(2), 'STS3215')
    codec = FeetechCodec()
    assert firmware.receive(b'\xff\xff\x01\xf0', 0.0) == b''      # a length of 240 bytes
    assert firmware.receive(codec.ping(1), 0.005) == b''          # taken as its body
    assert firmware.receive(codec.ping(1), 0.030) == codec.status(1, 0, b'')


SOME_IDS = st.sampled_from([1, 2, 6, 0xFE, 0x30])
PACKETS = st.one_of(
    st.builds(lambda servo_id, instruction, params: FeetechCodec().packet(
        servo_id, instruction, params), SOME_IDS,
        st.sampled_from([1, 2, 3, 0x82, 0x83, 0x04, 0x55]), st.binary(max_size=40)),
    st.builds(lambda servo_id, address, size: FeetechCodec().packet(
        servo_id, 2, bytes((address, size))), SOME_IDS, BYTE, BYTE),
    st.builds(lambda address, size, ids: FeetechCodec().sync_read(address, size, ids),
              BYTE, st.integers(1, 255), st.lists(st.integers(1, 8), min_size=1, unique=True)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(PACKETS, st.binary(max_size=30)), max_size=12))
def test_any_bytes_from_the_host_get_well_formed_answers_or_none(chunks):
    firmware = FeetechBusFirmware(ServoModel(6), 'STS3215')
    host = FeetechCodec()
    for step, chunk in enumerate(chunks):
        host.feed(firmware.receive(chunk, step * 0.001))
        while host.take_status() is not None:
            pass
    assert (host.garbage_bytes, host.bad_checksums, host.pending) == (0, 0, 0)


def test_sim_device_offers_feetech_at_one_megabaud():
    options = cli.build_parser().parse_args(['--protocol', 'feetech', '--channels', '4'])
    board = cli._PythonBoard(options).board
    assert (board.protocol, board.baud, board.firmware.ids()) == (Protocol.FEETECH, 1_000_000,
                                                                  [1, 2, 3, 4])
    options = cli.build_parser().parse_args(['--protocol', 'ssc32'])
    assert cli._PythonBoard(options).board.baud == 115200
