"""Encode and decode frames of the fabrik_ros board protocol v1 (hardware/PROTOCOL.md).

Everything here is pure: functions take numbers and return ``bytes``, and
:class:`FrameDecoder` turns a byte stream into frames. No I/O, no clock, no logging; the
link (``link.py``) and the simulated boards (``fabrik_ros.boardsim``) both sit on top of it.
"""

import binascii
from collections.abc import Sequence
from dataclasses import dataclass
import enum
import struct
from typing import Optional, Union

from fabrik_ros.servo_io.device_bytes import printable

SYNC = b'\xa5\x5a'
MAX_PAYLOAD = 64
HEADER_SIZE = 5          # SYNC0 SYNC1 LEN SEQ CMD
CRC_SIZE = 2
MAX_FRAME = HEADER_SIZE + MAX_PAYLOAD + CRC_SIZE
PROTOCOL_VERSION = 1
PULSE_MIN_US = 400       # widest limits SET_LIMITS accepts
PULSE_MAX_US = 2600
DEFAULT_LIMITS_US = (500, 2500)
FRAME_SLOTTED = 0        # SET_FRAME period meaning the default slotted 20 ms frame
FRAME_GAP_US = 300       # a fast frame's least low time after the widest limit
FRAME_MAX_US = 20000     # longest fast frame


class Command(enum.IntEnum):
    """Host → board command codes (PROTOCOL.md, "Commands")."""

    PING = 0x01
    SET_PULSES = 0x02
    SET_LIMITS = 0x03
    GET_POSITIONS = 0x04
    ENABLE = 0x05
    SET_TIMEOUT = 0x06
    SET_FRAME = 0x07


class Reply(enum.IntEnum):
    """Board → host reply kinds (PROTOCOL.md, "Replies")."""

    ACK = 0x80
    NACK = 0x81
    DATA = 0x82
    READY = 0x83


class NackError(enum.IntEnum):
    """Error codes carried by a NACK (PROTOCOL.md, "NACK error codes")."""

    BAD_CRC = 1
    BAD_LENGTH = 2
    UNKNOWN_CMD = 3
    OUT_OF_RANGE = 4
    BAD_CHANNEL = 5
    NO_TARGET = 6


class WatchdogAction(enum.IntEnum):
    """What the board does when the host falls silent for the watchdog timeout."""

    HOLD = 0
    DETACH = 1


@dataclass(frozen=True)
class Frame:
    """One frame whose CRC matched: ``cmd`` is a raw byte so unknown codes survive decoding."""

    seq: int
    cmd: int
    payload: bytes


@dataclass(frozen=True)
class CorruptFrame:
    """A frame-shaped run of bytes whose CRC did not match (the board NACKs it with BAD_CRC)."""

    seq: int
    cmd: int


@dataclass(frozen=True)
class BoardInfo:
    """What PING and READY report: protocol version, channel count and firmware name."""

    proto_version: int
    channels: int
    firmware: str


@dataclass(frozen=True)
class PositionReport:
    """What GET_POSITIONS reports: enable bits and each channel's current pulse [µs, 0 = unset]."""

    enabled_mask: int
    pulses_us: tuple[int, ...]


def crc16_ccitt_false(data: bytes, crc: int = 0xFFFF) -> int:
    """Return the CRC-16/CCITT-FALSE of ``data`` (poly 0x1021, init 0xFFFF, no reflection).

    binascii's CRC-CCITT (as in BinHex) is this CRC when seeded with 0xFFFF, computed in C,
    where a Python bit loop would run on every command's way to the board.

    >>> hex(crc16_ccitt_false(b'123456789'))
    '0x29b1'
    """
    return binascii.crc_hqx(data, crc)


def _check_byte(name: str, value: int) -> None:
    if not 0 <= value <= 0xFF:
        raise ValueError(f'{name} = {value!r}, must be within [0, 255]')


def _check_u16(name: str, value: int) -> None:
    if not 0 <= value <= 0xFFFF:
        raise ValueError(f'{name} = {value!r}, must be within [0, 65535]')


