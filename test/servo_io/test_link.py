"""ServoLink against simulated boards on real ptys: every protocol, and recovery from faults."""

from dataclasses import replace
import threading
import tracemalloc

import pytest
import serial

from fabrik_ros.servo_io import (
    BoardRefused,
    LinkLost,
    LinkOptions,
    LinkState,
    LinkTimeout,
    open_serial,
    Protocol,
    ServoLink,
    WatchdogAction,
)
from test.polling import poll
from test.servo_io.conftest import FAST

ALL_PROTOCOLS = [Protocol.NATIVE, Protocol.SSC32, Protocol.MAESTRO]
PULSES = (1000, 1200, 1400, 1600, 1800, 2000)


def _wait_state(link, states, timeout_s=3.0):
    """Return True once the link is in one of ``states``."""
    return poll(lambda: link.state in states, timeout_s)


@pytest.mark.timeout(15)
@pytest.mark.parametrize('protocol', ALL_PROTOCOLS)
def test_pulses_enable_and_positions_round_trip(sim_board, servo_link, protocol):
    board = sim_board(protocol)
    link = servo_link(board)
    info = link.wait_ready(3.0)
    link.set_pulses(PULSES, move_s=0.0)
    link.enable([True] * 6)
    link.sync(2.0)
    assert board.wait_until(lambda b: b.pulses() == PULSES, 2.0)
    resolution = 10 if protocol is Protocol.SSC32 else 0
    assert poll(lambda: link.positions() is not None and all(
        got is not None and abs(got - want) <= resolution
        for got, want in zip(link.positions().pulses_us, PULSES, strict=True)), 2.0)
    assert info.channels == 6 and link.state is LinkState.READY


@pytest.mark.timeout(15)
@pytest.mark.parametrize('protocol', ALL_PROTOCOLS)
def test_detach_stops_the_pulses_and_positions_report_none(sim_board, servo_link, protocol):
    board = sim_board(protocol)
    link = servo_link(board)
    link.set_pulses(PULSES)
    link.enable(0b111111)
    link.sync(3.0)
    link.detach()
    link.sync(2.0)
    assert board.wait_until(lambda b: b.pulses() == (0,) * 6, 2.0)
    assert poll(lambda: link.positions() is not None
                and link.positions().pulses_us == (None,) * 6, 2.0)


@pytest.mark.timeout(15)
@pytest.mark.parametrize('protocol', ALL_PROTOCOLS)
def test_move_time_makes_the_board_slew(sim_board, servo_link, protocol):
    board = sim_board(protocol)
    link = servo_link(board)
    link.set_pulses((1000,) * 6)
    link.enable([True] * 6)
    link.sync(3.0)
    assert board.wait_until(lambda b: b.pulses()[0] == 1000, 2.0)
    link.set_pulses((2000,) * 6, move_s=0.6)
    assert board.wait_until(lambda b: 1100 < b.pulses()[0] < 1900, 2.0)
    assert board.wait_until(lambda b: b.pulses() == (2000,) * 6, 3.0)


@pytest.mark.timeout(15)
def test_zero_keeps_a_channels_target(sim_board, servo_link):
    board = sim_board()
    link = servo_link(board)
    link.set_pulses(PULSES)
    link.set_pulses((1500, 0, 0, 0, 0, 0))
    link.enable(0b111111)
    link.sync(3.0)
    assert board.wait_until(lambda b: b.pulses() == (1500,) + PULSES[1:], 2.0)


@pytest.mark.timeout(15)
def test_limits_reach_the_native_board_and_the_link_refuses_pulses_outside(sim_board, servo_link):
    board = sim_board()
    link = servo_link(board)
    link.set_pulses(PULSES)
    link.set_limits([(1100, 1900)] * 6)
    link.sync(3.0)
    with pytest.raises(ValueError) as raised:
        link.set_pulses((1000,) + PULSES[1:])
    assert board.limits == ((1100, 1900),) * 6
    assert board.targets() == (1100, 1200, 1400, 1600, 1800, 1900)
    assert 'pulses_us[0] = 1000, must be 0 or within the limits [1100, 1900]' in str(raised.value)


