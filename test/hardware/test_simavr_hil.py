"""The Uno firmware in simavr, driven over its pty with pyserial and measured on its pins.

Every time below is simulated time from the harness log (cycle counts at 16 MHz), so the
checks hold however fast the machine runs the simulation.
"""

import random
import time

import pytest

from fabrik_ros.boardsim.simavr_board import CHANNELS, Pulse, SimavrBoard
from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.native import (
    BoardInfo,
    Command,
    Frame,
    FrameDecoder,
    NackError,
    PositionReport,
    Reply,
    WatchdogAction,
)
from test.hardware.frame_host import FrameHost

BOARD_INFO = BoardInfo(1, CHANNELS, 'fabrik_servo_bridge')
FRAME_S = 0.020
WIDTH_TOLERANCE_US = 2.0
PULSE_STALENESS_S = 0.002   # 1 ms main-loop wake-up + the board's 1 ms clock step
WAIT_S = 10.0          # real-time bound on any single wait; simulated spans are far shorter
# The firmware's UART: 16 MHz / (8 * (16 + 1)), 2.1 % above 115200; the harness runs the
# simulated line at this rate.
UART_BAUD = 16_000_000 / (8 * 17)


def ack(frame: Frame, cmd: Command) -> bool:
    return frame.cmd == Reply.ACK and frame.payload == bytes((cmd,))


def nack(frame: Frame, cmd: Command, error: NackError) -> bool:
    return frame.cmd == Reply.NACK and frame.payload == bytes((cmd, error))


def command_time_s(board: SimavrBoard, host: FrameHost) -> float:
    """Return when the last byte the host sent reached the board's UART [s, simulated]."""
    board.wait_for(lambda: len(board.received) >= host.bytes_sent, WAIT_S, 'the host bytes')
    return board.received[host.bytes_sent - 1].time_s


def reply_time_s(board: SimavrBoard, reply: Frame) -> float:
    """Return when the board began sending ``reply`` [s, simulated]: the command's effect time.

    The board answers right after it has applied a command, so this is when it took effect.
    """
    def find() -> float:
        sent = board.sent
        start = 0
        while start + 5 <= len(sent):
            size = native.HEADER_SIZE + sent[start + 2].value + native.CRC_SIZE
            if sent[start + 3].value == reply.seq and sent[start + 4].value == reply.cmd:
                return sent[start].time_s
            start += size
        return -1.0

    board.wait_for(lambda: find() >= 0, WAIT_S, f'reply {reply} in the harness log')
    return find()


def set_pulses(host: FrameHost, pulses_us: list[int], move_ms: int = 0) -> Frame:
    return host.request(native.encode_set_pulses(host.next_seq(), pulses_us, move_ms))


def enable(host: FrameHost, mask: int) -> Frame:
    return host.request(native.encode_enable(host.next_seq(), mask))


def pulses_after(board: SimavrBoard, channel: int, since_s: float, count: int) -> list[Pulse]:
    """Wait for ``count`` pulses of ``channel`` rising after ``since_s`` and return them."""
    board.wait_for(lambda: len(board.pulses(channel, since_s)) >= count, WAIT_S,
                   f'{count} pulses on channel {channel}')
    return board.pulses(channel, since_s)[:count]


@pytest.mark.timeout(30)
def test_reset_sends_one_ready_frame_and_nothing_else(board: SimavrBoard, host: FrameHost):
    ready_size = len(native.encode_ready(BOARD_INFO))
    board.wait_for(lambda: len(board.sent) >= ready_size, WAIT_S, 'the boot READY')
    board.reset()
    ready = host.wait_frame(lambda f: f.cmd == Reply.READY, WAIT_S)
    assert ready == Frame(0, Reply.READY, native.board_info_bytes(BOARD_INFO))
    board.wait_sim_time(board.now_s + 0.2, WAIT_S)
    # Since power-up the line carried the boot READY, the reset READY, and not a byte more.
    assert bytes(b.value for b in board.sent) == 2 * native.encode_ready(BOARD_INFO)


