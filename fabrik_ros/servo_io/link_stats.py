"""Statistics of the links (ServoLink, BusLink): live counters and snapshots."""

import collections
from dataclasses import dataclass, field
import statistics
from typing import Optional

RTT_SAMPLES = 1000


@dataclass(frozen=True)
class LinkStats:
    """Counters since the link started; round-trip times over the last 1000 answers [s]."""

    frames_sent: int
    bytes_sent: int
    commands: int          # set_pulses() calls
    coalesced: int         # pulse commands replaced before they were sent
    acks: int              # answers received (ACK or DATA, or any complete raw answer)
    nacks: int
    retries: int
    timeouts: int          # answers that did not arrive in time
    reconnects: int
    board_resets: int      # READY frames received while connected (the board rebooted)
    rtt_last_s: Optional[float]
    rtt_median_s: Optional[float]
    rtt_p99_s: Optional[float]


@dataclass
class Counters:
    """Mutable counters behind :class:`LinkStats`, updated by the link and its scheduler."""

    frames_sent: int = 0
    bytes_sent: int = 0
    commands: int = 0
    coalesced: int = 0
    acks: int = 0
    nacks: int = 0
    retries: int = 0
    timeouts: int = 0
    reconnects: int = 0
    board_resets: int = 0
    rtts: collections.deque[float] = field(
        default_factory=lambda: collections.deque(maxlen=RTT_SAMPLES))

    def snapshot(self) -> LinkStats:
        """Return the counters as they are now, with the round-trip median and p99.

        >>> counters = Counters(acks=2)
        >>> counters.rtts.extend([0.002, 0.004])
        >>> stats = counters.snapshot()
        >>> stats.acks, stats.rtt_last_s, stats.rtt_median_s
        (2, 0.004, 0.003)
        """
        rtts = sorted(self.rtts)
        return LinkStats(
            self.frames_sent, self.bytes_sent, self.commands, self.coalesced, self.acks,
            self.nacks, self.retries, self.timeouts, self.reconnects, self.board_resets,
            self.rtts[-1] if rtts else None, statistics.median(rtts) if rtts else None,
            rtts[min(len(rtts) - 1, int(0.99 * len(rtts)))] if rtts else None)