def encode_frame(seq: int, cmd: int, payload: bytes = b'') -> bytes:
    """Return the complete frame ``A5 5A LEN SEQ CMD payload CRC``.

    :raises ValueError: if ``seq`` or ``cmd`` is not a byte or the payload exceeds 64 bytes.
    """
    _check_byte('seq', seq)
    _check_byte('cmd', cmd)
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f'payload length = {len(payload)}, must be at most {MAX_PAYLOAD}')
    body = bytes((len(payload), seq, cmd)) + payload
    return SYNC + body + struct.pack('<H', crc16_ccitt_false(body))


def _pack_u16s(name: str, values: Sequence[int]) -> bytes:
    for index, value in enumerate(values):
        _check_u16(f'{name}[{index}]', value)
    return struct.pack(f'<{len(values)}H', *values)


def encode_ping(seq: int) -> bytes:
    """Return a PING request (the board answers DATA with its :class:`BoardInfo`)."""
    return encode_frame(seq, Command.PING)


def encode_set_pulses(seq: int, pulses_us: Sequence[int], move_ms: int) -> bytes:
    """Return a SET_PULSES request for channels ``0..len(pulses_us)-1``.

    :param pulses_us: target pulse per channel [µs]; 0 leaves that channel's target as it is.
    :param move_ms: time the board interpolates the move over [ms], 0 = at once.
    :raises ValueError: on an empty list, more than 31 channels or a value outside u16.
    """
    _check_channel_count('pulses_us', len(pulses_us), MAX_PAYLOAD // 2 - 1)
    _check_u16('move_ms', move_ms)
    return encode_frame(seq, Command.SET_PULSES,
                        struct.pack('<H', move_ms) + _pack_u16s('pulses_us', pulses_us))


def encode_set_limits(seq: int, limits_us: Sequence[tuple[int, int]]) -> bytes:
    """Return a SET_LIMITS request: one ``(min_us, max_us)`` pair per channel from 0.

    :raises ValueError: on an empty list, more than 16 channels or a value outside u16.
    """
    _check_channel_count('limits_us', len(limits_us), MAX_PAYLOAD // 4)
    flat = [value for pair in limits_us for value in pair]
    return encode_frame(seq, Command.SET_LIMITS, _pack_u16s('limits_us', flat))


def encode_get_positions(seq: int) -> bytes:
    """Return a GET_POSITIONS request."""
    return encode_frame(seq, Command.GET_POSITIONS)


def encode_enable(seq: int, mask: int) -> bytes:
    """Return an ENABLE request: bit i set = channel i pulses, clear = detached."""
    _check_byte('mask', mask)
    return encode_frame(seq, Command.ENABLE, bytes((mask,)))


def encode_set_timeout(seq: int, timeout_ms: int, action: WatchdogAction) -> bytes:
    """Return a SET_TIMEOUT request (host-silence watchdog; 0 ms switches it off)."""
    _check_u16('timeout_ms', timeout_ms)
    return encode_frame(seq, Command.SET_TIMEOUT,
                        struct.pack('<HB', timeout_ms, WatchdogAction(action)))


def encode_set_frame(seq: int, period_us: int) -> bytes:
    """Return a SET_FRAME request: 0 = slotted 20 ms frames, else a fast frame of that period.

    Only the u16 range is checked here; whether the period fits the board's limits
    (``min_frame_us``) is the board's rule, so a board can be asked and seen to refuse.
    """
    _check_u16('period_us', period_us)
    return encode_frame(seq, Command.SET_FRAME, struct.pack('<H', period_us))


def parse_set_frame(payload: bytes) -> Optional[int]:
    """Return the period [µs] of a SET_FRAME payload, or None if its length is wrong."""
    if len(payload) != 2:
        return None
    return int.from_bytes(payload, 'little')


def min_frame_us(limits_us: Sequence[tuple[int, int]]) -> int:
    """Return the shortest fast frame [µs] the board accepts with these per-channel limits."""
    return max(high for _, high in limits_us) + FRAME_GAP_US


def encode_ack(seq: int, cmd: int) -> bytes:
    """Return the ACK a board sends for request ``cmd`` with sequence ``seq``."""
    _check_byte('cmd', cmd)
    return encode_frame(seq, Reply.ACK, bytes((cmd,)))


def encode_nack(seq: int, cmd: int, error: NackError) -> bytes:
    """Return the NACK a board sends for request ``cmd`` with sequence ``seq``."""
    _check_byte('cmd', cmd)
    return encode_frame(seq, Reply.NACK, bytes((cmd, NackError(error))))


def encode_data(seq: int, cmd: int, data: bytes) -> bytes:
    """Return a DATA reply carrying ``data`` for request ``cmd``."""
    _check_byte('cmd', cmd)
    return encode_frame(seq, Reply.DATA, bytes((cmd,)) + data)


def board_info_bytes(info: BoardInfo) -> bytes:
    """Return the data part of a PING reply or READY frame for ``info``."""
    _check_byte('proto_version', info.proto_version)
    _check_byte('channels', info.channels)
    return bytes((info.proto_version, info.channels)) + info.firmware.encode('ascii')


def encode_ready(info: BoardInfo) -> bytes:
    """Return the unsolicited READY frame a board sends after reset (SEQ = 0)."""
    return encode_frame(0, Reply.READY, board_info_bytes(info))


def position_bytes(report: PositionReport) -> bytes:
    """Return the data part of a GET_POSITIONS reply for ``report``."""
    _check_byte('enabled_mask', report.enabled_mask)
    return bytes((report.enabled_mask,)) + _pack_u16s('pulses_us', report.pulses_us)


def parse_board_info(data: bytes) -> Optional[BoardInfo]:
    """Return the :class:`BoardInfo` in a PING/READY data part, or None if it is too short.

    The firmware name goes into log lines, so bytes other than printable ASCII are escaped.
    """
    if len(data) < 2:
        return None
    return BoardInfo(data[0], data[1], printable(data[2:]))


def parse_positions(data: bytes) -> Optional[PositionReport]:
    """Return the :class:`PositionReport` in a GET_POSITIONS data part, or None if malformed."""
    if len(data) < 1 or (len(data) - 1) % 2:
        return None
    count = (len(data) - 1) // 2
    return PositionReport(data[0], struct.unpack(f'<{count}H', data[1:]))


def _check_channel_count(name: str, count: int, most: int) -> None:
    if not 1 <= count <= most:
        raise ValueError(f'len({name}) = {count}, must be within [1, {most}]')


DecodedItem = Union[Frame, CorruptFrame]


class FrameDecoder:
    """Turn a byte stream into frames, resynchronising after garbage (PROTOCOL.md, "Receiving").

    Feed it chunks of any size; it never raises and keeps at most one frame's worth of
    bytes between calls, so garbage cannot grow its memory.

    >>> decoder = FrameDecoder()
    >>> frame = encode_ping(7)
    >>> decoder.feed(b'junk' + frame[:3])
    []
    >>> decoder.feed(frame[3:])
    [Frame(seq=7, cmd=1, payload=b'')]
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.discarded_bytes = 0
        self.corrupt_frames = 0

    def feed(self, data: bytes) -> list[DecodedItem]:
        """Add ``data`` and return every frame (or CRC-failed frame) completed by it."""
        self._buffer += data
        items: list[DecodedItem] = []
        while True:
            item = self._next_item()
            if item is None:
                return items
            items.append(item)

    def _next_item(self) -> Optional[DecodedItem]:
        while True:
            if not self._hunt():
                return None
            length = self._buffer[2]
            if length > MAX_PAYLOAD:
                self._skip(1)
                continue
            size = HEADER_SIZE + length + CRC_SIZE
            if len(self._buffer) < size:
                return None
            return self._take(size)

    def _hunt(self) -> bool:
        """Drop bytes up to the next sync pair; return True once a full header is buffered."""
        start = self._buffer.find(SYNC)
        if start < 0:
            keep = 1 if self._buffer[-1:] == SYNC[:1] else 0
            self._skip(len(self._buffer) - keep)
            return False
        self._skip(start)
        return len(self._buffer) >= HEADER_SIZE

    def _take(self, size: int) -> DecodedItem:
        body = bytes(self._buffer[2:size - CRC_SIZE])
        (crc,) = struct.unpack('<H', self._buffer[size - CRC_SIZE:size])
        if crc != crc16_ccitt_false(body):
            self.corrupt_frames += 1
            self._skip(1)
            return CorruptFrame(seq=body[1], cmd=body[2])
        del self._buffer[:size]
        return Frame(seq=body[1], cmd=body[2], payload=body[3:])

    def _skip(self, count: int) -> None:
        self.discarded_bytes += count
        del self._buffer[:count]