@pytest.mark.timeout(15)
def test_a_nack_from_the_board_surfaces_as_board_refused_on_sync(sim_board, servo_link):
    board = sim_board()
    board.firmware.model.limits = [(1000, 2000)] * 6     # narrower than the link believes
    link = servo_link(board)
    link.set_pulses((2200,) * 6)
    with pytest.raises(BoardRefused) as raised:
        link.sync(3.0)
    assert 'board refused pulses: NACK OUT_OF_RANGE' in str(raised.value)
    assert link.stats().nacks == 1


@pytest.mark.timeout(15)
@pytest.mark.parametrize('protocol', ALL_PROTOCOLS)
def test_unplug_and_replug_behind_the_same_symlink_delivers_the_latest_command(
        sim_board, servo_link, protocol):
    board = sim_board(protocol)
    link = servo_link(board)
    link.set_pulses(PULSES)
    link.enable([True] * 6)
    link.sync(3.0)
    board.unplug()
    assert _wait_state(link, {LinkState.DISCONNECTED, LinkState.CONNECTING})
    link.set_pulses((1500,) * 6)
    link.set_pulses((1700,) * 6)
    board.replug()
    link.wait_ready(3.0)
    assert board.wait_until(lambda b: b.pulses() == (1700,) * 6, 3.0)
    assert link.stats().reconnects == 1
    assert isinstance(link.last_error, LinkLost)


@pytest.mark.timeout(15)
def test_board_reset_makes_the_link_apply_everything_again(sim_board, servo_link):
    board = sim_board()
    link = servo_link(board)
    link.set_watchdog(5.0, WatchdogAction.DETACH)
    link.set_pulses(PULSES)
    link.enable([True] * 6)
    link.sync(3.0)
    board.reset()
    assert board.wait_until(lambda b: b.pulses() == PULSES and b.firmware.timeout_s == 5.0, 3.0)
    assert link.stats().board_resets == 1
    assert link.stats().reconnects == 0


@pytest.mark.timeout(15)
@pytest.mark.parametrize('protocol', ALL_PROTOCOLS)
def test_silent_board_is_declared_lost_and_the_link_comes_back(sim_board, servo_link, protocol):
    board = sim_board(protocol)
    link = servo_link(board)
    link.wait_ready(3.0)
    board.silent = True
    assert _wait_state(link, {LinkState.DISCONNECTED, LinkState.CONNECTING})
    assert isinstance(link.last_error, (LinkLost, LinkTimeout))
    board.silent = False
    link.wait_ready(3.0)
    link.set_pulses(PULSES)
    link.enable([True] * 6)
    link.sync(2.0)
    assert board.wait_until(lambda b: b.pulses() == PULSES, 2.0)


@pytest.mark.timeout(20)
def test_corrupted_line_is_survived_by_retries(sim_board, servo_link):
    board = sim_board(corrupt_rate=0.01, seed=3)
    link = servo_link(board)
    link.wait_ready(5.0)
    for step in range(60):
        link.set_pulses(tuple(1000 + step * 10 + ch for ch in range(6)))
        link.sync(5.0)
    stats = link.stats()
    assert board.targets() == tuple(1590 + ch for ch in range(6))
    assert stats.retries + stats.timeouts > 0


@pytest.mark.timeout(20)
@pytest.mark.parametrize('protocol', ALL_PROTOCOLS)
def test_commands_faster_than_the_line_are_coalesced_in_bounded_memory(
        sim_board, servo_link, protocol):
    board = sim_board(protocol)
    link = servo_link(board, options=LinkOptions(max_rate_hz=1000.0, poll_hz=0.0))
    link.set_pulses(PULSES)
    link.enable([True] * 6)
    link.sync(3.0)
    tracemalloc.start()
    for step in range(1000):
        link.set_pulses(tuple(1000 + step % 500 + ch for ch in range(6)))
    before = tracemalloc.get_traced_memory()[0]
    for step in range(1000, 20000):
        link.set_pulses(tuple(1000 + step % 500 + ch for ch in range(6)))
    growth = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    link.sync(3.0)
    stats = link.stats()
    assert board.wait_until(lambda b: b.pulses() == tuple(1499 + ch for ch in range(6)), 2.0)
    assert stats.commands == 20001 and stats.coalesced > 10000
    assert stats.frames_sent < 5000
    assert growth < 256 * 1024     # a queue of 19000 six-tuples would hold well over 1 MB


