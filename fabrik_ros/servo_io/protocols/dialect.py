"""What the link needs from a board protocol: requests to send and the answers they expect.

A :class:`Dialect` turns the link's desired state (pulses, limits, enable bits, watchdog) into
:class:`Transaction` objects and recognises the answers in the received bytes. It does no I/O
itself, so the link's port handling, retries and pacing are the same for every protocol.
"""

import abc
from collections.abc import Sequence
from dataclasses import dataclass
import enum
from typing import Optional

from fabrik_ros.servo_io.protocols.native import BoardInfo, NackError, WatchdogAction


class Protocol(enum.Enum):
    """The serial protocols a link or simulated board can speak.

    The first three drive PWM boards (a :class:`Dialect` each, pulses in µs, ServoLink); the
    bus protocols address serial bus servos by id in encoder counts (a codec each in
    :mod:`.bus_codec`, BusLink): iterate over :data:`PWM_PROTOCOLS` or :data:`BUS_PROTOCOLS`,
    not over the enum, where only one kind fits.
    """

    NATIVE = 'native'    # hardware/PROTOCOL.md
    SSC32 = 'ssc32'      # Lynxmotion SSC-32U ASCII
    MAESTRO = 'maestro'  # Pololu Maestro compact protocol
    FEETECH = 'feetech'  # Feetech STS bus servos (Dynamixel Protocol 1.0 framing)
    DYNAMIXEL = 'dynamixel'  # Dynamixel Protocol 2.0 bus servos (X series)

    @property
    def is_bus(self) -> bool:
        """Whether this protocol addresses bus servos by id (else a PWM board's channels)."""
        return self in BUS_PROTOCOLS


PWM_PROTOCOLS: tuple[Protocol, ...] = (Protocol.NATIVE, Protocol.SSC32, Protocol.MAESTRO)
BUS_PROTOCOLS: tuple[Protocol, ...] = (Protocol.FEETECH, Protocol.DYNAMIXEL)
# The protocols a user is offered: servo_driver's `protocol` parameter, the launch files'
# `protocol:=`, sim_device, the demo and the web view build their choices from this one line
# (the bus protocols since servo_driver drives them through BusLink, issue 23).
OFFERED_PROTOCOLS: tuple[Protocol, ...] = PWM_PROTOCOLS + BUS_PROTOCOLS


class AnswerKind(enum.Enum):
    """How the answer to a request is recognised."""

    NONE = 'none'        # fire and forget; the link only waits for the line time
    FRAME = 'frame'      # a native reply frame with the request's sequence number
    BYTES = 'bytes'      # exactly ``size`` raw bytes
    LINE = 'line'        # text up to and including CR


@dataclass(frozen=True)
class Transaction:
    """Bytes to write and what answer (if any) completes them."""

    data: bytes
    answer: AnswerKind
    seq: int = 0
    cmd: int = 0
    size: int = 0


@dataclass(frozen=True)
class Answer:
    """A recognised answer: ``nack`` is set when the board refused, ``data`` otherwise."""

    data: bytes
    nack: Optional[NackError] = None


@dataclass(frozen=True)
class Positions:
    """Pulses the board reports per channel [µs]; None where it reports none (unset or off)."""

    pulses_us: tuple[Optional[int], ...]
    resolution_us: float
    stamp_s: float


@dataclass(frozen=True)
class Capabilities:
    """Which link features the protocol carries to the board."""

    acknowledged: bool       # every command is answered, so lost commands are re-sent
    board_limits: bool       # limits are enforced by the board (else by the link only)
    watchdog: bool           # host-silence watchdog on the board
    pulse_range_us: tuple[int, int]
    fast_frame: bool = False  # a pulse frame other than the 50 Hz default (SET_FRAME)


