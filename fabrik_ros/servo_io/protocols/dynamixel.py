"""Encode and decode Dynamixel Protocol 2.0 packets (ROBOTIS X series and later).

Source: the ROBOTIS e-Manual, "Protocol 2.0" (emanual.robotis.com/docs/en/dxl/protocol2/):
a packet is ``FF FF FD 00 id len_l len_h instruction params... crc_l crc_h``; ``len`` counts
the instruction, the parameters and the CRC; a status packet is instruction 0x55 whose first
parameter is the error byte (bit 7 the alert, bits 0-6 an error number). Byte stuffing: from the
instruction to the last parameter, each ``FF FF FD`` gets an extra ``FD``, so a header cannot
appear inside a packet; the length and the CRC cover the stuffed bytes. The CRC is a CRC-16
with polynomial 0x8005, initial value 0, no reflection and no final XOR (the CRC catalogue's
CRC-16/BUYPASS; dynamixel_sdk's ``updateCRC`` table is this polynomial's), over everything from
the first header byte to the last parameter. The e-Manual's own packets (ping, read, write,
sync read, sync write and their status packets) are the test vectors.

Pure: no I/O. :class:`DynamixelCodec` is the :class:`~.bus_codec.BusCodec` of Protocol 2.0:
its receiver picks whole packets out of a byte stream (status packets for the host,
instruction packets for the simulated bus), skips garbage, bad CRCs and broken stuffing, and
never raises on device bytes.
"""

import enum
from typing import ClassVar, Optional

from fabrik_ros.servo_io.protocols.bus_codec import (
    BusCodec,
    Frame,
    InstructionPacket,
    Scan,
    StatusPacket,
)
from fabrik_ros.servo_io.protocols.dialect import Protocol

HEADER = b'\xff\xff\xfd\x00'
_PATTERN = b'\xff\xff\xfd'       # what stuffing keeps out of a packet's body
_STUFF = 0xFD
BROADCAST_ID = 0xFE
MAX_ID = 0xFC                    # ids 0..252; 253 and 255 would look like header bytes
MAX_LENGTH = 1024                # longest length field accepted (dynamixel_sdk RXPACKET_MAX_LEN)
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


