"""The stream of goal commands on a bus, so that reads keep out of its way: pure, clock passed in.

While commands come often (at least every ``STREAM_GAP_MAX_S``) they are a stream, and the
next one is expected the shortest of the latest ``GAPS_KEPT`` gaps after the last: commands
that cross DDS from another process come up to a millisecond early or late, and a read put
where the last gap promised room was still out when the next command came early (traced at
20 Hz on a Feetech bus, bench/stage_trace.py). A read (feedback, telemetry) goes only where it
ends before that, with ``BEHIND_SLACK_S`` to spare, or right behind a goal write (within
``BEHIND_SLACK_S`` of its last byte), in the gap before the next command.
"""

from collections import deque
from dataclasses import dataclass, field
import math

# How soon after a goal write's last byte a read still counts as riding right behind it:
# the I/O thread wakes when the line is free, give or take a scheduler tick.
BEHIND_SLACK_S = 0.0005
# Commands that come at least this often are a stream that reads keep out of the way of.
STREAM_GAP_MAX_S = 0.25
# How many of the latest gaps between commands the next command is expected from.
GAPS_KEPT = 8


@dataclass
class CommandStream:
    """When the latest command went out, the gaps before it, and when its goal write ended.

    ``goals_end_s`` is when the line frees after the latest request if that was a goal write
    (-inf otherwise): a read may ride right behind it.
    """

    last_s: float = -math.inf
    gap_s: float = math.inf
    goals_end_s: float = -math.inf
    gaps: deque[float] = field(default_factory=lambda: deque(maxlen=GAPS_KEPT))

    def command(self, now_s: float) -> None:
        """Note that a new command went out at ``now_s``; refreshes of the goals do not count."""
        self.gap_s = now_s - self.last_s
        self.last_s = now_s
        self.gaps.append(self.gap_s)

    def streaming(self, now_s: float) -> bool:
        """Return True while commands come often (``STREAM_GAP_MAX_S``) and the next is due."""
        return self.gap_s <= STREAM_GAP_MAX_S and now_s - self.last_s < 1.5 * self.gap_s

    def stops_s(self) -> float:
        """Return when the stream counts as stopped if no command comes [s]."""
        return self.last_s + 1.5 * self.gap_s

    def right_behind(self, now_s: float) -> bool:
        """Return True if a request written now rides right behind the latest goal write."""
        return now_s - self.goals_end_s <= BEHIND_SLACK_S

    def fits(self, now_s: float, end_s: float) -> bool:
        """Return True if a request whose answers end at ``end_s`` keeps out of the stream.

        ``BEHIND_SLACK_S`` is kept free before the next command, for one a little early.
        """
        if not self.streaming(now_s):
            return True
        return end_s + BEHIND_SLACK_S <= self.last_s + min(self.gaps)