@pytest.mark.timeout(30)
def test_no_pulse_until_enabled_then_first_pulse_is_the_target(board: SimavrBoard,
                                                               host: FrameHost):
    assert ack(set_pulses(host, [1500] * CHANNELS), Command.SET_PULSES)
    set_at = command_time_s(board, host)
    board.wait_sim_time(set_at + 0.1, WAIT_S)
    assert board.pulses() == []
    assert board.longest_high_ticks == 0

    reply = enable(host, 0b000100)
    assert ack(reply, Command.ENABLE)
    enabled_at = reply_time_s(board, reply)
    first = pulses_after(board, 2, enabled_at, 1)[0]
    assert first.width_us == pytest.approx(1500, abs=WIDTH_TOLERANCE_US)
    assert first.rise_s - enabled_at <= FRAME_S + 0.001
    assert {p.channel for p in board.pulses()} == {2}


@pytest.mark.timeout(30)
def test_detach_stops_the_pulses_and_enable_resumes_at_the_same_width(board: SimavrBoard,
                                                                      host: FrameHost):
    set_pulses(host, [1700])
    enable(host, 0b1)
    pulses_after(board, 0, 0.0, 2)
    detach = enable(host, 0)
    assert ack(detach, Command.ENABLE)
    detached_at = reply_time_s(board, detach)
    board.wait_sim_time(detached_at + 0.1, WAIT_S)
    assert board.pulses(0, detached_at + FRAME_S) == []
    resume = enable(host, 0b1)
    resumed = pulses_after(board, 0, reply_time_s(board, resume), 3)
    assert [p.width_us for p in resumed] == pytest.approx([1700] * 3, abs=WIDTH_TOLERANCE_US)


@pytest.mark.timeout(30)
def test_commanded_pulses_appear_within_2us_at_50hz(board: SimavrBoard, host: FrameHost):
    targets = [500, 1000, 1234, 1500, 2000, 2500]
    assert ack(set_pulses(host, targets), Command.SET_PULSES)
    assert ack(enable(host, 0b111111), Command.ENABLE)
    since = command_time_s(board, host)
    for channel, target in enumerate(targets):
        pulses = pulses_after(board, channel, since, 12)
        widths = [p.width_us for p in pulses]
        assert widths == pytest.approx([target] * len(widths), abs=WIDTH_TOLERANCE_US)
        periods = [b.rise_s - a.rise_s for a, b in zip(pulses, pulses[1:], strict=False)]
        assert periods == pytest.approx([FRAME_S] * len(periods), rel=0.01)


@pytest.mark.timeout(30)
def test_received_bytes_and_heartbeats_carry_the_host_clock(board: SimavrBoard, host: FrameHost):
    # The simulation takes each byte after the host wrote it and before the host reads the
    # reply: an ordering of the host's own monotonic stamps, not a bound on any duration.
    written_after = time.monotonic()
    assert ack(set_pulses(host, [1500]), Command.SET_PULSES)
    replied_before = time.monotonic()
    command_time_s(board, host)
    stamps = [b.host_s for b in board.received]
    assert all(s is not None for s in stamps)
    assert written_after <= stamps[0] and stamps[-1] <= replied_before
    assert stamps == sorted(stamps)
    board.wait_for(lambda: len(board.clock()) >= 5, WAIT_S, 'five heartbeats')
    sim_s, host_s = zip(*board.clock(), strict=True)
    assert all(b - a == pytest.approx(0.010, abs=0.0011)
               for a, b in zip(sim_s, sim_s[1:], strict=False))
    assert list(host_s) == sorted(host_s)


SLOT_S = 0.003


