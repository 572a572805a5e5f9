"""Encode and decode Dynamixel Protocol 2.0 packets (ROBOTIS X series and later).

Source: the ROBOTIS e-Manual, "Protocol 2.0" (emanual.robotis.com/docs/en/dxl/protocol2/):
a packet is ``FF FF FD 00 id len_l len_h instruction params... crc_l crc_h``; ``len`` counts
the instruction, the parameters and the CRC; a status packet is instruction 0x55 whose first
parameter is the error byte (bit 7 the alert, bits 0-6 an error number). Byte stuffing: from the
instruction to the last parameter, each ``FF FF FD`` gets an extra ``FD``, so a header cannot
appear inside a packet; the length and the CRC cover the stuffed bytes. The CRC is the CRC-16
of the e-Manual's "CRC Calculation" page: polynomial 0x8005, initial value 0, no reflection, no
final XOR (CRC-16/BUYPASS), over everything from the first header byte to the last parameter.
The e-Manual's own packets (ping, read, write, sync read, sync write) are the test vectors.

Pure: no I/O. :class:`PacketReceiver` picks whole packets out of a byte stream (status packets
for the host, instruction packets for the simulated bus) and never raises on device bytes.
"""

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
import enum
from typing import Optional

HEADER = b'\xff\xff\xfd\x00'
_PATTERN = b'\xff\xff\xfd'       # what stuffing keeps out of a packet's body
_STUFF = 0xFD
BROADCAST_ID = 0xFE
MAX_ID = 0xFC                    # ids 0..252; 253 and 255 would look like header bytes
MAX_LENGTH = 1024                # longest length field accepted (the SDK's receive buffer)
_LENGTH_AT = 5                   # offset of len_l in a packet
_BODY_AT = 7                     # offset of the instruction
_OVERHEAD = 10                   # header 4 + id 1 + length 2 + instruction 1 + CRC 2
STATUS_OVERHEAD = _OVERHEAD + 1  # a status packet carries the error byte too
ALERT = 0x80


class Instruction(enum.IntEnum):
    """Instruction byte of a packet (e-Manual Protocol 2.0, "Instruction")."""

    PING = 0x01
    READ = 0x02
    WRITE = 0x03
    REG_WRITE = 0x04
    ACTION = 0x05
    FACTORY_RESET = 0x06
    REBOOT = 0x08
    CLEAR = 0x10
    STATUS = 0x55
    SYNC_READ = 0x82
    SYNC_WRITE = 0x83
    BULK_READ = 0x92
    BULK_WRITE = 0x93


class ErrorNumber(enum.IntEnum):
    """Bits 0-6 of a status packet's error byte (e-Manual Protocol 2.0, "Error")."""

    NONE = 0x00
    RESULT_FAIL = 0x01
    INSTRUCTION = 0x02
    CRC = 0x03
    DATA_RANGE = 0x04
    DATA_LENGTH = 0x05
    DATA_LIMIT = 0x06
    ACCESS = 0x07


_ERROR_WORDS = {
    ErrorNumber.RESULT_FAIL: 'result fail (the instruction could not be processed)',
    ErrorNumber.INSTRUCTION: 'instruction error (undefined instruction, or action without '
                             'reg write)',
    ErrorNumber.CRC: 'CRC error (the servo received a damaged packet)',
    ErrorNumber.DATA_RANGE: "data range error (value outside the register's range)",
    ErrorNumber.DATA_LENGTH: 'data length error (fewer bytes than the register holds)',
    ErrorNumber.DATA_LIMIT: 'data limit error (value beyond the limit registers)',
    ErrorNumber.ACCESS: 'access error (read-only or undefined address, or an EEPROM write '
                        'with torque on)',
}


def error_words(error: int) -> tuple[str, ...]:
    """Return a status packet's error byte in words; () for 0.

    The alert bit says only that the servo has a hardware problem: which one is in its Hardware
    Error Status register (see :func:`fabrik_ros.servo_io.protocols.control_tables`).

    >>> for word in error_words(0x84):
    ...     print(word)
    alert: hardware error (read Hardware Error Status)
    data range error (value outside the register's range)
    """
    words = []
    if error & ALERT:
        words.append('alert: hardware error (read Hardware Error Status)')
    number = error & ~ALERT & 0xFF
    if number:
        try:
            words.append(_ERROR_WORDS[ErrorNumber(number)])
        except ValueError:
            words.append(f'unknown error number {number}')
    return tuple(words)


def _crc_table() -> tuple[int, ...]:
    """Return the byte-at-a-time table of the MSB-first CRC-16 with polynomial 0x8005."""
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = (crc << 1) ^ 0x8005 if crc & 0x8000 else crc << 1
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16(data: bytes) -> int:
    """Return the Protocol 2.0 CRC of ``data``.

    >>> hex(crc16(bytes.fromhex('ff ff fd 00 01 03 00 01')))   # e-Manual's ping of id 1
    '0x4e19'
    """
    crc = 0
    for byte in data:
        crc = ((crc << 8) ^ _CRC_TABLE[((crc >> 8) ^ byte) & 0xFF]) & 0xFFFF
    return crc


