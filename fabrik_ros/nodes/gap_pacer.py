"""Time a node's periodic side work into the gaps between the targets it streams on.

A node's timers run on the executor thread that handles the targets. A timer of its own grid
lands, now and then, right where a target arrives, and the target waits behind the side work:
fabrik_ik's ik_markers take 0.6 ms of Python, servo_driver's joint_states 0.4 ms (medians on a
2-core VM at 500 targets a second; twice that in a process idle between targets). Targets
streamed at a fixed rate and a timer at a commensurate rate (a 20 or 50 Hz stream, the 20 Hz
joint_states) keep one phase for a whole run: either every few targets wait, or none does,
which made the p99 at 20-50 Hz differ from run to run (docs/performance.md).

Right after a target is no gap either: the target is still on its way through the other
process, the serial line's driver and the board, which need the same few CPUs (measured: the
20 Hz median rose by 0.3-0.6 ms when the work followed each command at once). So
:class:`GapPacer` says, at ordinary rates (targets at least :data:`FAST_S` apart), to do the
work :data:`SETTLE_S` after a target, on the target nearest each due time, so it keeps its
rate; when targets come faster there is no gap to find, and the work follows the target
nearest its due time at once. The work's own timer does it only when targets come less often
than the work is due (or have stopped), never within :data:`GUARD_S` of the next target
expected. Pure: the caller passes the time and runs the settle timer.
"""

import enum
import math

# After a target, the work waits this long: the target's way through the other process, the
# line's driver and the board takes about 2 ms in an idle process [s].
SETTLE_S = 0.005
# Targets closer than this leave no gap of SETTLE_S plus the work's duration [s].
FAST_S = 0.010
# The timer leaves the work to a target expected this soon [s]: longer than the work takes in
# a cold process (about 1.5 ms) plus a stream's jitter.
GUARD_S = 0.005


class Action(enum.Enum):
    """What to do right after a target."""

    NOTHING = 'nothing'
    NOW = 'now'          # do the work now (a fast stream: there is no later gap)
    SETTLE = 'settle'    # start the settle timer; ask :meth:`GapPacer.on_settle` when it fires


class GapPacer:
    """Say when to do one piece of periodic work: after a target, or from its timer.

    :param period_s: how often the work is to be done [s]
    :raises ValueError: if the period is not a positive finite number
    """

    def __init__(self, period_s: float) -> None:
        if not (math.isfinite(period_s) and period_s > 0.0):
            raise ValueError(f'period_s = {period_s!r}, must be finite and > 0')
        self.period_s = period_s
        self._due_s = -math.inf         # when the work is next due
        self._target_s = -math.inf      # when the last target was handled
        self._interval_s = math.inf     # between the last two targets

    def after_target(self, now_s: float, *, free: bool = True) -> Action:
        """Note a target just handled; say whether to do the work now, later or not at all.

        :param free: False if other work follows this target at once already (a fast
            stream): then this work waits for the next target, still nearest its due time
        """
        self._interval_s = now_s - self._target_s
        self._target_s = now_s
        if self._interval_s >= FAST_S:
            return Action.SETTLE
        return Action.NOW if free and self._take(now_s) else Action.NOTHING

    def on_settle(self, now_s: float) -> bool:
        """Return True if the work is to be done now, :data:`SETTLE_S` after a target."""
        return self._take(now_s)

    def on_timer(self, now_s: float) -> bool:
        """Return True if the work's timer is to do it now.

        While targets stream (the next is not overdue by :data:`GUARD_S`), False if they come
        at least once a period (they carry the work) or one is expected within
        :data:`GUARD_S`; False within :data:`SETTLE_S` of the last target, and before the
        work is due.
        """
        expected_s = self._target_s + self._interval_s
        streaming = math.isfinite(expected_s) and now_s < expected_s + GUARD_S
        if streaming and (self._interval_s <= self.period_s + GUARD_S
                          or now_s >= expected_s - GUARD_S):
            return False
        if now_s - self._target_s < SETTLE_S:
            return False
        if now_s < self._due_s - self.period_s / 2:
            return False
        self._advance(now_s)
        return True

    def _take(self, now_s: float) -> bool:
        """Return True (and set the next due time) if now is the moment nearest the due time.

        Nearest among the targets': within half the targets' interval of it, so that a stream
        at any rate carries the work at its own rate.
        """
        if now_s + self._interval_s / 2 < self._due_s:
            return False
        self._advance(now_s)
        return True

    def _advance(self, now_s: float) -> None:
        """Set the next due time: on the grid of periods, unless a period or more behind it."""
        on_grid = now_s - self._due_s < self.period_s
        self._due_s = (self._due_s if on_grid else now_s) + self.period_s
