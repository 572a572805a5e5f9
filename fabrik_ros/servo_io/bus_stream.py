"""The stream of goal commands on a bus, so that reads keep out of its way: pure, clock passed in.

While commands come often (at least every ``STREAM_GAP_MAX_S``) they are a stream, and the
next one is expected one gap after the last. A read (feedback, telemetry) goes only where it
ends before that, with ``BEHIND_SLACK_S`` to spare, or right behind a goal write (within
``BEHIND_SLACK_S`` of its last byte), in the gap before the next command.
"""

from dataclasses import dataclass
import math

# How soon after a goal write's last byte a read still counts as riding right behind it:
# the I/O thread wakes when the line is free, give or take a scheduler tick.
BEHIND_SLACK_S = 0.0005
# Commands that come at least this often are a stream that reads keep out of the way of.
STREAM_GAP_MAX_S = 0.25


@dataclass
class CommandStream:
    """When the latest command went out, the gap before it, and when its goal write ended.

    ``goals_end_s`` is when the line frees after the latest request if that was a goal write
    (-inf otherwise): a read may ride right behind it.
    """

    last_s: float = -math.inf
    gap_s: float = math.inf
    goals_end_s: float = -math.inf

    def command(self, now_s: float) -> None:
        """Note that a new command went out at ``now_s``; refreshes of the goals do not count."""
        self.gap_s = now_s - self.last_s
        self.last_s = now_s

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
        return end_s + BEHIND_SLACK_S <= self.last_s + self.gap_s
