"""A simulated board that also keeps a record of everything it was sent and everything it did.

:class:`TappedBoard` is a :class:`~fabrik_ros.boardsim.SimBoard` that, through the board's
hooks, writes down every target its outputs take (channel, pulse, when, from where, how fast),
keeps the raw bytes the host wrote (before the board's own corruption, so they are what the
host *sent*), and can slip garbage in front of its replies. The checks of the reliability tests
read these records; nothing about the board's behaviour changes.
"""

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
import struct
import threading
import time

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.servo_io import Command, Frame, FrameDecoder


@dataclass(frozen=True)
class Move:
    """One target a channel took: it moves from ``start_us`` toward ``target_us`` from ``at_s``."""

    channel: int
    start_us: float
    target_us: int
    at_s: float
    rate_us_per_s: float      # inf = a jump to the target


class TappedBoard(SimBoard):
    """A SimBoard with a record of its moves and of the host's bytes; can inject garbage."""

    def __init__(self, *args, **kwargs) -> None:
        self.moves: list[Move] = []
        self.delivered = bytearray()     # host bytes as the firmware got them (corrupted)
        self.replied = bytearray()       # the firmware's replies before the line corrupts them
        self.plugged_at: list[float] = []
        # Per plug-in: when the host first wrote to that pty (None: not yet). A host that
        # reconnected after a replug has written to the new pty; one that did not, has not.
        self.heard_at: list[float | None] = []
        self.longest_stall_s = 0.0       # longest gap between two steps of the board thread
        self._last_step_at: float | None = None
        self._host_bytes = bytearray()
        self._noise: deque[bytes] = deque()
        self._tap_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def on_move(self, channel: int, start_us: float, target_us: int, at_s: float,
                rate_us_per_s: float) -> None:
        """Record the move."""
        self.moves.append(Move(channel, start_us, target_us, at_s, rate_us_per_s))

    def on_exchange(self, delivered: bytes, reply: bytes) -> None:
        """Keep both directions of the firmware's conversation."""
        self.delivered += delivered
        self.replied += reply

    def on_plugged(self) -> None:
        """Note when the board was plugged in."""
        with self._tap_lock:
            self.plugged_at.append(time.monotonic())
            self.heard_at.append(None)

    def on_step(self, plugged: bool) -> None:
        """Track the longest gap between two steps while plugged (a stalled board thread)."""
        now = time.monotonic()
        if self._last_step_at is not None and plugged:
            self.longest_stall_s = max(self.longest_stall_s, now - self._last_step_at)
        self._last_step_at = now if plugged else None

    def on_host_bytes(self, data: bytes, first_byte_s: float) -> None:
        """Keep the host's bytes as it wrote them; note the first on each plug-in."""
        with self._tap_lock:
            self._host_bytes += data
            if self.heard_at and self.heard_at[-1] is None:
                self.heard_at[-1] = first_byte_s

    def outgoing(self, data: bytes) -> bytes:
        """Put any injected garbage in front of the reply."""
        with self._tap_lock:
            noise = b''.join(self._noise)
            self._noise.clear()
        return noise + data

    def inject(self, garbage: bytes) -> None:
        """Send ``garbage`` to the host in front of the next reply."""
        with self._tap_lock:
            self._noise.append(garbage)

    @property
    def noise_pending(self) -> bool:
        """Return True while injected garbage still waits for a reply to ride on."""
        with self._tap_lock:
            return bool(self._noise)

    def host_bytes(self) -> bytes:
        """Return every byte the host wrote so far, as it wrote them."""
        with self._tap_lock:
            return bytes(self._host_bytes)

    def take_moves(self) -> list[Move]:
        """Return the moves recorded so far and forget them (keeps a long run's memory flat)."""
        count = len(self.moves)
        taken = self.moves[:count]
        del self.moves[:count]
        return taken

    def moves_since(self, at_s: float) -> list[Move]:
        """Return the moves made at or after ``at_s`` [s, monotonic]."""
        return [move for move in list(self.moves) if move.at_s >= at_s]


def host_frames(data: bytes) -> list[Frame]:
    """Return the intact native-protocol frames in ``data`` (corrupt ones are skipped)."""
    return [item for item in FrameDecoder().feed(data) if isinstance(item, Frame)]


def sent_pulses(frames: list[Frame]) -> Iterator[tuple[int, ...]]:
    """Yield the pulse vector of every SET_PULSES request among ``frames`` [µs]."""
    for frame in frames:
        if frame.cmd == Command.SET_PULSES and len(frame.payload) >= 4:
            count = (len(frame.payload) - 2) // 2
            yield struct.unpack(f'<{count}H', frame.payload[2:2 + 2 * count])


def lost_in_transit(sent: list[Frame], delivered: list[Frame]) -> list[int]:
    """Return the indices in ``sent`` of the frames that did not arrive intact.

    ``delivered`` is what arrived intact, in order: a subsequence of ``sent`` (a corrupted
    frame that still passes CRC-16 is the one thing that could break this, and it would show
    up as a wrong pulse at the board). A re-sent request repeats the same bytes back to back;
    of a run of copies the last ones are the delivered ones (the link re-sends only what was
    not answered), so the first ``sent - delivered`` copies of a run count as lost.
    """
    lost, position, index = [], 0, 0
    while index < len(sent):
        end = index
        while end < len(sent) and sent[end] == sent[index]:
            end += 1
        arrived = 0
        while position < len(delivered) and delivered[position] == sent[index]:
            position += 1
            arrived += 1
        lost += range(index, index + max(0, end - index - arrived))
        index = end
    return lost
