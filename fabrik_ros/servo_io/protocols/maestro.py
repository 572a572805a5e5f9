"""Encode and decode the Pololu Maestro compact serial protocol.

Source: "Pololu Maestro Servo Controller User's Guide" (pololu.com/docs/0J40), section 5.c
"TTL Serial" (a compact-protocol packet is a command byte with its top bit set followed by
data bytes with their top bit clear) and section 5.e "Serial Servo Commands": Set Target
``0x84 ch lo hi`` with the target in quarter-microseconds split into two 7-bit halves (a target
of 0 stops the pulses), Set Multiple Targets ``0x9F n first (lo hi)×n`` (Mini Maestro 12/18/24
only), Set Speed ``0x87`` in (0.25 µs)/(10 ms), Set Acceleration ``0x89`` in
(0.25 µs)/(10 ms)/(80 ms), Get Position ``0x90 ch`` (answer: position in quarter-µs, low byte
first), Get Errors ``0xA1`` (answer: the 16-bit error register, low byte first; section 4.e
lists the bits), Go Home ``0xA2``.

Pure: no I/O. :class:`MaestroCommandDecoder` parses the host's bytes for the simulated board.
"""

from collections.abc import Sequence
from dataclasses import dataclass
import enum
from typing import Optional

SET_TARGET = 0x84
SET_SPEED = 0x87
SET_ACCELERATION = 0x89
GET_POSITION = 0x90
SET_MULTIPLE_TARGETS = 0x9F
GET_ERRORS = 0xA1
GO_HOME = 0xA2
CHANNELS = 24
DATA_MAX = 0x3FFF        # two 7-bit halves
QUARTERS_PER_US = 4
REPLY_SIZE = 2           # Get Position and Get Errors both answer two bytes


class MaestroError(enum.IntFlag):
    """Bits of the Maestro error register (User's Guide section 4.e)."""

    SERIAL_SIGNAL = 1 << 0
    SERIAL_OVERRUN = 1 << 1
    SERIAL_BUFFER_FULL = 1 << 2
    SERIAL_CRC = 1 << 3
    SERIAL_PROTOCOL = 1 << 4
    SERIAL_TIMEOUT = 1 << 5
    SCRIPT_STACK = 1 << 6
    SCRIPT_CALL_STACK = 1 << 7
    SCRIPT_PROGRAM_COUNTER = 1 << 8


ERRORS_DEFINED = 0x01FF  # bits 0-8; no Maestro sets the others


def _check_channel(channel: int) -> None:
    if not 0 <= channel < CHANNELS:
        raise ValueError(f'channel = {channel!r}, must be within [0, {CHANNELS - 1}]')


def _halves(name: str, value: int) -> bytes:
    if not 0 <= value <= DATA_MAX:
        raise ValueError(f'{name} = {value!r}, must be within [0, {DATA_MAX}]')
    return bytes((value & 0x7F, value >> 7))


def us_to_quarters(pulse_us: float) -> int:
    """Return the Maestro target for a pulse width [µs] (quarter-microseconds).

    >>> us_to_quarters(1500)
    6000
    """
    return round(pulse_us * QUARTERS_PER_US)


def encode_set_target(channel: int, pulse_us: float) -> bytes:
    """Return Set Target for one channel; ``pulse_us`` = 0 stops its pulses.

    >>> encode_set_target(0, 1500).hex(' ')
    '84 00 70 2e'
    """
    _check_channel(channel)
    return bytes((SET_TARGET, channel)) + _halves('target', us_to_quarters(pulse_us))


def encode_set_multiple_targets(first_channel: int, pulses_us: Sequence[float]) -> bytes:
    """Return Set Multiple Targets for channels ``first_channel..`` (Mini Maestro only)."""
    _check_channel(first_channel)
    if not pulses_us or first_channel + len(pulses_us) > CHANNELS:
        raise ValueError(f'len(pulses_us) = {len(pulses_us)} from channel {first_channel}, '
                         f'must be at least 1 and end at channel {CHANNELS - 1} at most')
    data = b''.join(_halves(f'target[{index}]', us_to_quarters(pulse))
                    for index, pulse in enumerate(pulses_us))
    return bytes((SET_MULTIPLE_TARGETS, len(pulses_us), first_channel)) + data


def encode_set_speed(channel: int, speed: int) -> bytes:
    """Return Set Speed; ``speed`` in (0.25 µs)/(10 ms), 0 = unlimited."""
    _check_channel(channel)
    return bytes((SET_SPEED, channel)) + _halves('speed', speed)


