"""A simulated board that notes when every frame's first byte reaches it on the modelled line.

:class:`TimedBoard` is a :class:`~fabrik_ros.boardsim.SimBoard` that also keeps each chunk it
reads with the time its first byte finished arriving on the modelled line (start bit, 8 data
bits, stop bit: 86.8 µs per byte at 115200 baud, queued behind whatever is still on the line).
Decoding happens after a run, in :func:`frames_from_chunks`, so the board thread does no extra
work while the clock matters.
"""

from dataclasses import dataclass
import struct
from typing import Optional

from priority import boost_current_thread

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.servo_io import Command, Frame, FrameDecoder, Protocol
from fabrik_ros.servo_io.protocols import maestro, ssc32
from fabrik_ros.servo_io.protocols.native import CRC_SIZE, HEADER_SIZE


@dataclass(frozen=True)
class Chunk:
    """Bytes the board read at once; ``first_byte_s`` is when the first had fully arrived."""

    first_byte_s: float
    data: bytes


@dataclass(frozen=True)
class TimedFrame:
    """A command the board received and when its first byte had arrived [s, monotonic].

    ``frame`` is a native Frame, an SSC-32U command or a Maestro command.
    """

    first_byte_s: float
    frame: object


class TimedBoard(SimBoard):
    """A SimBoard that records what it reads and when, for latency measurements."""

    def __init__(self, *args, realtime: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._chunks: list[Chunk] = []
        self._want_realtime = realtime
        self.realtime = False

    def on_thread_start(self) -> None:
        """Put the board thread at real-time priority if asked and allowed (priority.py)."""
        if self._want_realtime:
            self.realtime = boost_current_thread()

    def on_host_bytes(self, data: bytes, first_byte_s: float) -> None:
        """Record the chunk with its modelled arrival."""
        self._chunks.append(Chunk(first_byte_s, data))

    def take_chunks(self) -> list[Chunk]:
        """Return the chunks recorded since the last call and start a new record."""
        chunks, self._chunks = self._chunks, []
        return chunks


def frames_from_chunks(chunks: list[Chunk], baud: int,
                       protocol: Protocol = Protocol.NATIVE) -> list[TimedFrame]:
    """Decode recorded chunks into commands stamped with their first byte's arrival.

    A command's first byte is the first byte received after the previous command ended. For
    the Maestro, whose dialect sends a channel's Set Speed right before its Set Target when
    the move time changes, a Set Target is stamped from that Set Speed: one write, one frame.
    """
    byte_s = 10.0 / baud if baud else 0.0
    decoder = _DECODERS[protocol]()
    frames = []
    arrivals: list[float] = []      # of the bytes since the previous command ended
    for chunk in chunks:
        for offset, byte in enumerate(chunk.data):
            arrivals.append(chunk.first_byte_s + offset * byte_s)
            items = decoder.feed(bytes((byte,)))
            for item in items:
                if isinstance(item, Frame):     # skip bytes the native decoder dropped
                    size = HEADER_SIZE + len(item.payload) + CRC_SIZE
                    frames.append(TimedFrame(arrivals[-size], item))
                else:
                    frames.append(TimedFrame(arrivals[0], item))
            if items:
                arrivals.clear()
    return _join_maestro_speeds(frames) if protocol is Protocol.MAESTRO else frames


def _join_maestro_speeds(frames: list[TimedFrame]) -> list[TimedFrame]:
    """Stamp a Set Target with the Set Speed of the same channel sent right before it."""
    joined = []
    for index, timed in enumerate(frames):
        before = frames[index - 1].frame if index else None
        if (timed.frame.command == maestro.SET_TARGET and before is not None
                and before.command == maestro.SET_SPEED
                and before.channel == timed.frame.channel):
            timed = TimedFrame(frames[index - 1].first_byte_s, timed.frame)
        joined.append(timed)
    return joined


_DECODERS = {Protocol.NATIVE: FrameDecoder, Protocol.SSC32: ssc32.Ssc32CommandDecoder,
             Protocol.MAESTRO: maestro.MaestroCommandDecoder}


def pulse_of(frame: object, channel: int) -> Optional[int]:
    """Return the pulse a host command sets on ``channel`` [µs], None if it sets none.

    :param frame: a native Frame, an SSC-32U command or a Maestro command
    """
    if isinstance(frame, Frame):
        if frame.cmd != Command.SET_PULSES or len(frame.payload) < 4:
            return None
        count = (len(frame.payload) - 2) // 2       # channels 0..count-1: the rest keep theirs
        if channel >= count:
            return None
        pulse = struct.unpack_from(f'<{count}H', frame.payload, 2)[channel]
        return pulse or None
    if isinstance(frame, ssc32.GroupMove):
        return next((move.pulse_us for move in frame.moves
                     if move.channel == channel and move.pulse_us), None)
    if isinstance(frame, maestro.MaestroCommand):
        if frame.command != maestro.SET_TARGET or frame.channel != channel:
            return None
        return round(frame.values[0] / maestro.QUARTERS_PER_US) or None
    return None
