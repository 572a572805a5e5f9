"""Encode and decode the Feetech STS bus protocol, and Dynamixel Protocol 1.0 (AX-12) beside it.

Feetech's STS servos speak Dynamixel Protocol 1.0's framing. A packet is
``FF FF id length code params... checksum``: ``length`` counts the bytes after it (code, params
and checksum, so params + 2), ``code`` is the instruction in a request and the error bits in a
status packet, and ``checksum`` is the inverted low byte of the sum of id, length, code and
params. Addresses and lengths inside requests are one byte. Broadcast id 0xFE; ids 0..0xFC
(scservo_sdk ``scservo_def.py``: BROADCAST_ID, MAX_ID).

Sources: scservo_sdk 1.0.0 ``protocol_packet_handler.py`` (framing, checksum, the packets of
ping, read, write, sync write and sync read, the status error bits ERRBIT_VOLTAGE = 1,
ERRBIT_ANGLE = 2, ERRBIT_OVERHEAT = 4, ERRBIT_OVERELE = 8, ERRBIT_OVERLOAD = 32, and the rule
that a status with id > 0xFD, length > 250 or error > 0x7F is not a packet); Feetech's STS
memory table (status byte: bit 1 is the magnetic encoder, bit 3 the current); dynamixel_sdk
4.1.0 ``protocol1_packet_handler.py`` (the same framing; its error bits; no sync read on
Protocol 1.0).

Pure: no I/O.
"""

from typing import ClassVar, Optional

from fabrik_ros.servo_io.protocols.bus_codec import (
    BusCodec,
    Frame,
    InstructionPacket,
    Scan,
    StatusPacket,
)
from fabrik_ros.servo_io.protocols.dialect import Protocol

HEADER = b'\xff\xff'
LENGTH_MAX = 250         # scservo_sdk RXPACKET_MAX_LEN: a longer length field is garbage
ID_MAX_STATUS = 0xFD     # a status from a higher id is garbage (scservo_sdk rxPacket)
_OVERHEAD = 6            # FF FF id length code checksum


def checksum(body: bytes) -> int:
    """Return the Protocol 1.0 checksum of ``body`` (id, length, code and params).

    >>> hex(checksum(bytes((1, 2, 1))))    # ping to id 1: FF FF 01 02 01 FB
    '0xfb'
    """
    return ~sum(body) & 0xFF


class ProtocolOneCodec(BusCodec):
    """Dynamixel Protocol 1.0 framing, shared by Feetech STS and the Dynamixel AX series."""

    protocol_version: ClassVar[float] = 1.0
    FIELD_BYTES = 1

    def packet(self, servo_id: int, instruction: int, params: bytes) -> bytes:
        """Return ``FF FF id length instruction params checksum``.

        :raises ValueError: if the length field would exceed :data:`LENGTH_MAX`.
        """
        return self._frame(servo_id, instruction, params)

    def status(self, servo_id: int, error: int, params: bytes) -> bytes:
        """Return the status packet ``FF FF id length error params checksum``."""
        return self._frame(servo_id, error, params)

    def status_size(self, params_len: int) -> int:
        """Return the bytes of one status packet: 6 plus the parameters."""
        return _OVERHEAD + params_len

    def instruction_size(self, params_len: int) -> int:
        """Return the bytes of one instruction packet: 6 plus the parameters."""
        return _OVERHEAD + params_len

    def _frame(self, servo_id: int, code: int, params: bytes) -> bytes:
        length = len(params) + 2
        if length > LENGTH_MAX:
            raise ValueError(f'packet length = {length}, must be at most {LENGTH_MAX} '
                             f'({LENGTH_MAX - 2} parameter bytes)')
        body = bytes((servo_id, length, code)) + params
        return HEADER + body + bytes((checksum(body),))

    def _scan(self, buffer: bytearray) -> Scan:
        start = buffer.find(HEADER)
        if start < 0:                    # keep a last 0xFF: it may begin the next header
            keep = 1 if buffer[-1:] == b'\xff' else 0
            return Scan(drop=len(buffer) - keep)
        if start > 0:
            return Scan(drop=start)
        if len(buffer) < 4:
            return Scan()
        servo_id, length = buffer[2], buffer[3]
        if servo_id == 0xFF or not 2 <= length <= LENGTH_MAX:
            return Scan(drop=1)          # FF FF FF ... or a length no packet has
        size = length + 4
        if len(buffer) < size:
            return Scan()
        if ~sum(buffer[2:size - 1]) & 0xFF != buffer[size - 1]:       # checksum()
            return Scan(drop=1, bad_checksum=True)
        return Scan(drop=size, frame=Frame(servo_id, buffer[4], bytes(buffer[5:size - 1])))

    def take_status(self) -> Optional[StatusPacket]:
        """Return the next status packet received, None until a whole one is there.

        A whole, good status at the front of the buffer (the usual case: a sync read's six
        answers arrive together) is taken here in one step; anything else (garbage, a bad
        checksum, a part, another direction's packet) goes the general way, which skips and
        counts it.
        """
        buffer = self._buffer
        if len(buffer) >= _OVERHEAD and buffer[0] == 0xFF and buffer[1] == 0xFF:
            servo_id, length, code = buffer[2], buffer[3], buffer[4]
            size = length + 4
            if (servo_id <= ID_MAX_STATUS and not code & 0x80 and 2 <= length <= LENGTH_MAX
                    and len(buffer) >= size
                    and ~sum(buffer[2:size - 1]) & 0xFF == buffer[size - 1]):
                params = bytes(buffer[5:size - 1])
                del buffer[:size]
                return StatusPacket(servo_id, code, params)
        return super().take_status()

    def _as_status(self, frame: Frame) -> Optional[StatusPacket]:
        if frame.id > ID_MAX_STATUS or frame.code & 0x80:
            return None
        return StatusPacket(frame.id, frame.code, frame.params)

    def _as_instruction(self, frame: Frame) -> Optional[InstructionPacket]:
        return InstructionPacket(frame.id, frame.code, frame.params)


class FeetechCodec(ProtocolOneCodec):
    """Feetech STS series (STS3215 of the SO-100/SO-101), little-endian.

    >>> FeetechCodec().read(1, 56, 2).hex(' ')      # Present_Position of servo 1
    'ff ff 01 04 02 38 02 be'
    """

    protocol = Protocol.FEETECH
    ERROR_BITS = {0x01: 'input voltage', 0x02: 'angle sensor', 0x04: 'overheat',
                  0x08: 'overcurrent', 0x20: 'overload'}
    # Instruction 0x06 of an STS servo is RESET (the factory values: id, limits, offsets
    # gone), not a reboot; the makers' SDK has no reboot. Never sent.
    REBOOT_REFUSAL = ('Feetech STS servos have no reboot instruction (their 0x06 is a factory '
                      'reset, which would erase the id and the calibration, and is never '
                      "sent): switch the servos' supply off and on instead")


class DynamixelOneCodec(ProtocolOneCodec):
    """Dynamixel Protocol 1.0 (AX-12, AX-18): Feetech's framing, no sync read, other error bits.

    ``protocol`` is Protocol.DYNAMIXEL with :attr:`protocol_version` 1.0; the link speaks
    Protocol 2.0 for ``protocol:=dynamixel`` and has no switch for 1.0 yet.
    """

    protocol = Protocol.DYNAMIXEL
    SYNC_READ = False
    ERROR_BITS = {0x01: 'input voltage', 0x02: 'angle limit', 0x04: 'overheat',
                  0x08: 'range', 0x10: 'checksum', 0x20: 'overload', 0x40: 'instruction'}
