"""The simulated board over a real pty, driven with plain pyserial and the codecs."""

import os
from pathlib import Path
import subprocess
import sys
import time

import pytest
import scservo_sdk as scs
import serial

from fabrik_ros.boardsim import cli
from fabrik_ros.boardsim.board import SimBoard
from fabrik_ros.servo_io import Deadline
from fabrik_ros.servo_io.protocols import maestro, native, ssc32
from fabrik_ros.servo_io.protocols.dialect import Protocol
from fabrik_ros.servo_io.protocols.maestro import MaestroError
from fabrik_ros.servo_io.protocols.native import (
    Command,
    Frame,
    FrameDecoder,
    NackError,
    Reply,
    WatchdogAction,
)

REPO_ROOT = Path(__file__).parent.parent.parent


def _end(process):
    """Stop a sim_device as SIGTERM does; kill it if it does not end (it must never stay)."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise


def _open(path):
    return serial.Serial(path, 115200, timeout=0.01, write_timeout=1.0)


def _read_exactly(port, size, timeout_s=1.0):
    end = time.monotonic() + timeout_s
    data = b''
    while len(data) < size and time.monotonic() < end:
        data += port.read(size - len(data))
    return data


def _next_frame(port, decoder, timeout_s=1.0, seq=None):
    """Return the next frame (with sequence number ``seq`` if given) within the timeout."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        frames = [item for item in decoder.feed(port.read(64)) if isinstance(item, Frame)
                  and seq in (None, item.seq)]
        if frames:
            return frames[0]
    return None


def _exchange(port, request, timeout_s=1.0):
    """Send a request and return the board's reply to it (READY and the like are skipped)."""
    port.write(request)
    return _next_frame(port, FrameDecoder(), timeout_s, seq=request[3])


@pytest.mark.timeout(10)
def test_native_board_sends_ready_once_booted_and_answers_ping(sim_board):
    board = sim_board(boot_delay_s=0.3)
    with _open(board.path) as port:
        ready = _next_frame(port, FrameDecoder(), timeout_s=2.0)
        reply = _exchange(port, native.encode_ping(9))
    assert (ready.seq, ready.cmd) == (0, Reply.READY)
    assert native.parse_board_info(ready.payload).channels == 6
    assert (reply.seq, reply.cmd, reply.payload[0]) == (9, Reply.DATA, Command.PING)


@pytest.mark.timeout(10)
def test_native_round_trip_sets_enables_and_reads_back_pulses(sim_board):
    board = sim_board()
    with _open(board.path) as port:
        pulses = [1000, 1200, 1400, 1600, 1800, 2000]
        assert _exchange(port, native.encode_set_pulses(1, pulses, 0)).cmd == Reply.ACK
        assert _exchange(port, native.encode_enable(2, 0b000111)).cmd == Reply.ACK
        reply = _exchange(port, native.encode_get_positions(3))
    assert native.parse_positions(reply.payload[1:]).pulses_us == tuple(pulses)
    assert board.pulses() == (1000, 1200, 1400, 0, 0, 0)
    assert board.enabled == (True, True, True, False, False, False)


@pytest.mark.timeout(10)
def test_native_board_nacks_out_of_range_and_changes_nothing(sim_board):
    board = sim_board()
    with _open(board.path) as port:
        _exchange(port, native.encode_set_pulses(1, [1500] * 6, 0))
        reply = _exchange(port, native.encode_set_pulses(2, [1600, 2600], 0))
    assert (reply.cmd, reply.payload) == (Reply.NACK, bytes((Command.SET_PULSES,
                                                             NackError.OUT_OF_RANGE)))
    assert board.targets() == (1500,) * 6


@pytest.mark.timeout(10)
def test_garbage_and_corrupt_frames_are_survived_by_the_board(sim_board):
    board = sim_board()
    corrupt = bytearray(native.encode_ping(4))
    corrupt[3] ^= 0x10
    with _open(board.path) as port:
        port.write(bytes(range(256)) + b'\xa5\x5a\xff')
        nack = _exchange(port, bytes(corrupt))
        reply = _exchange(port, native.encode_ping(5))
    assert (nack.cmd, nack.payload[1]) == (Reply.NACK, NackError.BAD_CRC)
    assert (reply.seq, reply.cmd) == (5, Reply.DATA)


@pytest.mark.timeout(10)
@pytest.mark.parametrize('action, expected_enabled', [
    (WatchdogAction.HOLD, (True,) * 6), (WatchdogAction.DETACH, (False,) * 6)])
def test_watchdog_acts_once_the_host_is_silent(sim_board, action, expected_enabled):
    board = sim_board()
    with _open(board.path) as port:
        _exchange(port, native.encode_set_pulses(1, [1000] * 6, 0))
        _exchange(port, native.encode_enable(2, 0x3F))
        _exchange(port, native.encode_set_pulses(3, [2000] * 6, 1000))
        _exchange(port, native.encode_set_timeout(4, 200, action))
        assert board.wait_until(lambda b: b.firmware.watchdog_fired, 2.0)
        held = board.positions()
    assert board.enabled == expected_enabled
    assert 1000 < held[0] < 2000 and board.targets()[0] in (2000, held[0])
    assert (board.targets()[0] == held[0]) == (action is WatchdogAction.HOLD)