class _WatchedPort:
    """A real port that records which thread wrote what; it can claim queued output or fail."""

    def __init__(self, port, writes, queued, fail_thread):
        self._port = port
        self._writes = writes
        self._queued = queued
        self._fail_thread = fail_thread

    def __getattr__(self, name):
        return getattr(self._port, name)

    @property
    def out_waiting(self):
        return self._queued or self._port.out_waiting

    def write(self, data):
        thread = threading.current_thread().name
        self._writes.append((thread, bytes(data)))
        if thread == self._fail_thread:
            self._fail_thread = None
            raise serial.SerialException('write failed (test)')
        return self._port.write(data)


def _watched_link(sim_board, servo_link, protocol, queued=0, fail_thread=None):
    """Return ``(board, link, writes)``: a link whose port records writes, steady at PULSES."""
    writes = []

    def factory(path, baud, write_timeout_s):
        return _WatchedPort(open_serial(path, baud, write_timeout_s), writes, queued,
                            fail_thread)

    board = sim_board(protocol)
    link = servo_link(board, options=replace(FAST, poll_hz=0.0), serial_factory=factory)
    link.set_pulses(PULSES)
    link.enable([True] * 6)
    link.sync(3.0)
    return board, link, writes


@pytest.mark.timeout(15)
@pytest.mark.parametrize('protocol', ALL_PROTOCOLS)
def test_a_pulse_command_to_an_idle_port_is_written_by_the_callers_thread(
        sim_board, servo_link, protocol):
    caller = threading.current_thread().name
    board, link, writes = _watched_link(sim_board, servo_link, protocol)
    line_s = 50 * 10 / FAST.baud      # longer than a command takes on the line
    for step in range(1, 6):
        threading.Event().wait(line_s)
        link.set_pulses(tuple(pulse + 10 * step for pulse in PULSES))
        link.sync(3.0)
    assert board.wait_until(lambda b: b.pulses() == tuple(p + 50 for p in PULSES), 2.0)
    assert any(thread == caller for thread, _ in writes), writes


@pytest.mark.timeout(15)
@pytest.mark.parametrize('protocol', ALL_PROTOCOLS)
def test_bytes_queued_in_the_port_leave_every_write_to_the_link_thread(
        sim_board, servo_link, protocol):
    board, link, writes = _watched_link(sim_board, servo_link, protocol, queued=1)
    for step in range(1, 6):
        link.set_pulses(tuple(pulse + 10 * step for pulse in PULSES))
        link.sync(3.0)
    assert board.wait_until(lambda b: b.pulses() == tuple(p + 50 for p in PULSES), 2.0)
    assert writes and all(thread.startswith('ServoLink') for thread, _ in writes), writes


@pytest.mark.timeout(15)
def test_a_write_failing_in_the_callers_thread_makes_the_link_reconnect_and_resend(
        sim_board, servo_link):
    board, link, writes = _watched_link(sim_board, servo_link, Protocol.NATIVE,
                                        fail_thread=threading.current_thread().name)
    link.set_pulses((1500,) * 6)      # fails in this thread, raises nothing here
    assert board.wait_until(lambda b: b.pulses() == (1500,) * 6, 3.0)
    assert link.stats().reconnects == 1
    assert isinstance(link.last_error, LinkLost) and 'write failed' in str(link.last_error)


@pytest.mark.timeout(15)
def test_handshake_waits_for_a_slowly_booting_board(sim_board, servo_link):
    states = []
    board = sim_board(boot_delay_s=0.5)
    link = servo_link(board, on_state=states.append)
    info = link.wait_ready(3.0)
    assert info.firmware == 'fabrik-sim' and board.boots == 1
    assert states[:2] == [LinkState.CONNECTING, LinkState.READY]


@pytest.mark.timeout(15)
def test_no_answer_times_out_the_handshake_and_wait_ready(sim_board, servo_link):
    board = sim_board()
    board.silent = True
    link = servo_link(board, options=LinkOptions(handshake_timeout_s=0.2, backoff_min_s=0.02))
    with pytest.raises(LinkTimeout) as raised:
        link.wait_ready(1.0)
    assert 'board not ready within 1.0 s' in str(raised.value)
    assert isinstance(link.last_error, LinkTimeout)
    assert 'no NATIVE board answered within 0.2 s' in str(link.last_error)


