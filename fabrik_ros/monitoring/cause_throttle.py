"""Throttle warnings per cause, so one flood of bad input cannot hide a different fault.

rclpy's ``throttle_duration_sec`` throttles per call site: a node that reports every rejected
message from one place would print the first cause and swallow a second one arriving within the
period. Keyed on the cause instead, each kind of bad input gets its own line.
"""

from collections.abc import Callable, Hashable
import time


class CauseThrottle:
    """Let one message per cause through every ``period_s`` seconds.

    >>> now = [0.0]
    >>> throttle = CauseThrottle(2.0, clock=lambda: now[0])
    >>> [throttle.allow('nan'), throttle.allow('nan'), throttle.allow('frame')]
    [True, False, True]
    >>> now[0] = 2.5
    >>> throttle.allow('nan')
    True
    """

    def __init__(self, period_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._period_s = period_s
        self._clock = clock
        self._last_s: dict[Hashable, float] = {}

    def allow(self, cause: Hashable) -> bool:
        """Return whether a message of ``cause`` may be logged now (and note that it was)."""
        now = self._clock()
        last = self._last_s.get(cause)
        if last is not None and now - last < self._period_s:
            return False
        self._last_s[cause] = now
        return True
