"""A simulated board that notes when every frame's first byte reaches it on the modelled line.

:class:`TimedBoard` is a :class:`~fabrik_ros.servo_io.SimBoard` that also keeps each chunk it
reads with the time its first byte finished arriving at 115200 baud (start bit, 8 data bits,
stop bit: 86.8 µs per byte, queued behind whatever is still on the line). Decoding happens
after a run, in :func:`frames_from_chunks`, so the board thread does no extra work while the
clock matters.
"""

from collections import deque
from dataclasses import dataclass
import struct

from priority import boost_current_thread

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.servo_io import Command, Frame, FrameDecoder
from fabrik_ros.servo_io.protocols.native import CRC_SIZE, HEADER_SIZE, MAX_FRAME


@dataclass(frozen=True)
class Chunk:
    """Bytes the board read at once; ``first_byte_s`` is when the first had fully arrived."""

    first_byte_s: float
    data: bytes


@dataclass(frozen=True)
class TimedFrame:
    """A frame the board received and when its first byte had arrived [s, monotonic]."""

    first_byte_s: float
    frame: Frame


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


def frames_from_chunks(chunks: list[Chunk], baud: int) -> list[TimedFrame]:
    """Decode recorded chunks into frames stamped with their first byte's arrival."""
    byte_s = 10.0 / baud if baud else 0.0
    decoder = FrameDecoder()
    arrivals: deque[float] = deque(maxlen=MAX_FRAME)
    frames = []
    for chunk in chunks:
        for offset, byte in enumerate(chunk.data):
            arrivals.append(chunk.first_byte_s + offset * byte_s)
            for item in decoder.feed(bytes((byte,))):
                if isinstance(item, Frame):
                    size = HEADER_SIZE + len(item.payload) + CRC_SIZE
                    frames.append(TimedFrame(arrivals[-size], item))
    return frames


def set_pulses_of(frame: Frame) -> tuple[int, ...] | None:
    """Return the per-channel pulses of a SET_PULSES frame [µs], None for other frames."""
    if frame.cmd != Command.SET_PULSES or len(frame.payload) < 4:
        return None
    count = (len(frame.payload) - 2) // 2
    return struct.unpack_from(f'<{count}H', frame.payload, 2)