@pytest.mark.timeout(15)
def test_missing_path_is_reported_as_link_lost(tmp_path):
    path = str(tmp_path / 'ttyNONE')
    with ServoLink(path, options=FAST) as link:
        assert poll(lambda: link.last_error is not None, 2.0)
        assert link.state is not LinkState.READY
        assert f'{path}: no such device (unplugged?)' in str(link.last_error)
        assert isinstance(link.last_error, LinkLost)


@pytest.mark.timeout(15)
def test_watchdog_detaches_when_the_host_goes_away(sim_board, servo_link):
    board = sim_board()
    link = servo_link(board)
    link.set_watchdog(0.2, WatchdogAction.DETACH)
    link.set_pulses(PULSES)
    link.enable([True] * 6)
    link.sync(3.0)
    link.close()
    assert board.wait_until(lambda b: b.enabled == (False,) * 6, 2.0)


@pytest.mark.timeout(15)
def test_link_keeps_the_watchdog_fed_while_idle(sim_board, servo_link):
    board = sim_board()
    link = servo_link(board, options=LinkOptions(poll_hz=0.0))
    link.set_watchdog(0.3, WatchdogAction.DETACH)
    link.set_pulses(PULSES)
    link.enable([True] * 6)
    link.sync(3.0)
    assert not board.wait_until(lambda b: b.firmware.watchdog_fired, 0.9)


@pytest.mark.timeout(15)
def test_closed_link_refuses_to_wait(sim_board, servo_link):
    board = sim_board()
    link = servo_link(board)
    link.wait_ready(3.0)
    link.close()
    assert link.state is LinkState.CLOSED
    with pytest.raises(LinkLost):
        link.sync(1.0)


@pytest.mark.parametrize('call, fragment', [
    (lambda link: link.set_pulses((1500,) * 5), 'len(pulses_us) = 5, must be 6'),
    (lambda link: link.set_pulses((1500,) * 6, move_s=-1.0), 'move_s = -1.0'),
    (lambda link: link.enable(0b1000000), 'enable mask = 0x40, must only use bits 0..5'),
    (lambda link: link.enable([True] * 6), 'channels [0, 1, 2, 3, 4, 5] have no target yet'),
    (lambda link: link.set_limits([(300, 2500)] * 6), 'must satisfy 400 <= min_us < max_us'),
    (lambda link: link.set_watchdog(70.0), 'timeout_s = 70.0'),
])
def test_commands_check_their_arguments_before_anything_is_sent(call, fragment):
    link = ServoLink('/dev/null/never-opened')
    with pytest.raises(ValueError) as raised:
        call(link)
    assert fragment in str(raised.value)


@pytest.mark.parametrize('protocol', [Protocol.SSC32, Protocol.MAESTRO])
def test_watchdog_is_refused_where_the_protocol_has_none(protocol):
    link = ServoLink('/dev/null/never-opened', protocol=protocol)
    with pytest.raises(ValueError) as raised:
        link.set_watchdog(1.0)
    assert f'protocol {protocol.name} has no board watchdog' in str(raised.value)


@pytest.mark.timeout(15)
@pytest.mark.parametrize('protocol', ALL_PROTOCOLS)
def test_the_dialect_is_reset_once_per_connect(sim_board, protocol):
    """Regression (issue 22.1): it was reset before the handshake and again after it."""
    board = sim_board(protocol)
    link = ServoLink(board.path, protocol=protocol, channels=board.channels, options=FAST)
    resets = []
    dialect_reset = link._dialect.reset
    link._dialect.reset = lambda: (resets.append(link.state), dialect_reset())
    with link:
        link.wait_ready(3.0)
        assert resets == [LinkState.CONNECTING]
        board.unplug()
        assert _wait_state(link, {LinkState.DISCONNECTED, LinkState.CONNECTING})
        board.replug()
        link.wait_ready(3.0)
        assert resets == [LinkState.CONNECTING] * 2
