"""The stream of goal commands on a bus, so that reads keep out of its way: pure, clock passed in.

While commands come often (at least every ``STREAM_GAP_MAX_S``) they are a stream with a beat:
the shortest of the latest ``GAPS_KEPT`` gaps (commands that cross DDS from another process
come up to a millisecond early or late, and a read put where the last gap promised room was
still out when the next command came early: traced at 20 Hz on a Feetech bus). The next
command is expected a beat after the last. One that has not come half a beat after its time
is missing, and the one a beat later is expected: a target held still sends no command
(servo_driver sends no step that changes nothing), and a stream taken as stopped after it let
reads go anywhere, into the next command. After ``MISSED_MAX`` missing in a row the stream
has stopped.

A read (feedback, telemetry) goes only where its answers are in a quarter of the beat, at
most ``HOST_GUARD_S``, before the command expected next, or right behind a goal write
(within ``BEHIND_SLACK_S`` of its last byte), in the gap before the next command. The guard is
for the host, not the line: the host's work on a command starts well before the command's
write (fabrik_ik and servo_driver warm up 1.5 ms before a target is expected, then the target
takes about a millisecond through the nodes), and answers handled then slow it down
(docs/performance.md, step n).
"""

from collections import deque
from dataclasses import dataclass, field
import math

# How soon after a goal write's last byte a read still counts as riding right behind it:
# the I/O thread wakes when the line is free, give or take a scheduler tick.
BEHIND_SLACK_S = 0.0005
# Longest kept free of answers before the next command is expected [s]: the warm-ups' 1.5 ms
# lead, the target's millisecond through the nodes, and the answers' own handling.
HOST_GUARD_S = 0.003
# Commands that come at least this often are a stream that reads keep out of the way of.
STREAM_GAP_MAX_S = 0.25
# How many of the latest gaps between commands the next command is expected from.
GAPS_KEPT = 8
# A stream that misses more commands in a row than this has stopped.
MISSED_MAX = 3


@dataclass
class CommandStream:
    """When the latest command went out, the gaps before it, and when its goal write ended.

    ``beat_s`` is the shortest of the latest gaps, kept by :meth:`command` (the link's thread
    asks for it several times on each wake). ``goals_end_s`` is when the line frees after the
    latest request if that was a goal write (-inf otherwise): a read may ride right behind it.
    """

    last_s: float = -math.inf
    beat_s: float = math.inf
    goals_end_s: float = -math.inf
    gaps: deque[float] = field(default_factory=lambda: deque(maxlen=GAPS_KEPT))

    def command(self, now_s: float) -> None:
        """Note that a new command went out at ``now_s``; refreshes of the goals do not count."""
        self.gaps.append(now_s - self.last_s)
        self.last_s = now_s
        self.beat_s = min(self.gaps)

    def streaming(self, now_s: float) -> bool:
        """Return True while commands come often (``STREAM_GAP_MAX_S``), a few missing or not.

        A target held still sends no command: the stream goes on after it.
        """
        return (self.beat_s <= STREAM_GAP_MAX_S
                and now_s < self.last_s + (MISSED_MAX + 0.5) * self.beat_s)

    def next_s(self, now_s: float) -> float:
        """Return when the next command is expected [s].

        A beat after the last command; one that has not come half a beat after its time is
        missing, and the next beat is expected.
        """
        beats = max(1, math.floor((now_s - self.last_s) / self.beat_s + 0.5))
        next_s = self.last_s + beats * self.beat_s
        if next_s + 0.5 * self.beat_s <= now_s:       # rounded down at the half beat
            next_s += self.beat_s
        return next_s

    def reconsider_s(self, now_s: float) -> float:
        """Return when the command expected next counts as missing (or the stream as stopped)."""
        return self.next_s(now_s) + 0.5 * self.beat_s

    def right_behind(self, now_s: float) -> bool:
        """Return True if a request written now rides right behind the latest goal write."""
        return now_s - self.goals_end_s <= BEHIND_SLACK_S

    def fits(self, now_s: float, end_s: float) -> bool:
        """Return True if a request whose answers end at ``end_s`` keeps out of the stream.

        A quarter of the beat, at most ``HOST_GUARD_S``, is kept free before the next command:
        for the host's work on it, and for one a little early.
        """
        if not self.streaming(now_s):
            return True
        return end_s + min(HOST_GUARD_S, self.beat_s / 4) <= self.next_s(now_s)