@pytest.mark.timeout(60)
def test_a_width_sent_mid_frame_is_pulsed_at_that_channels_next_slot(board: SimavrBoard,
                                                                    host: FrameHost):
    old = [1000] * CHANNELS
    set_pulses(host, old)
    assert ack(enable(host, 0b111111), Command.ENABLE)
    pulses_after(board, CHANNELS - 1, 0.0, 2)
    later_in_same_frame = 0
    for attempt in range(20):
        new = [1100 + 100 * attempt + 10 * ch for ch in range(CHANNELS)]
        # Send just after a frame starts (channel 0's pulse), so most slots of the frame are
        # still ahead; how soon the host manages that does not matter, only where it lands.
        frame_seen = len(board.pulses(0))
        board.wait_for(lambda seen=frame_seen: len(board.pulses(0)) > seen, WAIT_S, 'a new frame')
        reply = set_pulses(host, new)
        assert ack(reply, Command.SET_PULSES)
        applied_s = reply_time_s(board, reply)
        frame_start_s = max(p.rise_s for p in board.pulses(0) if p.rise_s <= applied_s)
        for channel in range(CHANNELS):
            pulses = pulses_after(board, channel, applied_s - SLOT_S, 3)
            for pulse in pulses:
                # No glitch: every pulse is wholly the old width or wholly the new one.
                assert (pulse.width_us == pytest.approx(old[channel], abs=WIDTH_TOLERANCE_US) or
                        pulse.width_us == pytest.approx(new[channel], abs=WIDTH_TOLERANCE_US))
            started = [p for p in pulses if p.rise_s < applied_s]
            assert all(p.width_us == pytest.approx(old[channel], abs=WIDTH_TOLERANCE_US)
                       for p in started), (channel, started)
            # The board hands the widths to the pulse timer before it queues its reply, so the
            # first slot to start after the reply's first byte carries them: not a frame later.
            next_slot = next(p for p in pulses if p.rise_s >= applied_s)
            assert next_slot.width_us == pytest.approx(new[channel], abs=WIDTH_TOLERANCE_US), (
                attempt, channel, next_slot, applied_s)
            if next_slot.rise_s < frame_start_s + FRAME_S:
                later_in_same_frame += 1
        old = new
        if later_in_same_frame >= 3:
            break
    # Slots still ahead in the frame the command arrived in were seen to take it.
    assert later_in_same_frame >= 3


@pytest.mark.timeout(30)
def test_pulse_widths_hold_while_the_serial_line_is_saturated(board: SimavrBoard,
                                                              host: FrameHost):
    targets = [600, 900, 1234, 1777, 2100, 2400]
    set_pulses(host, targets)
    assert ack(enable(host, 0b111111), Command.ENABLE)
    request_size = len(native.encode_enable(0, 0))
    sent_before = len(board.sent) + 600 * len(native.encode_ack(0, Command.ENABLE))
    received_before = host.bytes_sent
    # 600 ENABLEs back to back, each ACKed with as many bytes: both directions of the line
    # run flat out for ~0.4 s, and no request may be lost.
    host.send(b''.join(native.encode_enable(100 + i % 100, 0b111111) for i in range(600)))
    board.wait_for(lambda: len(board.sent) >= sent_before, WAIT_S, 'the 600 ACKs')
    busy_from = board.received[received_before].time_s
    busy_until = board.sent[-1].time_s
    assert busy_until - busy_from >= 600 * request_size * 10 / UART_BAUD
    for channel, target in enumerate(targets):
        widths = [p.width_us for p in board.pulses(channel, busy_from) if p.rise_s < busy_until]
        assert len(widths) >= 18
        assert widths == pytest.approx([target] * len(widths), abs=WIDTH_TOLERANCE_US)


@pytest.mark.timeout(30)
def test_move_time_interpolates_linearly_on_the_pins(board: SimavrBoard, host: FrameHost):
    set_pulses(host, [1000])
    enable(host, 0b1)
    reply = set_pulses(host, [2000], move_ms=400)
    assert ack(reply, Command.SET_PULSES)
    start = reply_time_s(board, reply)
    pulses = pulses_after(board, 0, start, 25)

    def planned_us(time_s: float) -> float:
        return min(2000.0, 1000.0 + 2500.0 * max(0.0, time_s - start))

    # A pulse takes the width the main loop computed last, at most PULSE_STALENESS_S before.
    for pulse in pulses:
        lowest = planned_us(pulse.rise_s - PULSE_STALENESS_S) - WIDTH_TOLERANCE_US
        highest = planned_us(pulse.rise_s) + WIDTH_TOLERANCE_US
        assert lowest <= pulse.width_us <= highest, pulse
    widths = [p.width_us for p in pulses]
    assert widths == sorted(widths)
    assert widths[-1] == pytest.approx(2000, abs=WIDTH_TOLERANCE_US)
    arrived = next(p.rise_s for p in pulses if p.width_us > 2000 - WIDTH_TOLERANCE_US)
    assert start + 0.400 <= arrived <= start + 0.400 + FRAME_S + PULSE_STALENESS_S