@pytest.mark.timeout(10)
def test_silent_board_does_not_answer(sim_board):
    board = sim_board()
    board.silent = True
    with _open(board.path) as port:
        assert _exchange(port, native.encode_ping(1), timeout_s=0.3) is None


@pytest.mark.timeout(10)
def test_unplug_breaks_the_port_and_replug_comes_back_behind_the_same_symlink(sim_board):
    board = sim_board()
    port = _open(board.path)
    board.unplug()
    assert not os.path.lexists(board.link_path)
    with pytest.raises(serial.SerialException):
        port.read(1)
    port.close()
    board.replug()
    assert os.path.realpath(board.link_path) == board.pty_path
    with _open(board.path) as port:
        assert _exchange(port, native.encode_ping(1)).cmd == Reply.DATA


@pytest.mark.timeout(10)
def test_baud_model_limits_throughput_to_the_line_rate(sim_board):
    board = sim_board()
    request = native.encode_get_positions(1)
    with _open(board.path) as port:
        start = time.monotonic()
        for seq in range(20):
            _exchange(port, native.encode_get_positions(seq))
        elapsed = time.monotonic() - start
    reply_size = 7 + 2 + 2 * 6
    assert elapsed >= 20 * (len(request) + reply_size) * 10 / 115200


@pytest.mark.timeout(10)
def test_ssc32_board_moves_groups_and_answers_q_qp_and_ver(sim_board):
    board = sim_board(Protocol.SSC32)
    with _open(board.path) as port:
        port.write(ssc32.encode_group_move({0: 1000, 1: 2000}))
        port.write(ssc32.encode_group_move({0: 2000, 1: 1000}, time_ms=400))
        port.write(ssc32.encode_query_movement())
        moving = _read_exactly(port, 1)
        assert board.wait_until(lambda b: b.pulses()[:2] == (2000, 1000), 2.0)
        port.write(ssc32.encode_query_movement() + ssc32.encode_query_pulse_widths([0, 1, 2]))
        answers = _read_exactly(port, 4)
        port.write(ssc32.encode_version())
        version = _read_exactly(port, len('SSC32-V2.50USB\r'))
    assert moving == b'+' and answers == b'.' + bytes((200, 100, 0))
    assert version == b'SSC32-V2.50USB\r'


@pytest.mark.timeout(10)
def test_ssc32_p0_stops_the_pulses(sim_board):
    board = sim_board(Protocol.SSC32)
    with _open(board.path) as port:
        port.write(ssc32.encode_group_move({3: 1500}))
        assert board.wait_until(lambda b: b.pulses()[3] == 1500, 1.0)
        port.write(ssc32.encode_stop_pulses([3]))
        assert board.wait_until(lambda b: b.pulses()[3] == 0, 1.0)


@pytest.mark.timeout(10)
def test_maestro_board_targets_speeds_positions_and_errors(sim_board):
    board = sim_board(Protocol.MAESTRO)
    with _open(board.path) as port:
        port.write(maestro.encode_set_target(0, 1000) + maestro.encode_set_speed(0, 40)
                   + maestro.encode_set_target(0, 1100))
        port.write(maestro.encode_get_position(0))
        first = maestro.decode_u16(_read_exactly(port, 2))
        assert board.wait_until(lambda b: b.pulses()[0] == 1100, 2.0)
        port.write(bytes((0x84, 0x00)) + maestro.encode_get_errors())
        errors = maestro.decode_u16(_read_exactly(port, 2))
        port.write(maestro.encode_get_errors())
        cleared = maestro.decode_u16(_read_exactly(port, 2))
    assert 4000 <= first < 4400
    assert errors & MaestroError.SERIAL_PROTOCOL and cleared == 0


@pytest.mark.timeout(10)
def test_maestro_target_zero_and_go_home_stop_the_pulses(sim_board):
    board = sim_board(Protocol.MAESTRO)
    with _open(board.path) as port:
        port.write(maestro.encode_set_multiple_targets(0, [1500, 1500]))
        assert board.wait_until(lambda b: b.pulses()[:2] == (1500, 1500), 1.0)
        port.write(maestro.encode_set_target(0, 0))
        assert board.wait_until(lambda b: b.pulses()[:2] == (0, 1500), 1.0)
        port.write(maestro.encode_go_home())
        assert board.wait_until(lambda b: b.pulses()[:2] == (0, 0), 1.0)


