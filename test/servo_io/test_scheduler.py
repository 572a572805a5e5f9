"""The link's scheduler on a fake clock: what goes out when, without ports, threads or sleeps.

The scheduler talks through a real dialect to a simulated firmware (the same pure code the
simulated boards run) across a modelled 115200-baud line, so every request and answer is a
real byte string; only time is fake.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
import re

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from fabrik_ros.boardsim.board_firmware import SimFirmware
from fabrik_ros.boardsim.maestro_board import MaestroFirmware
from fabrik_ros.boardsim.native_board import NativeFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.boardsim.ssc32_board import Ssc32Firmware
from fabrik_ros.servo_io import LinkLost, LinkOptions, Protocol
from fabrik_ros.servo_io.link_stats import Counters
from fabrik_ros.servo_io.protocols import maestro, native
from fabrik_ros.servo_io.protocols.dialect import Dialect, PWM_PROTOCOLS
from fabrik_ros.servo_io.protocols.maestro_dialect import MaestroDialect
from fabrik_ros.servo_io.protocols.native import Command, Frame, NackError
from fabrik_ros.servo_io.protocols.native_dialect import NativeDialect
from fabrik_ros.servo_io.protocols.ssc32_dialect import Ssc32Dialect
from fabrik_ros.servo_io.scheduler import Scheduler
from test.cyclic_garbage import cyclic_garbage

BAUD = 115200
BYTE_S = 10.0 / BAUD
CHANNELS = 4
OPTIONS = LinkOptions(poll_hz=0.0, reply_timeout_s=0.05, max_in_flight=4)
DIALECTS: dict[Protocol, Callable[[int], Dialect]] = {
    Protocol.NATIVE: NativeDialect, Protocol.SSC32: Ssc32Dialect,
    Protocol.MAESTRO: MaestroDialect}
FIRMWARE: dict[Protocol, Callable[[ServoModel, str], SimFirmware]] = {
    Protocol.NATIVE: NativeFirmware, Protocol.SSC32: Ssc32Firmware,
    Protocol.MAESTRO: MaestroFirmware}


@dataclass
class Wire:
    """A scheduler, its dialect and a simulated firmware joined by a modelled line.

    ``answering`` False makes the board's answers vanish (it still acts on what it receives);
    ``losing`` True makes requests vanish before the board (counted in ``lost``); ``reply`` may
    replace the firmware's answer to a request (to inject a NACK or lose it).
    """

    protocol: Protocol = Protocol.NATIVE
    options: LinkOptions = OPTIONS
    now: float = 0.0
    answering: bool = True
    losing: bool = False
    lost: int = 0
    reply: Callable[[bytes, bytes], bytes] = lambda request, answer: answer
    writes: list[tuple[float, bytes]] = field(default_factory=list)
    replies: list[tuple[float, bytes]] = field(default_factory=list)   # on their way back

    def __post_init__(self) -> None:
        self.dialect = DIALECTS[self.protocol](CHANNELS)
        self.count = Counters()
        self.scheduler = Scheduler(self.dialect, CHANNELS, self.options, self.count)
        self.firmware = FIRMWARE[self.protocol](ServoModel(CHANNELS), 'sim')
        self.firmware.boot(0.0)
        self.scheduler.forget_board(0.0)

    def set_pulses(self, pulses: tuple[int, ...], move_ms: int = 0) -> None:
        self.scheduler.pulses.set((pulses, move_ms))

    def enable(self, mask: int) -> None:
        self.scheduler.enable.set(mask)

    def step(self) -> None:
        """Do everything due at ``now``: replies in, late requests out, what may be written."""
        arrived = [data for at, data in self.replies if at <= self.now]
        self.replies = [(at, data) for at, data in self.replies if at > self.now]
        for data in arrived:
            self.dialect.feed(data)
        self.firmware.tick(self.now)
        self.scheduler.received(self.now)
        self.scheduler.expire(self.now)
        while (data := self.scheduler.next_write(self.now)) is not None:
            self._send(data)

    def _send(self, data: bytes) -> None:
        arrives = self.now + len(data) * BYTE_S      # (the line rule is checked, not assumed)
        self.writes.append((arrives, data))
        if self.losing:
            self.lost += 1
            return
        answer = self.reply(data, self.firmware.receive(data, arrives))
        if answer and self.answering:
            self.replies.append((arrives + len(answer) * BYTE_S, answer))

    def run_until(self, end_s: float) -> None:
        """Advance the clock event by event to ``end_s``, stepping at each event."""
        self.step()
        while self.now < end_s:
            due = [self.scheduler.wake_at(self.now)] + [at for at, _ in self.replies]
            later = min(end_s, max(self.now, min(due)))
            # everything due at ``now`` has been done: asking for no wait would spin
            assert later > self.now, f'wake_at({self.now}) = {min(due)}: nothing to wait for'
            self.now = later
            self.step()

    def frames(self) -> list[Frame]:
        """Return the native frames written so far."""
        decoder = native.FrameDecoder()
        return [f for _, data in self.writes for f in decoder.feed(data)
                if isinstance(f, Frame)]

    def pulse_frames(self) -> list[tuple[int, ...]]:
        return [tuple(int.from_bytes(f.payload[2 + 2 * c:4 + 2 * c], 'little')
                      for c in range(CHANNELS))
                for f in self.frames() if f.cmd == Command.SET_PULSES]


def _frame_s(pulses: int = CHANNELS) -> float:
    return len(native.encode_set_pulses(0, [1500] * pulses, 0)) * BYTE_S


def test_a_pulse_command_goes_out_the_moment_the_line_is_free_not_on_a_tick():
    wire = Wire()
    wire.set_pulses((1500,) * 4)
    wire.step()
    assert wire.pulse_frames() == [(1500,) * 4]
    wire.now = 0.0001
    wire.set_pulses((1510,) * 4)
    wire.step()
    assert len(wire.pulse_frames()) == 1, 'the line still carries the first frame'
    assert wire.scheduler.wake_at(wire.now) == pytest.approx(_frame_s())
    wire.now = _frame_s()
    wire.step()
    assert wire.pulse_frames()[-1] == (1510,) * 4, 'sent before the first ACK came back'


def test_commands_set_while_the_line_is_busy_collapse_into_the_latest():
    wire = Wire()
    wire.set_pulses((1500,) * 4)
    wire.step()
    for pulse in (1501, 1502, 1503):
        wire.now += 0.0001
        wire.set_pulses((pulse,) * 4)
        wire.step()
    wire.run_until(0.05)
    assert wire.pulse_frames() == [(1500,) * 4, (1503,) * 4]
    assert not wire.scheduler.pulses.dirty()


def test_at_most_max_in_flight_pulse_commands_await_their_acks():
    wire = Wire(options=LinkOptions(poll_hz=0.0, max_in_flight=2, reply_timeout_s=1.0))
    wire.answering = False
    for pulse in range(1500, 1505):
        wire.set_pulses((pulse,) * 4)
        wire.run_until(wire.now + 0.005)
    assert wire.pulse_frames() == [(1500,) * 4, (1501,) * 4]
    assert wire.scheduler.in_flight() == 2


def test_with_one_in_flight_each_command_waits_for_the_previous_ack():
    wire = Wire(options=LinkOptions(poll_hz=0.0, max_in_flight=1))
    wire.set_pulses((1500,) * 4)
    wire.step()
    wire.now = _frame_s()
    wire.set_pulses((1510,) * 4)
    wire.step()
    assert len(wire.pulse_frames()) == 1
    wire.run_until(0.01)
    assert wire.pulse_frames() == [(1500,) * 4, (1510,) * 4]
    assert wire.count.acks == 2 and wire.count.rtts[-1] > _frame_s()


def test_the_board_ends_at_the_latest_command_and_every_ack_is_counted():
    wire = Wire()
    for step in range(50):
        wire.set_pulses((1500 + step,) * 4)
        wire.run_until(wire.now + 0.002)
    wire.run_until(wire.now + 0.05)
    assert wire.firmware.model.target(0) == 1549
    assert not wire.scheduler.pulses.dirty()
    assert wire.count.acks == len(wire.frames()) and wire.count.timeouts == 0


def test_an_unanswered_command_is_resent_with_the_same_seq_then_the_link_is_lost():
    wire = Wire()
    wire.answering = False
    wire.set_pulses((1500,) * 4)
    wire.run_until(0.05 * 3 - 0.001)
    frames = wire.frames()
    assert len(frames) == 3 and len({f.seq for f in frames}) == 1
    assert wire.count.retries == 2 and wire.count.timeouts == 2
    wire.run_until(0.05 * 3 + 0.001)
    frames = wire.frames()
    assert len(frames) == 4 and frames[3].seq != frames[0].seq, 'given up, then sent anew'
    assert wire.count.timeouts == 3 and wire.scheduler.failures == 1
    with pytest.raises(LinkLost) as raised:
        wire.run_until(1.0)
    assert 'board silent, 3 requests in a row unanswered (last: pulses)' in str(raised.value)


def test_a_command_superseded_by_a_newer_one_is_not_resent():
    lost = set()

    def drop_first(request: bytes, answer: bytes) -> bytes:
        if not lost:
            lost.add(request)
            return b''
        return answer

    wire = Wire(reply=drop_first)
    wire.set_pulses((1500,) * 4)
    wire.step()
    wire.now = _frame_s()
    wire.set_pulses((1510,) * 4)
    wire.run_until(0.2)
    assert wire.pulse_frames() == [(1500,) * 4, (1510,) * 4]
    assert wire.count.retries == 0 and wire.count.timeouts == 1
    assert wire.firmware.model.target(0) == 1510 and not wire.scheduler.pulses.dirty()


def test_bad_crc_is_resent_and_another_nack_refuses_the_value():
    nacks = [NackError.BAD_CRC, NackError.OUT_OF_RANGE]

    def nack(request: bytes, answer: bytes) -> bytes:
        frame = native.FrameDecoder().feed(request)[0]
        if frame.cmd == Command.SET_PULSES and nacks:
            return native.encode_nack(frame.seq, frame.cmd, nacks.pop(0))
        return answer

    wire = Wire(reply=nack)
    wire.set_pulses((1500,) * 4)
    wire.run_until(0.05)
    slot = wire.scheduler.pulses
    assert len(wire.pulse_frames()) == 2 and wire.count.retries == 1
    assert slot.refused == slot.version and not slot.dirty()
    assert 'board refused pulses: NACK OUT_OF_RANGE' in str(slot.error)


def test_enable_waits_for_the_pulses_ack_and_limits_go_out_alone_first():
    wire = Wire()
    wire.set_pulses((1500,) * 4)
    wire.enable(0b1111)
    wire.scheduler.limits.set(((600, 2400),) * 4)
    wire.step()
    assert [f.cmd for f in wire.frames()] == [Command.SET_LIMITS]
    wire.run_until(0.05)
    assert [f.cmd for f in wire.frames()] == [Command.SET_LIMITS, Command.SET_PULSES,
                                              Command.ENABLE]
    assert wire.firmware.model.enabled_mask == 0b1111
    assert wire.scheduler.board_mask == 0b1111


def test_positions_are_read_beside_a_stream_of_pulse_commands():
    wire = Wire(options=LinkOptions(poll_hz=50.0))
    wire.set_pulses((1500,) * 4)
    wire.enable(0b1111)
    for step in range(100):
        wire.set_pulses((1500 + step,) * 4)
        wire.run_until(wire.now + 0.002)
    polls = [f for f in wire.frames() if f.cmd == Command.GET_POSITIONS]
    assert 9 <= len(polls) <= 11
    positions = wire.scheduler.positions
    assert positions is not None and positions.pulses_us[0] is not None


def test_the_watchdog_is_fed_when_nothing_else_goes_out():
    wire = Wire()
    wire.scheduler.watchdog.set((300, native.WatchdogAction.HOLD))
    wire.run_until(1.0)
    polls = [f for f in wire.frames() if f.cmd == Command.GET_POSITIONS]
    assert len(polls) >= 9, 'a request at least every third of the 0.3 s timeout'
    assert not wire.firmware.watchdog_fired


def test_max_rate_caps_pulse_commands_for_a_slow_board():
    wire = Wire(options=LinkOptions(poll_hz=0.0, max_rate_hz=100.0))
    for step in range(50):
        wire.set_pulses((1500 + step,) * 4)
        wire.run_until(wire.now + 0.002)
    assert 10 <= len(wire.pulse_frames()) <= 11


def _pulsing(protocol: Protocol, options: LinkOptions = OPTIONS) -> Wire:
    """Return a wire whose board pulses every channel at 1500 µs."""
    wire = Wire(protocol, options)
    wire.set_pulses((1500,) * 4)
    wire.enable(0b1111)
    wire.run_until(0.01)
    return wire


@pytest.mark.parametrize('protocol', [Protocol.SSC32, Protocol.MAESTRO])
def test_unacknowledged_protocols_write_at_line_rate_and_reach_the_latest(protocol):
    wire = _pulsing(protocol)
    sizes = []
    for step in range(100):
        wire.set_pulses((1500 + step,) * 4)
        before = len(wire.writes)
        wire.run_until(wire.now + 0.002)
        sizes += [len(data) for _, data in wire.writes[before:]]
    wire.run_until(wire.now + 0.05)
    assert [wire.firmware.model.target(ch) for ch in range(4)] == [1599] * 4
    busy_s = sum(sizes) * BYTE_S
    assert busy_s <= 0.2 + max(sizes) * BYTE_S, 'never more bytes than the line carries'


def test_after_forget_board_everything_is_sent_again():
    wire = Wire()
    wire.set_pulses((1500,) * 4)
    wire.enable(0b1111)
    wire.run_until(0.05)
    wire.scheduler.forget_board(wire.now)
    sent = len(wire.frames())
    wire.run_until(0.1)
    assert [f.cmd for f in wire.frames()[sent:]] == [Command.SET_PULSES, Command.ENABLE]


EVENTS = st.lists(st.one_of(
    st.tuples(st.just('pulses'), st.tuples(st.integers(0, CHANNELS - 1),
                                           st.integers(1000, 2000))),
    st.tuples(st.just('wait'), st.floats(0.0, 0.02)),
    st.tuples(st.just('deaf'), st.booleans()),
    st.tuples(st.just('lose'), st.booleans()),
    st.tuples(st.just('enable'), st.integers(0, 15))), max_size=60)


@settings(max_examples=150, deadline=None)
@given(events=EVENTS, window=st.integers(1, 4), protocol=st.sampled_from(PWM_PROTOCOLS))
def test_any_order_of_events_keeps_the_line_and_window_rules_and_ends_in_sync(
        events, window, protocol):
    wire = Wire(protocol, options=LinkOptions(poll_hz=20.0, max_in_flight=window,
                                              reply_timeout_s=0.01, lost_after=1000))
    wire.set_pulses((1500,) * 4)
    for kind, value in events:
        if kind == 'pulses':
            channel, pulse = value
            pulses = list(wire.scheduler.pulses.value[0])
            pulses[channel] = pulse
            wire.set_pulses(tuple(pulses))
        elif kind == 'enable':
            wire.enable(value)
        elif kind == 'deaf':
            wire.answering = not value
        elif kind == 'lose':
            wire.losing = value
        wire.run_until(wire.now + (value if kind == 'wait' else 0.0))
        assert wire.scheduler.in_flight() <= window + 1     # pulses, and one position read
        assert wire.scheduler.wake_at(wire.now) > wire.now or \
            wire.scheduler.next_write(wire.now) is None, 'nothing due is left waiting'
    starts = [at - len(data) * BYTE_S for at, data in wire.writes]
    ends = [at for at, _ in wire.writes]
    assert all(start >= end - 1e-12 for start, end in zip(starts[1:], ends, strict=False))
    wire.answering, wire.losing = True, False
    wire.run_until(wire.now + 1.0)
    scheduler = wire.scheduler
    assert not scheduler.pulses.dirty() and not scheduler.enable.dirty()
    if protocol is Protocol.NATIVE or not wire.lost:    # a raw line cannot tell a loss
        pulsing = scheduler.enable.value if protocol is not Protocol.NATIVE else 0b1111
        board = [wire.firmware.model.target(ch) for ch in range(CHANNELS)]
        wanted = scheduler.pulses.value[0]
        assert [board[ch] for ch in range(CHANNELS) if pulsing >> ch & 1] == \
            [wanted[ch] for ch in range(CHANNELS) if pulsing >> ch & 1], 'the board has them all'


def _pulse_counts(wire: Wire) -> list[int]:
    """Return how many channels each SET_PULSES written so far carries."""
    return [(len(f.payload) - 2) // 2 for f in wire.frames() if f.cmd == Command.SET_PULSES]


def test_a_command_carries_channels_up_to_the_last_whose_target_the_board_lacks():
    wire = Wire()
    for pulses in [(1500,) * 4, (1510, 1500, 1500, 1500), (1510, 1500, 1520, 1500),
                   (1510, 1500, 1520, 1500)]:
        wire.set_pulses(pulses)
        wire.run_until(wire.now + 0.01)
    assert _pulse_counts(wire) == [4, 1, 3], 'a command that changes nothing sends nothing'
    assert [wire.firmware.model.target(ch) for ch in range(4)] == [1510, 1500, 1520, 1500]


def test_a_channel_an_unanswered_command_sets_goes_out_again_with_the_next():
    """Its command may never have reached the board: only acknowledged targets are sure."""
    wire = Wire()
    wire.set_pulses((1500,) * 4)
    wire.run_until(0.01)
    wire.answering = False
    wire.set_pulses((1500, 1600, 1500, 1500))
    wire.step()
    wire.now += _frame_s()
    wire.set_pulses((1510, 1600, 1500, 1500))
    wire.step()
    assert _pulse_counts(wire) == [4, 2, 2]
    assert wire.pulse_frames()[-1][:2] == (1510, 1600)


def test_a_channel_back_at_its_acknowledged_target_is_sent_while_a_command_moves_it_away():
    """The board takes the command on its way first: left out, the channel would stay there."""
    wire = Wire()
    wire.set_pulses((1500,) * 4)
    wire.run_until(0.01)
    wire.set_pulses((1500, 1600, 1500, 1500))
    wire.step()
    wire.now += _frame_s()
    wire.set_pulses((1510, 1500, 1500, 1500))
    wire.run_until(wire.now + 0.01)
    assert _pulse_counts(wire) == [4, 2, 2]
    assert [wire.firmware.model.target(ch) for ch in range(4)] == [1510, 1500, 1500, 1500]


def _carried(protocol: Protocol, data: bytes) -> set[int]:
    """Return the channels a pulse command sets."""
    if protocol is Protocol.NATIVE:
        return {ch for f in native.FrameDecoder().feed(data)
                if isinstance(f, Frame) and f.cmd == Command.SET_PULSES
                for ch in range((len(f.payload) - 2) // 2)}
    if protocol is Protocol.SSC32:
        return {int(ch) for ch in re.findall(rb'#(\d+)P', data)}
    return {data[i + 1] for i in range(0, len(data), 4) if data[i] == maestro.SET_TARGET}


@pytest.mark.parametrize('protocol', PWM_PROTOCOLS)
def test_without_acknowledgements_each_channel_is_carried_again_every_second_one_at_a_time(
        protocol):
    wire = _pulsing(protocol)
    before = len(wire.writes)
    for step in range(250):      # 2.5 s of commands that move channel 0 only
        wire.set_pulses((1501 + step, 1500, 1500, 1500))
        wire.run_until(wire.now + 0.01)
    carried = [(at, _carried(protocol, data)) for at, data in wire.writes[before:]]
    assert all(0 in channels for _, channels in carried)
    assert max(len(channels) for _, channels in carried) <= 2, 'never all channels at once'
    for channel in (1, 2, 3):
        times = [0.01] + [at for at, channels in carried if channel in channels] + [wire.now]
        if protocol is Protocol.NATIVE:
            assert len(times) == 2, 'acknowledged targets are not sent again'
        else:
            assert max(b - a for a, b in zip(times, times[1:], strict=False)) <= 1.0 + 0.01


@pytest.mark.parametrize('protocol', [Protocol.SSC32, Protocol.MAESTRO])
def test_unacknowledged_protocols_send_only_the_channels_that_move(protocol):
    wire = _pulsing(protocol)
    wire.set_pulses((1500, 1500, 1520, 1500))
    before = len(wire.writes)
    wire.run_until(0.02)
    [(_, data)] = wire.writes[before:]
    if protocol is Protocol.SSC32:
        assert data.startswith(b'#2P1520T') and data.count(b'#') == 1
    else:
        assert data == maestro.encode_set_target(2, 1520)
    assert [wire.firmware.model.target(ch) for ch in range(4)] == [1500, 1500, 1520, 1500]


def _is_read(protocol: Protocol, data: bytes) -> bool:
    """Return True for a position read request."""
    if protocol is Protocol.NATIVE:
        return any(isinstance(f, Frame) and f.cmd == Command.GET_POSITIONS
                   for f in native.FrameDecoder().feed(data))
    if protocol is Protocol.SSC32:
        return data.startswith(b'QP')
    return data[0] == maestro.GET_POSITION


@pytest.mark.parametrize('protocol', PWM_PROTOCOLS)
def test_a_position_read_holds_a_pulse_command_back_by_one_short_request_at_most(protocol):
    """Commands every 2.05 ms beside reads at 100 Hz, so their phases drift across each other.

    A read naming every channel in one request (16 bytes on an SSC-32U) would hold a command
    back for all of it; one request per channel lets commands go out in between. (Under a
    second, so that no command carrying every channel, 2.7 ms on an SSC-32U, comes due.)
    """
    wire = _pulsing(protocol, LinkOptions(poll_hz=100.0, reply_timeout_s=0.05))
    delays, reads = [], 0
    for step in range(400):
        wire.set_pulses((1501 + step, 1500, 1500, 1500))
        set_at, before = wire.now, len(wire.writes)
        wire.run_until(set_at + 0.00205)
        written = [(arrives - len(data) * BYTE_S, data) for arrives, data in wire.writes[before:]]
        reads += sum(_is_read(protocol, data) for _, data in written)
        delays.append(min(start for start, data in written if not _is_read(protocol, data))
                      - set_at)
    streaming = delays[1:]      # the first command meets the read _pulsing's last step began
    assert reads >= 70
    if protocol is Protocol.SSC32:      # a request per channel: the later ones meet commands
        assert sum(delay > 1e-9 for delay in streaming) >= 3, 'reads met commands'
    assert max(streaming) <= 7 * BYTE_S + 1e-9


def _stream(wire: Wire, rate_hz: float, seconds: float) -> tuple[list[float], list[float]]:
    """Set a new target every 1/rate_hz for ``seconds``; return the waits and the reads.

    A wait is from a command being set to its first byte going out [s]; a read, when one of
    the reads' requests started [s].
    """
    period_s, waits, reads = 1.0 / rate_hz, [], []
    start = wire.now
    for step in range(round(seconds * rate_hz)):
        set_at, before = wire.now, len(wire.writes)
        wire.set_pulses((1501 + step % 400, 1500, 1500, 1500))
        wire.run_until(start + (step + 1) * period_s)
        written = [(arrives - len(data) * BYTE_S, data) for arrives, data in wire.writes[before:]]
        starts = [start for start, data in written if not _is_read(wire.protocol, data)]
        waits.append(starts[0] - set_at)
        reads += [start for start, data in written if _is_read(wire.protocol, data)]
    return waits, reads


@pytest.mark.parametrize('protocol', PWM_PROTOCOLS)
@pytest.mark.parametrize('rate_hz', [20.0, 50.0, 200.0, 500.0])
def test_while_commands_stream_a_position_read_never_holds_one_back(protocol, rate_hz):
    """Each read rides right behind a command, in the gap before the next; reads keep their rate.

    The phase sets a command 0.1 ms after each 10 Hz read falls due (a read's 7 bytes took
    0.6 ms, its 4 or 2 bytes on the SSC-32U and Maestro 0.35 and 0.17). An SSC-32U read is
    four requests and answers (about 2 ms): at 500 Hz its later requests may hold a command
    back by one.
    """
    wire = _pulsing(protocol, LinkOptions(poll_hz=10.0, reply_timeout_s=0.05))
    wire.run_until(0.1001 - 1.0 / rate_hz)
    waits, reads = _stream(wire, rate_hz, 2.0)
    one_request_s = len(b'QP 3\r') * BYTE_S if protocol is Protocol.SSC32 and rate_hz > 200 else 0
    assert max(waits) <= one_request_s + 1e-9, 'every command went out the moment it was set'
    assert len(reads) >= 19, 'a read every 0.1 s'


def test_a_command_set_when_a_read_falls_due_goes_first_and_the_read_right_behind_it():
    wire = _pulsing(Protocol.NATIVE, LinkOptions(poll_hz=10.0, reply_timeout_s=0.05))
    wire.run_until(0.0999)
    assert not any(_is_read(Protocol.NATIVE, data) for at, data in wire.writes if at > 0.05)
    before = len(wire.writes)
    wire.now = 0.1                      # the read falls due as the command is set
    wire.set_pulses((1600, 1500, 1500, 1500))
    wire.run_until(0.11)
    (command_end, command), (read_end, read) = wire.writes[before:before + 2]
    assert not _is_read(Protocol.NATIVE, command) and _is_read(Protocol.NATIVE, read)
    assert command_end - len(command) * BYTE_S == pytest.approx(0.1)
    assert read_end - len(read) * BYTE_S == pytest.approx(command_end)


def test_a_line_saturated_with_commands_still_carries_a_read_every_other_period_at_least():
    """A command waits for the line on every write: each read waits a period, then goes.

    Reads are counted in requests, one per channel.
    """
    wire = _pulsing(Protocol.SSC32, LinkOptions(poll_hz=10.0, reply_timeout_s=0.05))
    reads = 0
    for step in range(2000):        # a new 4-channel command every 0.5 ms, 1 s
        wire.set_pulses(tuple(1501 + (step + ch) % 300 for ch in range(4)))
        before = len(wire.writes)
        wire.run_until(wire.now + 0.0005)
        reads += sum(_is_read(Protocol.SSC32, data) for _, data in wire.writes[before:])
    assert reads >= 4 * CHANNELS


def test_the_pulse_frame_has_a_slot_of_its_own_and_follows_limits_sent_in_the_slotted_frame():
    wire = Wire()
    wire.scheduler.frame.set(3000)
    wire.run_until(0.05)
    assert [(f.cmd, f.payload) for f in wire.frames()] == [
        (Command.SET_FRAME, (3000).to_bytes(2, 'little'))], 'the frame alone, no limits'
    assert not wire.scheduler.frame.dirty() and wire.firmware.frame_us == 3000
    wire.scheduler.limits.set(((900, 2000),) * CHANNELS)
    wire.run_until(0.1)
    assert [(f.cmd, native.parse_set_frame(f.payload) if f.cmd == Command.SET_FRAME else None)
            for f in wire.frames()[1:]] == [
        (Command.SET_FRAME, native.FRAME_SLOTTED), (Command.SET_LIMITS, None),
        (Command.SET_FRAME, 3000)]
    assert wire.firmware.frame_us == 3000
    assert not any(slot.dirty() for slot in wire.scheduler.slots)


def test_a_frame_the_limits_no_longer_fit_is_refused_in_the_frame_slot_not_the_limits_slot():
    wire = Wire()
    wire.scheduler.frame.set(2300)
    wire.scheduler.limits.set(((900, 2100),) * CHANNELS)   # 2100 + 300 > 2300
    wire.run_until(0.1)
    frame, limits = wire.scheduler.frame, wire.scheduler.limits
    assert limits.applied == limits.version and limits.error is None
    assert frame.refused == frame.version
    assert 'board refused frame: NACK OUT_OF_RANGE' in str(frame.error)
    assert wire.firmware.frame_us == native.FRAME_SLOTTED


@pytest.mark.parametrize('protocol', PWM_PROTOCOLS)
def test_a_stream_of_commands_and_reads_leaves_no_reference_cycles(protocol):
    """Each frame's job is freed as soon as it is answered, not by the garbage collector."""
    wire = _pulsing(protocol, LinkOptions(poll_hz=10.0, reply_timeout_s=0.05))
    with cyclic_garbage() as found:
        _stream(wire, 200.0, 1.0)
    assert found[0] == 0