def stuff(body: bytes) -> bytes:
    """Return ``body`` (instruction to last parameter) with an FD added after each FF FF FD.

    >>> stuff(bytes.fromhex('03 ff ff fd 01')).hex(' ')
    '03 ff ff fd fd 01'
    """
    out = bytearray()
    for byte in body:
        out.append(byte)
        if byte == _STUFF and out[-3:] == _PATTERN:
            out.append(_STUFF)      # an added FD is never an FF, so it starts no new pattern
    return bytes(out)


def unstuff(body: bytes) -> Optional[bytes]:
    """Return ``body`` as sent before stuffing, or None if its stuffing is broken.

    Broken: an FF FF FD not followed by FD, which a sender that stuffs never puts in a body
    (it is a header, so the packet was cut short and another one began).

    >>> unstuff(bytes.fromhex('03 ff ff fd fd 01')).hex(' ')
    '03 ff ff fd 01'
    >>> unstuff(bytes.fromhex('03 ff ff fd 00 01')) is None
    True
    """
    out = bytearray()
    index = 0
    while index < len(body):
        byte = body[index]
        out.append(byte)
        index += 1
        if byte == _STUFF and out[-3:] == _PATTERN:
            if index >= len(body) or body[index] != _STUFF:
                return None
            index += 1          # drop the added FD; the pattern's own FD stays
    return bytes(out)


def _check_id(name: str, servo_id: int, *, broadcast: bool) -> None:
    if 0 <= servo_id <= MAX_ID or (broadcast and servo_id == BROADCAST_ID):
        return
    also = f' or {BROADCAST_ID} (broadcast)' if broadcast else ''
    raise ValueError(f'{name} = {servo_id!r}, must be within [0, {MAX_ID}]{also}')


def _word(name: str, value: int, low: int = 0) -> bytes:
    if not low <= value <= 0xFFFF:
        raise ValueError(f'{name} = {value!r}, must be within [{low}, 65535]')
    return value.to_bytes(2, 'little')


def encode_packet(servo_id: int, instruction: int, params: bytes = b'') -> bytes:
    """Return a whole packet: header, id, length, stuffed body and CRC.

    >>> encode_packet(1, Instruction.PING).hex(' ')   # the e-Manual's ping example
    'ff ff fd 00 01 03 00 01 19 4e'

    :raises ValueError: if the stuffed packet is longer than a length field may say.
    """
    body = stuff(bytes((instruction,)) + params)
    length = len(body) + 2
    if length > MAX_LENGTH:
        raise ValueError(f'packet length = {length}, must be at most {MAX_LENGTH} (fewer '
                         f'servos or bytes per packet)')
    head = HEADER + bytes((servo_id,)) + length.to_bytes(2, 'little') + body
    return head + crc16(head).to_bytes(2, 'little')


def encode_status(servo_id: int, error: int, params: bytes = b'') -> bytes:
    """Return the status packet a servo sends (for the simulated bus).

    >>> encode_status(1, 0, bytes.fromhex('06 04 26')).hex(' ')   # e-Manual's ping answer
    'ff ff fd 00 01 07 00 55 00 06 04 26 65 5d'
    """
    _check_id('servo id', servo_id, broadcast=False)
    return encode_packet(servo_id, Instruction.STATUS, bytes((error & 0xFF,)) + params)


def encode_ping(servo_id: int) -> bytes:
    """Return Ping: every servo answers with its model number and firmware version."""
    _check_id('servo id', servo_id, broadcast=True)
    return encode_packet(servo_id, Instruction.PING)


def encode_read(servo_id: int, address: int, size: int) -> bytes:
    """Return Read of ``size`` bytes from ``address`` of one servo."""
    _check_id('servo id', servo_id, broadcast=False)
    return encode_packet(servo_id, Instruction.READ,
                         _word('address', address) + _word('size', size, 1))


def encode_write(servo_id: int, address: int, data: bytes) -> bytes:
    """Return Write of ``data`` at ``address`` (broadcast: every servo, none answers)."""
    _check_id('servo id', servo_id, broadcast=True)
    if not data:
        raise ValueError("data = b'', must hold at least one byte")
    return encode_packet(servo_id, Instruction.WRITE, _word('address', address) + data)


def encode_sync_read(address: int, size: int, servo_ids: Iterable[int]) -> bytes:
    """Return Sync Read: each listed servo answers ``size`` bytes at ``address``, in order."""
    ids = bytes(_checked_ids(servo_ids))
    return encode_packet(BROADCAST_ID, Instruction.SYNC_READ,
                         _word('address', address) + _word('size', size, 1) + ids)


