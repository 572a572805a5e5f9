"""Encode and decode the Lynxmotion SSC-32U ASCII protocol.

Source: "Lynxmotion SSC-32U USB Servo Controller Board User Guide", section "Commands":
"Single Servo Commands" (``#<ch>P<pw>S<spd>T<time><cr>``, channels 0-31, pulse normally
500-2500 µs, speed in µs/s, time in ms up to 65535), "Multiple servo command (Command Group)"
(one ``T`` at the end applies to the whole group, all servos start and stop together),
"Query Movement Status" (``Q<cr>`` answers ``.`` when the previous move is complete and ``+``
while it is in progress), "Query Pulse Width" (``QP<arg><cr>`` answers one binary byte per
queried servo, the pulse width / 10), and "Get Version" (``VER<cr>`` answers the firmware
version as text). Arguments are decimal ASCII, case does not matter, spaces are ignored. The
guide gives the board's factory baud rate as 9600.

The version text is ``SSC32-V``, a version number and a suffix naming the variant:
``SSC32-V2.50USB`` on an SSC-32U (host programs written for the board compare the whole
answer, ``SSC32-V2.50USB<cr>``). Anything else in answer to ``VER`` is not this board.

Two behaviours are not in the guide's command tables: ``#<ch>P0`` stops the pulses of a channel
(RobotShop support, community.robotshop.com "Servo release with SSC-32U"), and after power-up
the board ignores ``S``/``T`` for a channel until a plain ``#<ch>P<pw>`` has positioned it,
because it does not know where the servo is; the link therefore sends each channel's first
command after a (re)connect without ``T``.

Pure: no I/O. :class:`Ssc32CommandDecoder` parses the host's commands for the simulated board.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import re
from typing import Optional, Union

CR = b'\r'
FACTORY_BAUD = 9600
VERSION_EXAMPLE = 'SSC32-V2.50USB'
# 'SSC32-', an optional V, major.minor, a variant suffix of letters and digits.
_VERSION_LINE = re.compile(r'SSC32-V?[0-9]{1,2}\.[0-9]{1,3}[A-Z0-9]{0,8}')
CHANNELS = 32
PULSE_MIN_US = 500
PULSE_MAX_US = 2500
TIME_MAX_MS = 65535
MOVE_DONE = ord('.')
MOVE_IN_PROGRESS = ord('+')
MAX_LINE = 512           # the decoder drops a longer line without CR as garbage


def _check_channel(channel: int) -> None:
    if not 0 <= channel < CHANNELS:
        raise ValueError(f'channel = {channel!r}, must be within [0, {CHANNELS - 1}]')


def encode_group_move(pulses_us: Mapping[int, int], *, time_ms: Optional[int] = None,
                      speeds_us_per_s: Optional[Mapping[int, int]] = None) -> bytes:
    r"""Return ``#<ch>P<pw>[S<spd>]...[T<ms>]\r`` moving every channel in ``pulses_us``.

    :param pulses_us: channel → pulse width [µs], each within 500..2500.
    :param time_ms: duration of the whole group move [ms]; None = as fast as allowed.
    :param speeds_us_per_s: optional per-channel speed limit [µs/s].
    :raises ValueError: on an empty move or a channel, pulse, speed or time out of range.
    """
    if not pulses_us:
        raise ValueError('pulses_us is empty, must name at least one channel')
    speeds = speeds_us_per_s or {}
    parts = []
    for channel in sorted(pulses_us):
        _check_channel(channel)
        pulse = pulses_us[channel]
        if not PULSE_MIN_US <= pulse <= PULSE_MAX_US:
            raise ValueError(f'pulses_us[{channel}] = {pulse!r}, must be within '
                             f'[{PULSE_MIN_US}, {PULSE_MAX_US}]')
        parts.append(f'#{channel}P{pulse}')
        if channel in speeds:
            if not 1 <= speeds[channel] <= 65535:
                raise ValueError(f'speeds_us_per_s[{channel}] = {speeds[channel]!r}, '
                                 'must be within [1, 65535]')
            parts.append(f'S{speeds[channel]}')
    if time_ms is not None:
        if not 0 <= time_ms <= TIME_MAX_MS:
            raise ValueError(f'time_ms = {time_ms!r}, must be within [0, {TIME_MAX_MS}]')
        parts.append(f'T{time_ms}')
    return ''.join(parts).encode('ascii') + CR


def encode_stop_pulses(channels: Sequence[int]) -> bytes:
    r"""Return ``#<ch>P0...\r``: stop pulsing ``channels`` (servos go limp)."""
    if not channels:
        raise ValueError('channels is empty, must name at least one channel')
    for channel in channels:
        _check_channel(channel)
    return ''.join(f'#{channel}P0' for channel in sorted(channels)).encode('ascii') + CR


def encode_query_movement() -> bytes:
    r"""Return ``Q\r``; the board answers one byte, ``.`` (done) or ``+`` (moving)."""
    return b'Q' + CR


def encode_query_pulse_widths(channels: Sequence[int]) -> bytes:
    r"""Return ``QP<ch> QP<ch>...\r``; the board answers one byte (pulse / 10) per channel."""
    if not channels:
        raise ValueError('channels is empty, must name at least one channel')
    for channel in channels:
        _check_channel(channel)
    return ' '.join(f'QP{channel}' for channel in channels).encode('ascii') + CR