def unstuff(body: bytes, *, strict: bool = True) -> Optional[bytes]:
    """Return ``body`` as sent before stuffing, or None if its stuffing is broken.

    Broken: an FF FF FD not followed by FD, which a sender that stuffs never puts in a body
    (it is a header, so the packet was cut short and another one began). With ``strict``
    False such a pattern is kept as it is, as a servo reads it (see :class:`DynamixelCodec`).

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
            if index < len(body) and body[index] == _STUFF:
                index += 1      # drop the added FD; the pattern's own FD stays
            elif strict:
                return None
    return bytes(out)


HARDWARE_ERROR_BITS = {0x01: 'input voltage', 0x04: 'overheating', 0x08: 'motor encoder',
                       0x10: 'electrical shock', 0x20: 'overload'}
"""Bits of the X series' Hardware Error Status (70) register (e-Manual, X series "Shutdown(63)":
bits 1, 6 and 7 unused); the alert bit of a status packet says one of them is set."""


def hardware_error_words(value: int) -> tuple[str, ...]:
    """Return the Hardware Error Status register in words; bits the manual leaves unused by number.

    >>> hardware_error_words(0x24)
    ('overheating', 'overload')
    """
    return tuple(HARDWARE_ERROR_BITS.get(1 << bit, f'bit {bit}')
                 for bit in range(8) if value >> bit & 1)


class DynamixelCodec(BusCodec):
    """Dynamixel Protocol 2.0: X series (XL430, XM430, XL330...), MX with firmware 2.0, P series.

    Addresses and sizes inside requests are two bytes. A sync write's ids go in ascending
    order (the base class), a sync read's in the order asked, and the servos answer in that
    order. The status error byte is not a set of bits as on Protocol 1.0: bit 7 is the alert
    (see :func:`hardware_error_words`) and bits 0-6 one error number (:func:`error_words`).

    The receiver is strict by default: a header inside a packet's body ends the packet at once
    (a status packet whose length was damaged does not hold back the ones behind it), and an
    unstuffed FF FF FD in a body makes it broken. The e-Manual's servo receives by length
    instead (find the header, take ``len`` bytes, check the CRC, then remove the stuffing),
    and so accepts an unstuffed packet whose CRC matches; dynamixel_sdk 4.1.0 sends such
    packets (its txPacket drops the result of addStuffing when stuffing lengthens a packet).
    The simulated servos read with ``strict_stuffing=False`` to do as the servo does.

    >>> DynamixelCodec().read(1, 132, 4).hex(' ')     # the e-Manual's read example
    'ff ff fd 00 01 07 00 02 84 00 04 00 1d 15'
    """

    protocol = Protocol.DYNAMIXEL
    protocol_version: ClassVar[float] = 2.0
    BROADCAST_ID = BROADCAST_ID
    MAX_ID = MAX_ID
    FIELD_BYTES = 2
    REBOOT_REFUSAL = ''

    def __init__(self, *, strict_stuffing: bool = True) -> None:
        super().__init__()
        self.strict_stuffing = strict_stuffing

    def packet(self, servo_id: int, instruction: int, params: bytes) -> bytes:
        """Return a whole packet: header, id, length, stuffed body and CRC.

        :raises ValueError: if the stuffed packet is longer than :data:`MAX_LENGTH` allows.
        """
        body = stuff(bytes((instruction,)) + params)
        length = len(body) + 2
        if length > MAX_LENGTH:
            raise ValueError(f'packet length = {length}, must be at most {MAX_LENGTH} (fewer '
                             'servos or bytes per packet)')
        head = HEADER + bytes((servo_id,)) + length.to_bytes(2, 'little') + body
        return head + crc16(head).to_bytes(2, 'little')

    def reboot(self, servo_id: int) -> bytes:
        """Return a reboot of one servo; it answers a status, then restarts as at power-up.

        The way out of a hardware-error shutdown (Shutdown(63)): torque off, RAM registers
        at their power-up values, the error cleared until it happens again.

        >>> DynamixelCodec().reboot(1).hex(' ')        # the e-Manual's reboot example
        'ff ff fd 00 01 03 00 08 2f 4e'
        """
        self._check_id(servo_id, broadcast=False)
        return self.packet(servo_id, Instruction.REBOOT, b'')

    def hardware_alert(self, error: int) -> bool:
        """Return True if the status's alert bit (7) is set: a hardware error."""
        return bool(error & ALERT)

    def status(self, servo_id: int, error: int, params: bytes) -> bytes:
        """Return the status packet a servo sends: instruction 0x55, error byte, parameters.

        >>> DynamixelCodec().status(1, 0, bytes.fromhex('06 04 26')).hex(' ')  # ping answer
        'ff ff fd 00 01 07 00 55 00 06 04 26 65 5d'
        """
        self._check_id(servo_id, broadcast=False)
        return self.packet(servo_id, Instruction.STATUS, bytes((error & 0xFF,)) + params)

    def status_size(self, params_len: int) -> int:
        """Return the bytes of one status packet: 11 plus the parameters (before stuffing).

        Stuffing adds a byte per ``FF FF FD`` in the parameters, which positions and limits of
        one turn never hold.
        """
        return STATUS_OVERHEAD + params_len

    def instruction_size(self, params_len: int) -> int:
        """Return the bytes of one instruction packet: 10 plus the parameters (before stuffing)."""
        return _OVERHEAD + params_len

    def error_words(self, error: int) -> tuple[str, ...]:
        """Return a status packet's error byte in words: the alert, then the error number."""
        return error_words(error)

    def hardware_error_words(self, value: int) -> tuple[str, ...]:
        """Return the Hardware Error Status register (70) in words."""
        return hardware_error_words(value)

    def _scan(self, buffer: bytearray) -> Scan:
        start = buffer.find(HEADER)
        if start < 0:
            return Scan(drop=len(buffer) - _partial_header(buffer))
        if start > 0:
            return Scan(drop=start)
        if len(buffer) < _BODY_AT:
            return Scan()
        servo_id = buffer[4]
        length = int.from_bytes(buffer[_LENGTH_AT:_BODY_AT], 'little')
        if servo_id not in _IDS or not 3 <= length <= MAX_LENGTH:
            return Scan(drop=1)             # an id or a length no packet has
        end = _BODY_AT + length
        inner = buffer.find(HEADER, 1, min(len(buffer), end - 2))
        if inner > 0 and self.strict_stuffing:     # no header in a stuffed body: cut short
            return Scan(drop=inner, bad_checksum=True)
        if len(buffer) < end:
            return Scan()
        if crc16(bytes(buffer[:end - 2])) != int.from_bytes(buffer[end - 2:end], 'little'):
            return Scan(drop=1, bad_checksum=True)
        body = unstuff(bytes(buffer[_BODY_AT:end - 2]), strict=self.strict_stuffing)
        if body is None:
            return Scan(drop=1, bad_checksum=True)
        return Scan(drop=end, frame=Frame(servo_id, body[0], body[1:]))

    def _as_status(self, frame: Frame) -> Optional[StatusPacket]:
        if frame.code != Instruction.STATUS or not frame.params or frame.id > MAX_ID:
            return None
        return StatusPacket(frame.id, frame.params[0], frame.params[1:])

    def _as_instruction(self, frame: Frame) -> Optional[InstructionPacket]:
        if frame.code == Instruction.STATUS:
            return None
        return InstructionPacket(frame.id, frame.code, frame.params)


_IDS = frozenset(range(MAX_ID + 1)) | {BROADCAST_ID}


def _partial_header(buffer: bytearray) -> int:
    """Return how many bytes at the end of ``buffer`` could begin a header."""
    for size in (3, 2, 1):
        if buffer[-size:] == HEADER[:size]:
            return size
    return 0
