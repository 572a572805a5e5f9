"""The link's view of the fabrik_ros board protocol (hardware/PROTOCOL.md)."""

from collections.abc import Callable, Sequence
from typing import Optional

from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.dialect import (
    Answer,
    AnswerKind,
    Capabilities,
    Dialect,
    Positions,
    Transaction,
)
from fabrik_ros.servo_io.protocols.native import (
    BoardInfo,
    Command,
    CorruptFrame,
    Frame,
    NackError,
    Reply,
    WatchdogAction,
)

_ANSWER_BACKLOG = 16     # answers kept for requests the link has not asked about yet


class NativeDialect(Dialect):
    """Sequence-numbered frames; every request is answered by ACK, NACK or DATA."""

    capabilities = Capabilities(acknowledged=True, board_limits=True, watchdog=True,
                                pulse_range_us=(native.PULSE_MIN_US, native.PULSE_MAX_US),
                                fast_frame=True)
    board_name = 'native board'
    board_channels = 8       # ENABLE carries one mask byte

    def __init__(self, channels: int) -> None:
        super().__init__(channels)
        self._seq = 0
        self._decoder = native.FrameDecoder()
        self._answers: dict[int, Frame] = {}
        self._reset_info: Optional[BoardInfo] = None

    def reset(self) -> None:
        """Drop buffered bytes, answers and a pending READY; keep counting sequence numbers."""
        self.discard_input()
        self._reset_info = None

    def discard_input(self) -> None:
        """Drop buffered bytes and answers."""
        self._decoder = native.FrameDecoder()
        self._answers.clear()

    def _next_seq(self) -> int:
        self._seq = (self._seq + 1) & 0xFF
        return self._seq

    def _request(self, cmd: Command, encode: Callable[..., bytes], *args: object) -> Transaction:
        seq = self._next_seq()
        return Transaction(encode(seq, *args), AnswerKind.FRAME, seq=seq, cmd=cmd)

    def feed(self, data: bytes) -> None:
        """Decode frames; keep replies by sequence number and note READY (a board reset)."""
        for item in self._decoder.feed(data):
            if isinstance(item, CorruptFrame):
                continue
            if item.cmd == Reply.READY:
                self._reset_info = native.parse_board_info(item.payload)
            elif item.cmd in (Reply.ACK, Reply.NACK, Reply.DATA):
                self._answers[item.seq] = item
                while len(self._answers) > _ANSWER_BACKLOG:
                    del self._answers[next(iter(self._answers))]

    def take_answer(self, transaction: Transaction) -> Optional[Answer]:
        """Return the ACK/NACK/DATA whose SEQ and echoed CMD match ``transaction``."""
        frame = self._answers.pop(transaction.seq, None)
        if frame is None or not frame.payload or frame.payload[0] != transaction.cmd:
            return None
        if frame.cmd == Reply.NACK:
            code = frame.payload[1] if len(frame.payload) > 1 else 0
            known = code in NackError._value2member_map_
            return Answer(b'', NackError(code) if known else NackError.UNKNOWN_CMD)
        return Answer(frame.payload[1:])

    def take_board_reset(self) -> Optional[BoardInfo]:
        """Return the READY info received since the last call, if any."""
        info, self._reset_info = self._reset_info, None
        return info

    def handshake(self) -> Transaction:
        """Return a PING."""
        return self._request(Command.PING, native.encode_ping)

    def board_info(self, answer: Answer) -> Optional[BoardInfo]:
        """Parse the PING reply."""
        return native.parse_board_info(answer.data)

    def pulses(self, pulses_us: Sequence[int], move_ms: int, enabled_mask: int,
               board_us: Sequence[Optional[int]]) -> list[Transaction]:
        """Return one SET_PULSES up to the last channel the board lacks the target of.

        The channels after it keep their targets and share the move's clock, as they would if
        sent (PROTOCOL.md); detached channels keep theirs too.
        """
        lacking = [ch for ch, pulse in enumerate(pulses_us) if pulse and pulse != board_us[ch]]
        if not lacking:
            return []
        return [self._request(Command.SET_PULSES, native.encode_set_pulses,
                              list(pulses_us[:lacking[-1] + 1]), move_ms)]

    def enable(self, mask: int, previous_mask: int,
               pulses_us: Sequence[int]) -> list[Transaction]:
        """Return one ENABLE."""
        return [self._request(Command.ENABLE, native.encode_enable, mask)]

    def frame(self, period_us: int) -> list[Transaction]:
        """Return one SET_FRAME: a fast frame of ``period_us``, 0 = slotted.

        :raises ValueError: if ``period_us`` is neither 0 nor within
            [``FRAME_GAP_US``, ``FRAME_MAX_US``] (the board's bound on the limits comes later).
        """
        if period_us != native.FRAME_SLOTTED and not (
                native.FRAME_GAP_US <= period_us <= native.FRAME_MAX_US):
            raise ValueError(f'period_us = {period_us!r}, must be 0 (slotted) or within '
                             f'[{native.FRAME_GAP_US}, {native.FRAME_MAX_US}]')
        return [self._request(Command.SET_FRAME, native.encode_set_frame, period_us)]

    def limits(self, limits_us: Sequence[tuple[int, int]]) -> list[Transaction]:
        """Return one SET_LIMITS."""
        return [self._request(Command.SET_LIMITS, native.encode_set_limits, list(limits_us))]

    def watchdog(self, timeout_ms: int, action: WatchdogAction) -> list[Transaction]:
        """Return one SET_TIMEOUT."""
        return [self._request(Command.SET_TIMEOUT, native.encode_set_timeout,
                              timeout_ms, action)]

    def poll(self) -> list[Transaction]:
        """Return one GET_POSITIONS."""
        return [self._request(Command.GET_POSITIONS, native.encode_get_positions)]

    def positions(self, answers: Sequence[Answer], stamp_s: float) -> Optional[Positions]:
        """Parse the GET_POSITIONS reply; 0 µs (never set) and detached channels → None."""
        report = native.parse_positions(answers[0].data) if answers else None
        if report is None or len(report.pulses_us) < self.channels:
            return None
        pulses = tuple(pulse if pulse and report.enabled_mask >> channel & 1 else None
                       for channel, pulse in enumerate(report.pulses_us[:self.channels]))
        return Positions(pulses, 1.0, stamp_s)