def encode_sync_write(address: int, size: int, data_by_id: Mapping[int, bytes]) -> bytes:
    """Return Sync Write: each servo takes its own ``size`` bytes at ``address``; none answers.

    :raises ValueError: if a servo's data is not ``size`` bytes, or no servo is given.
    """
    params = bytearray(_word('address', address) + _word('size', size, 1))
    for servo_id in _checked_ids(data_by_id):
        data = data_by_id[servo_id]
        if len(data) != size:
            raise ValueError(f'data for servo {servo_id} = {data.hex(" ")!r} ({len(data)} '
                             f'bytes), must be {size} bytes')
        params += bytes((servo_id,)) + data
    return encode_packet(BROADCAST_ID, Instruction.SYNC_WRITE, bytes(params))


def _checked_ids(servo_ids: Iterable[int]) -> list[int]:
    ids = list(servo_ids)
    if not ids:
        raise ValueError('servo ids = [], must name at least one servo')
    if len(set(ids)) != len(ids):
        raise ValueError(f'servo ids = {ids!r}, must not repeat an id')
    for servo_id in ids:
        _check_id('servo id', servo_id, broadcast=False)
    return ids


@dataclass(frozen=True)
class Packet:
    """A packet as sent, stuffing removed: who, which instruction, and its parameters."""

    servo_id: int
    instruction: int
    params: bytes


@dataclass
class ReceiverCounts:
    """What a receiver threw away, so a noisy line shows in the link's statistics."""

    garbage_bytes: int = 0       # bytes before a header, or of a packet that failed a check
    bad_crc: int = 0             # whole packets whose CRC did not match
    bad_stuffing: int = 0        # packets with a header inside (cut short by another)
    bad_header: int = 0          # a header whose id or length no packet can have


class PacketReceiver:
    """Pick whole, checked packets out of a byte stream; never raises on the bytes it is fed.

    A candidate starts at ``FF FF FD 00``; its id must be 0..252 or broadcast and its length
    at least ``min_length`` and at most :data:`MAX_LENGTH`; its CRC must match and its stuffing
    be whole. A candidate that fails loses only its first byte, and the search goes on from the
    next, so a packet that began inside a damaged one is still found. A header inside a
    candidate's body ends the candidate at once (stuffing keeps headers out of bodies), so a
    length damaged on the line does not hold back the packets behind it. Memory is bounded:
    the buffer never holds more than one packet's worth of bytes.

    :param min_length: smallest length field accepted (3 for instructions, 4 for status).
    """

    def __init__(self, *, min_length: int = 3) -> None:
        self.counts = ReceiverCounts()
        self._min_length = min_length
        self._buffer = bytearray()
        self._ready: deque[Packet] = deque()

    def feed(self, data: bytes) -> None:
        """Take bytes from the line, in any chunks."""
        self._buffer += data
        while self._parse_one():
            pass

    def take(self) -> Optional[Packet]:
        """Return the oldest whole packet received, or None."""
        return self._ready.popleft() if self._ready else None

    def clear(self) -> None:
        """Forget partial bytes and unread packets (after a reconnect)."""
        self._buffer.clear()
        self._ready.clear()

    def _parse_one(self) -> bool:
        """Take one packet or skip bytes at the buffer's start; False when more are needed."""
        buffer = self._buffer
        start = buffer.find(HEADER)
        if start < 0:
            keep = _partial_header(buffer)
            self._skip(len(buffer) - keep)
            return False
        self._skip(start)
        if len(buffer) < _BODY_AT:
            return False
        length = int.from_bytes(buffer[_LENGTH_AT:_BODY_AT], 'little')
        servo_id = buffer[4]
        if not (servo_id <= MAX_ID or servo_id == BROADCAST_ID) or not (
                self._min_length <= length <= MAX_LENGTH):
            self.counts.bad_header += 1
            self._skip(1)
            return True
        end = _BODY_AT + length
        inner = buffer.find(HEADER, 1, min(len(buffer), end - 2))
        if inner > 0:           # stuffing keeps headers out of a body: this one was cut short
            self.counts.bad_stuffing += 1
            self._skip(inner)
            return True
        if len(buffer) < end:
            return False
        packet = self._checked(bytes(buffer[:end]), servo_id)
        if packet is None:
            self._skip(1)
            return True
        del buffer[:end]
        self._ready.append(packet)
        return True

    def _checked(self, raw: bytes, servo_id: int) -> Optional[Packet]:
        if crc16(raw[:-2]) != int.from_bytes(raw[-2:], 'little'):
            self.counts.bad_crc += 1
            return None
        body = unstuff(raw[_BODY_AT:-2])
        if body is None or len(body) < self._min_length - 2:
            self.counts.bad_stuffing += 1
            return None
        return Packet(servo_id, body[0], body[1:])

    def _skip(self, count: int) -> None:
        if count > 0:
            self.counts.garbage_bytes += count
            del self._buffer[:count]


def _partial_header(buffer: bytearray) -> int:
    """Return how many bytes at the end of ``buffer`` could begin a header."""
    for size in (3, 2, 1):
        if len(buffer) >= size and buffer[-size:] == HEADER[:size]:
            return size
    return 0