@pytest.mark.timeout(20)
def test_console_entry_point_serves_a_board_behind_the_given_symlink(tmp_path):
    link = tmp_path / 'ttyFAKE'
    process = subprocess.Popen(
        [sys.executable, '-m', 'fabrik_ros.boardsim', '--protocol', 'native',
         '--link', str(link)], stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    try:
        banner = process.stdout.readline()
        with _open(str(link)) as port:
            reply = _exchange(port, native.encode_ping(3))
    finally:
        _end(process)
    assert str(link) in banner and 'native' in banner
    assert reply.cmd == Reply.DATA
    assert process.returncode == 0 and not link.exists()


def test_a_regular_file_is_never_replaced_by_the_symlink(tmp_path):
    precious = tmp_path / 'notes.txt'
    precious.write_text('keep me', encoding='utf-8')
    with pytest.raises(FileExistsError) as raised:
        SimBoard(link_path=str(precious)).start()
    assert precious.read_text(encoding='utf-8') == 'keep me'
    assert 'exists and is not a symlink' in str(raised.value)


@pytest.mark.timeout(20)
def test_channels_gives_the_board_the_outputs_an_arm_file_uses(tmp_path):
    """Issue 34.3: an arm on channels 1..6 needs a 7-channel board (sim.launch.py passes it)."""
    link = tmp_path / 'ttySEVEN'
    process = subprocess.Popen(
        [sys.executable, '-m', 'fabrik_ros.boardsim', '--protocol', 'native', '--channels', '7',
         '--link', str(link)], stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        start_new_session=True)
    try:
        banner = process.stdout.readline()
        with _open(str(link)) as port:
            reply = _exchange(port, native.encode_ping(4))
    finally:
        _end(process)
    assert 'native board, 7 channels' in banner
    assert native.parse_board_info(reply.payload[1:]).channels == 7


@pytest.mark.parametrize('args, rule', [
    (['--channels', '9'], '--channels 9: must be within [1, 8] for --protocol native'),
    (['--channels', '0', '--protocol', 'feetech'],
     '--channels 0: must be within [1, 253] for --protocol feetech'),
    (['--channels', '7', '--board', 'simavr'],
     '--channels 7: --board simavr runs the Uno firmware, which has 6 channels'),
])
def test_a_channel_count_the_board_cannot_have_is_refused_before_it_starts(args, rule, capsys,
                                                                           tmp_path):
    with pytest.raises(SystemExit) as refused:
        cli.main([*args, '--link', str(tmp_path / 'tty')])
    assert refused.value.code == 2
    assert capsys.readouterr().err.strip().endswith(f'sim_device: error: {rule}')
    assert not (tmp_path / 'tty').exists()


@pytest.mark.parametrize('args, rule', [
    (['--object', '1:900'], '--object: --protocol native drives PWM servos, which report no '
                            'position to stop at; objects need a bus (feetech, dynamixel)'),
    (['--protocol', 'feetech', '--channels', '6', '--object', '7:900'],
     '--object 7:...: no servo with id 7 (ids 1..6)'),
    (['--protocol', 'feetech', '--object', 'six'],
     "argument --object: 'six': must be ID:COUNT, e.g. 6:2300"),
])
def test_an_object_the_board_cannot_have_is_refused_before_it_starts(args, rule, capsys,
                                                                     tmp_path):
    with pytest.raises(SystemExit) as refused:
        cli.main([*args, '--link', str(tmp_path / 'tty')])
    assert refused.value.code == 2
    assert capsys.readouterr().err.strip().endswith(f'sim_device: error: {rule}')


@pytest.mark.timeout(60)
def test_an_object_stops_a_bus_servo_and_it_pushes_at_its_torque_limit(tmp_path,
                                                                       monkeypatch):
    # The SDK gives up on an answer after about twice this [ms]; the simulator is another
    # process, which a loaded machine can keep from answering for a few hundred ms.
    monkeypatch.setattr(scs.port_handler, 'LATENCY_TIMER', 1000)
    link = tmp_path / 'ttyBUS'
    process = subprocess.Popen(
        [sys.executable, '-m', 'fabrik_ros.boardsim', '--protocol', 'feetech', '--channels', '6',
         '--object', '6:2300', '--link', str(link)], stdout=subprocess.PIPE, text=True,
        cwd=REPO_ROOT, start_new_session=True)
    try:
        assert 'feetech' in process.stdout.readline()
        port = scs.PortHandler(str(link))
        assert port.openPort()
        handler = scs.PacketHandler(0)
        assert handler.write2ByteTxRx(port, 6, 42, 2600)[0] == scs.COMM_SUCCESS
        reached = Deadline(10.0)
        while handler.read2ByteTxRx(port, 6, 56)[0] != 2300 and not reached.expired():
            pass
        position = handler.read2ByteTxRx(port, 6, 56)[0]
        load = handler.read2ByteTxRx(port, 6, 60)[0]
        port.closePort()
    finally:
        _end(process)
    assert (position, load) == (2300, 1000)       # stopped at the object, 100.0 % load