@pytest.mark.timeout(30)
def test_limits_refuse_pulses_outside_and_clamp_the_current_one(board: SimavrBoard,
                                                                host: FrameHost):
    set_pulses(host, [2400, 600])
    enable(host, 0b11)
    limits = native.encode_set_limits(host.next_seq(), [(1000, 2000), (700, 2300)])
    assert ack(host.request(limits), Command.SET_LIMITS)
    since = command_time_s(board, host)
    assert pulses_after(board, 0, since, 2)[-1].width_us == pytest.approx(2000, abs=2)
    assert pulses_after(board, 1, since, 2)[-1].width_us == pytest.approx(700, abs=2)

    refused = set_pulses(host, [2100, 1500])
    assert nack(refused, Command.SET_PULSES, NackError.OUT_OF_RANGE)
    bad_pair = native.encode_set_limits(host.next_seq(), [(300, 2000)])
    assert nack(host.request(bad_pair), Command.SET_LIMITS, NackError.OUT_OF_RANGE)
    after = command_time_s(board, host)
    assert [p.width_us for p in pulses_after(board, 0, after, 3)] == pytest.approx([2000] * 3,
                                                                                   abs=2)
    assert [p.width_us for p in pulses_after(board, 1, after, 3)] == pytest.approx([700] * 3,
                                                                                   abs=2)


@pytest.mark.timeout(60)
def test_limits_stored_in_eeprom_survive_reset_and_restart(hardware_build, tmp_path):
    eeprom = tmp_path / 'eeprom.bin'
    with SimavrBoard(eeprom_path=eeprom) as board:
        host = FrameHost(board.port)
        limits = native.encode_set_limits(host.next_seq(), [(800, 2200)] * CHANNELS)
        assert ack(host.request(limits), Command.SET_LIMITS)
        board.wait_sim_time(command_time_s(board, host) + 0.3, WAIT_S)  # EEPROM writes done
        board.reset()
        host.wait_frame(lambda f: f.cmd == Reply.READY, WAIT_S)
        assert nack(set_pulses(host, [2300]), Command.SET_PULSES, NackError.OUT_OF_RANGE)
        host.close()
    with SimavrBoard(eeprom_path=eeprom) as board:
        host = FrameHost(board.port)
        assert nack(set_pulses(host, [700]), Command.SET_PULSES, NackError.OUT_OF_RANGE)
        assert ack(set_pulses(host, [800]), Command.SET_PULSES)
        host.close()
    image = bytearray(eeprom.read_bytes())
    image[5] ^= 0x01          # one flipped bit fails the checksum: defaults again
    eeprom.write_bytes(bytes(image))
    with SimavrBoard(eeprom_path=eeprom) as board:
        host = FrameHost(board.port)
        assert ack(set_pulses(host, [2400]), Command.SET_PULSES)
        host.close()


@pytest.mark.timeout(30)
def test_watchdog_detaches_after_configured_silence(board: SimavrBoard, host: FrameHost):
    set_pulses(host, [1500, 1500])
    enable(host, 0b11)
    timeout = native.encode_set_timeout(host.next_seq(), 150, WatchdogAction.DETACH)
    reply = host.request(timeout)
    assert ack(reply, Command.SET_TIMEOUT)
    silent_from = reply_time_s(board, reply)
    board.wait_sim_time(silent_from + 0.35, WAIT_S)
    last_rise = max(p.rise_s for p in board.pulses(0))
    # The last pulse starts before the timeout ends and the next one would have started
    # after it: the watchdog fired 150 ms into the silence (its clock steps by 1 ms).
    assert silent_from + 0.150 - FRAME_S <= last_rise <= silent_from + 0.152
    assert board.high_mask == 0
    positions = host.request(native.encode_get_positions(host.next_seq()))
    kept = PositionReport(0, (1500, 1500, 0, 0, 0, 0))
    assert positions.payload == bytes((Command.GET_POSITIONS,)) + native.position_bytes(kept)


@pytest.mark.timeout(30)
def test_watchdog_hold_freezes_a_move_and_keeps_pulsing(board: SimavrBoard, host: FrameHost):
    set_pulses(host, [1000])
    enable(host, 0b1)
    timeout = native.encode_set_timeout(host.next_seq(), 200, WatchdogAction.HOLD)
    assert ack(host.request(timeout), Command.SET_TIMEOUT)
    set_pulses(host, [2000], move_ms=1000)
    silent_from = command_time_s(board, host)
    held = pulses_after(board, 0, silent_from + 0.25, 10)
    # 200 ms into a 1000 ms move of 1000 µs: held at 1200 µs, still pulsing at 50 Hz.
    assert [p.width_us for p in held] == pytest.approx([1200] * 10, abs=3)