def encode_version() -> bytes:
    r"""Return ``VER\r``; the board answers its firmware version text ending in CR."""
    return b'VER' + CR


def decode_version(line: bytes) -> Optional[str]:
    r"""Return the version in a ``VER`` answer (with or without its CR), None if it is not one.

    >>> decode_version(b'SSC32-V2.50USB\r')
    'SSC32-V2.50USB'
    >>> decode_version(b'\x8f\x13SSC32\r') is None
    True
    """
    text = line.removesuffix(CR).decode('ascii', 'replace')
    return text if _VERSION_LINE.fullmatch(text) else None


def decode_pulse_widths(data: bytes) -> tuple[int, ...]:
    """Return the pulse widths [µs] in a Query Pulse Width answer (10 µs resolution)."""
    return tuple(byte * 10 for byte in data)


def decode_movement(byte: int) -> Optional[bool]:
    """Return True if a Query Movement answer says moving, False if done, None if neither."""
    return {MOVE_IN_PROGRESS: True, MOVE_DONE: False}.get(byte)


def encode_pulse_width_answer(pulses_us: Sequence[int]) -> bytes:
    """Return the bytes a board answers to Query Pulse Width (used by the simulated board)."""
    return bytes(min(255, max(0, round(pulse / 10))) for pulse in pulses_us)


@dataclass(frozen=True)
class ChannelMove:
    """One ``#<ch>P<pw>[S<spd>]`` element of a group move."""

    channel: int
    pulse_us: int
    speed_us_per_s: Optional[int]


@dataclass(frozen=True)
class GroupMove:
    """A parsed group move; ``time_ms`` is None when the line had no ``T``."""

    moves: tuple[ChannelMove, ...]
    time_ms: Optional[int]


@dataclass(frozen=True)
class QueryMovement:
    """A parsed ``Q`` command."""


@dataclass(frozen=True)
class QueryPulseWidths:
    """A parsed ``QP`` command (one or more channels)."""

    channels: tuple[int, ...]


@dataclass(frozen=True)
class Version:
    """A parsed ``VER`` command."""


@dataclass(frozen=True)
class Unparsed:
    """A line the decoder could not parse; the board ignores it."""

    text: str


Ssc32Command = Union[GroupMove, QueryMovement, QueryPulseWidths, Version, Unparsed]


class Ssc32CommandDecoder:
    r"""Split the host's byte stream at CR and parse each line; never raises.

    >>> Ssc32CommandDecoder().feed(b'#0P1500#1P900T500\rQ\r')[1]
    QueryMovement()
    """

    def __init__(self) -> None:
        self._line = bytearray()

    def feed(self, data: bytes) -> list[Ssc32Command]:
        """Add ``data`` and return a command for every line completed by it."""
        commands: list[Ssc32Command] = []
        for byte in data:
            if byte == CR[0]:
                commands.append(parse_line(self._line.decode('ascii', 'replace')))
                self._line.clear()
            elif len(self._line) < MAX_LINE:
                self._line.append(byte)
            else:
                self._line.clear()
        return commands


def parse_line(text: str) -> Ssc32Command:
    """Parse one command line (without CR) into a command, or :class:`Unparsed`."""
    compact = ''.join(text.split()).upper()
    if compact == 'VER':
        return Version()
    if compact == 'Q':
        return QueryMovement()
    if compact.startswith('QP'):
        return _parse_query_pulses(compact, text)
    if compact.startswith('#'):
        return _parse_group_move(compact, text)
    return Unparsed(text)


def _parse_query_pulses(compact: str, text: str) -> Ssc32Command:
    channels = []
    for item in compact.split('QP')[1:]:
        if not item.isdigit() or int(item) >= CHANNELS:
            return Unparsed(text)
        channels.append(int(item))
    return QueryPulseWidths(tuple(channels))


def _tokens(compact: str) -> Optional[list[tuple[str, int]]]:
    """Split ``#5P1500S20T9`` into ``[('#', 5), ('P', 1500), ...]``; None on bad syntax."""
    tokens = []
    index = 0
    while index < len(compact):
        letter = compact[index]
        end = index + 1
        while end < len(compact) and compact[end].isdigit():
            end += 1
        if letter not in '#PST' or end == index + 1 or end - index > 7:
            return None
        tokens.append((letter, int(compact[index + 1:end])))
        index = end
    return tokens


def _parse_group_move(compact: str, text: str) -> Ssc32Command:
    tokens = _tokens(compact)
    if not tokens:
        return Unparsed(text)
    moves: list[ChannelMove] = []
    time_ms = None
    channel: Optional[int] = None
    pulse: Optional[int] = None
    speed: Optional[int] = None
    for letter, value in tokens + [('#', 0)]:
        if letter == '#':
            if channel is not None:
                if pulse is None or channel >= CHANNELS:
                    return Unparsed(text)
                moves.append(ChannelMove(channel, pulse, speed))
            channel, pulse, speed = value, None, None
        elif letter == 'P' and channel is not None:
            pulse = value
        elif letter == 'S' and channel is not None:
            speed = value
        elif letter == 'T' and time_ms is None:
            time_ms = value
        else:
            return Unparsed(text)
    return GroupMove(tuple(moves), time_ms)