def encode_set_acceleration(channel: int, acceleration: int) -> bytes:
    """Return Set Acceleration; ``acceleration`` in (0.25 µs)/(10 ms)/(80 ms), 0 = unlimited."""
    _check_channel(channel)
    if not 0 <= acceleration <= 255:
        raise ValueError(f'acceleration = {acceleration!r}, must be within [0, 255]')
    return bytes((SET_ACCELERATION, channel)) + _halves('acceleration', acceleration)


def encode_get_position(channel: int) -> bytes:
    """Return Get Position; the Maestro answers two bytes (see :func:`decode_u16`)."""
    _check_channel(channel)
    return bytes((GET_POSITION, channel))


def encode_get_errors() -> bytes:
    """Return Get Errors; the Maestro answers the error register and clears it."""
    return bytes((GET_ERRORS,))


def encode_go_home() -> bytes:
    """Return Go Home: every channel goes to its configured home (or off)."""
    return bytes((GO_HOME,))


def decode_u16(data: bytes) -> int:
    """Return the little-endian 16-bit value of a two-byte answer.

    >>> decode_u16(bytes((0x70, 0x17)))
    6000
    """
    return data[0] | (data[1] << 8)


def encode_u16(value: int) -> bytes:
    """Return a two-byte answer for ``value`` (used by the simulated board)."""
    return bytes((value & 0xFF, (value >> 8) & 0xFF))


def speed_for_move(delta_us: float, move_s: float) -> int:
    """Return the Set Speed value that covers ``delta_us`` in ``move_s`` (0 = unlimited).

    >>> speed_for_move(350, 0.1)
    140
    """
    if move_s <= 0 or delta_us == 0:
        return 0
    quarters_per_10ms = abs(delta_us) * QUARTERS_PER_US / (move_s * 100)
    return max(1, min(DATA_MAX, round(quarters_per_10ms)))


@dataclass(frozen=True)
class MaestroCommand:
    """One parsed compact-protocol packet: the command byte and its data values.

    ``values`` holds 14-bit values joined from 7-bit halves where the command has them
    (targets, speed, acceleration), and the raw channel/count bytes otherwise.
    """

    command: int
    channel: Optional[int]
    values: tuple[int, ...]


_FIXED_DATA: dict[int, int] = {SET_TARGET: 3, SET_SPEED: 3, SET_ACCELERATION: 3,
                               GET_POSITION: 1, GET_ERRORS: 0, GO_HOME: 0}


class MaestroCommandDecoder:
    """Parse compact-protocol packets from a byte stream; never raises.

    Like the Maestro, it treats a command byte it does not know, or a command byte arriving
    before the previous packet is complete, as a serial protocol error (counted in
    ``protocol_errors``) and starts over at the new command byte.

    >>> MaestroCommandDecoder().feed(bytes((0x84, 0x00, 0x70, 0x2E)))
    [MaestroCommand(command=132, channel=0, values=(6000,))]
    """

    def __init__(self) -> None:
        self._packet = bytearray()
        self.protocol_errors = 0

    def feed(self, data: bytes) -> list[MaestroCommand]:
        """Add ``data`` and return every packet completed by it."""
        commands: list[MaestroCommand] = []
        for byte in data:
            if byte & 0x80:
                if self._packet:
                    self.protocol_errors += 1
                self._packet = bytearray((byte,))
                if byte not in _FIXED_DATA and byte != SET_MULTIPLE_TARGETS:
                    self.protocol_errors += 1
                    self._packet.clear()
            elif self._packet:
                self._packet.append(byte)
            else:
                self.protocol_errors += 1
            command = self._complete()
            if command is not None:
                commands.append(command)
                self._packet.clear()
        return commands

    def _needed(self) -> int:
        command = self._packet[0]
        if command != SET_MULTIPLE_TARGETS:
            return 1 + _FIXED_DATA[command]
        return 3 + 2 * self._packet[1] if len(self._packet) > 1 else 3

    def _complete(self) -> Optional[MaestroCommand]:
        if not self._packet or len(self._packet) < self._needed():
            return None
        packet = bytes(self._packet)
        command = packet[0]
        if command == SET_MULTIPLE_TARGETS:
            halves = packet[3:]
            return MaestroCommand(command, packet[2], _join_halves(halves))
        channel = packet[1] if len(packet) > 1 else None
        return MaestroCommand(command, channel, _join_halves(packet[2:]))


def _join_halves(data: bytes) -> tuple[int, ...]:
    return tuple(data[i] | (data[i + 1] << 7) for i in range(0, len(data) - 1, 2))
