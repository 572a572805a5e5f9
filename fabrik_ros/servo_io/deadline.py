"""Deadlines on a monotonic clock that tests can replace."""

from collections.abc import Callable
import time

Clock = Callable[[], float]


class Deadline:
    """A point in time ``duration_s`` after creation, measured on ``clock`` [s].

    >>> now = [10.0]
    >>> deadline = Deadline(2.0, clock=lambda: now[0])
    >>> deadline.time_left()
    2.0
    >>> now[0] = 13.0
    >>> deadline.expired(), deadline.time_left()
    (True, 0.0)
    """

    def __init__(self, duration_s: float, *, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._end = clock() + duration_s

    def time_left(self) -> float:
        """Return the seconds left, never below 0."""
        return max(0.0, self._end - self._clock())

    def expired(self) -> bool:
        """Return True once the deadline has passed."""
        return self._clock() >= self._end