@pytest.mark.timeout(30)
def test_corrupted_frame_is_nacked_and_changes_nothing(board: SimavrBoard, host: FrameHost):
    set_pulses(host, [1500])
    enable(host, 0b1)
    frame = bytearray(native.encode_set_pulses(host.next_seq(), [2000], 0))
    frame[-2] ^= 0x40
    reply = host.request(bytes(frame))
    assert reply == Frame(frame[3], Reply.NACK, bytes((Command.SET_PULSES, NackError.BAD_CRC)))
    since = command_time_s(board, host)
    assert [p.width_us for p in pulses_after(board, 0, since, 5)] == pytest.approx([1500] * 5,
                                                                                   abs=2)


def _garbage(rng: random.Random, seq: int) -> bytes:
    """Noise, bit-flipped frames and valid frames that may move or enable channels."""
    choice = rng.randrange(4)
    if choice == 0:
        size = rng.randrange(40)
        return bytes(rng.choice((0xA5, 0x5A, rng.randrange(256))) for _ in range(size))
    if choice == 1:
        count = rng.randrange(1, CHANNELS + 1)
        pulses = [rng.choice((0, rng.randrange(300, 2800))) for _ in range(count)]
        return native.encode_set_pulses(seq, pulses, rng.randrange(300))
    if choice == 2:
        return native.encode_enable(seq, rng.randrange(1 << CHANNELS))
    frame = bytearray(native.encode_set_pulses(seq, [rng.randrange(65536)], 0))
    frame[rng.randrange(len(frame))] ^= 1 << rng.randrange(8)
    return bytes(frame)


@pytest.mark.timeout(60)
def test_random_garbage_never_drives_a_pulse_out_of_range(board: SimavrBoard, host: FrameHost):
    rng = random.Random(20261121)
    for seq in range(300):
        host.send(_garbage(rng, 100 + seq % 100))  # SEQs the host itself never uses here
    # A PING with a fresh SEQ: once it is answered, every reply to the garbage is in.
    host.request(native.encode_ping(host.next_seq()), timeout_s=WAIT_S)
    assert ack(set_pulses(host, [1500] * CHANNELS), Command.SET_PULSES)
    assert ack(enable(host, 0b111111), Command.ENABLE)
    board.wait_sim_time(command_time_s(board, host) + 0.1, WAIT_S)
    widths = [p.width_us for p in board.pulses()]
    assert widths, 'the garbage run should have enabled some channels'
    assert min(widths) >= 500 - WIDTH_TOLERANCE_US
    assert max(widths) <= 2500 + WIDTH_TOLERANCE_US
    assert board.longest_high_ticks <= 1       # no pin ever stuck high
    # Whatever the board said meanwhile was whole frames.
    decoder = FrameDecoder()
    decoder.feed(bytes(b.value for b in board.sent))
    assert decoder.discarded_bytes == 0 and decoder.corrupt_frames == 0


@pytest.mark.timeout(60)
def test_sync_pattern_flood_neither_resets_the_board_nor_disturbs_the_pulses(
        board: SimavrBoard, host: FrameHost):
    set_pulses(host, [1500])
    assert ack(enable(host, 0b1), Command.ENABLE)
    start = board.now_s
    # A 7-byte frame candidate every 3 bytes: one NACK (9 bytes) per 3 bytes received, so the
    # replies outgrow the line and the board must drop input rather than stall.
    chunk = b'\xa5\x5a\x00' * 100
    while board.now_s < start + 1.0:
        host.send(chunk)
        host.serial.read(host.serial.in_waiting)
    end = board.now_s
    pulses = board.pulses(0, start)
    assert [p.width_us for p in pulses] == pytest.approx([1500] * len(pulses), abs=2)
    gaps = [b.rise_s - a.rise_s for a, b in zip(pulses, pulses[1:], strict=False)]
    assert max(gaps) == pytest.approx(FRAME_S, rel=0.01)
    assert pulses[-1].rise_s >= end - 2 * FRAME_S
    # Once the backlog is answered the line goes quiet and the board takes requests again.
    board.wait_for(lambda: board.now_s - board.sent[-1].time_s > 0.05, WAIT_S, 'a quiet line')
    replies = FrameDecoder().feed(bytes(b.value for b in board.sent))
    assert [f.cmd for f in replies].count(Reply.READY) == 1    # the boot READY only
    host.serial.reset_input_buffer()
    assert host.request(native.encode_ping(host.next_seq()), timeout_s=WAIT_S).cmd == Reply.DATA