class Dialect(abc.ABC):
    """Build requests for one protocol and pick its answers out of the received bytes.

    Class attributes describe the board for messages: ``board_name`` (as its maker calls
    it), ``board_channels`` (channels 0..n-1 exist on the largest model) and
    ``likely_causes`` (why a port does not answer as this board would, for the one line
    that refuses it). ``unframed`` is True where answers carry no start byte or checksum,
    so bytes no request asked for could pass for answers: the link listens for silence after
    the handshake answer, and :meth:`take_unrequested` tells what broke it.
    """

    capabilities: Capabilities
    board_name: str
    board_channels: int
    likely_causes: str = ''
    unframed: bool = False

    def __init__(self, channels: int) -> None:
        if not 1 <= channels <= self.board_channels:
            raise ValueError(f'channels = {channels!r}, must be within [1, '
                             f'{self.board_channels}] (channels 0..{self.board_channels - 1} '
                             f'of a {self.board_name})')
        self.channels = channels

    @abc.abstractmethod
    def reset(self) -> None:
        """Forget per-connection state and buffered bytes (called on every (re)connect)."""

    @abc.abstractmethod
    def discard_input(self) -> None:
        """Drop buffered bytes and half-received answers (called after a reply timeout)."""

    @abc.abstractmethod
    def feed(self, data: bytes) -> None:
        """Take bytes received from the board."""

    @abc.abstractmethod
    def take_answer(self, transaction: Transaction) -> Optional[Answer]:
        """Return the answer to ``transaction`` once it is complete, else None."""

    def take_board_reset(self) -> Optional[BoardInfo]:
        """Return the board's info if it announced a reset since the last call."""
        return None

    def take_unrequested(self) -> bytes:
        """Return (a sample of) the bytes no request asked for since the last call, and drop them.

        Framed protocols recognise their answers by sequence number and checksum and skip
        anything else; they return nothing here.
        """
        return b''

    @abc.abstractmethod
    def handshake(self) -> Transaction:
        """Return the request that proves the board is up and identifies it."""

    @abc.abstractmethod
    def board_info(self, answer: Answer) -> Optional[BoardInfo]:
        """Return the identity in the handshake answer, or None if it is not one.

        :raises NotABoard: if the answer is one this board cannot send (the message says
            what was received, escaped, and what the board sends instead)
        """

    @abc.abstractmethod
    def pulses(self, pulses_us: Sequence[int], move_ms: int, enabled_mask: int,
               board_us: Sequence[Optional[int]]) -> list[Transaction]:
        """Return the requests that set the targets (0 = leave unchanged).

        :param board_us: the target each channel surely has on the board already (None =
            in doubt): a channel at its target there may be left out, none if all are
        """

    @abc.abstractmethod
    def enable(self, mask: int, previous_mask: int,
               pulses_us: Sequence[int]) -> list[Transaction]:
        """Return the requests that make exactly the channels in ``mask`` pulse."""

    def limits(self, limits_us: Sequence[tuple[int, int]]) -> list[Transaction]:
        """Return the requests that store pulse limits on the board (none by default)."""
        return []

    def frame(self, period_us: int) -> list[Transaction]:
        """Return the requests that set the pulse period, 0 meaning the default slotted one.

        :raises ValueError: always here: only dialects with ``capabilities.fast_frame`` can.
        """
        raise ValueError(f'period_us = {period_us!r}: {type(self).__name__} has no pulse '
                         'frame setting, only the native protocol has')

    def watchdog(self, timeout_ms: int, action: WatchdogAction) -> list[Transaction]:
        """Return the requests that set the board's host-silence watchdog; none by default."""
        return []

    @abc.abstractmethod
    def poll(self) -> list[Transaction]:
        """Return the requests that read back every channel's pulse."""

    @abc.abstractmethod
    def positions(self, answers: Sequence[Answer], stamp_s: float) -> Optional[Positions]:
        """Return the positions in the answers to :meth:`poll`, else None (pose unknown).

        None for a malformed answer, a pulse outside what the board can report, or a poll
        during which bytes arrived that no request asked for: the board cannot have sent it.
        """


def mask_channels(mask: int, channels: int) -> list[int]:
    """Return the channel numbers whose bit is set in ``mask``.

    >>> mask_channels(0b101, 6)
    [0, 2]
    """
    return [channel for channel in range(channels) if mask >> channel & 1]
