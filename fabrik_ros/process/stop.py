"""SIGINT and SIGTERM as a stop request, so that cleanup is never cut short by a signal.

A terminal's Ctrl-C reaches every process of the foreground group, and ``ros2 launch``
forwards one more SIGINT to each child (then SIGTERM if it is slow). Python's default turns
each SIGINT into a KeyboardInterrupt wherever the main thread happens to be, for example in
the middle of detaching the servos or removing a pty symlink. Here the first SIGINT or
SIGTERM only asks to stop; the main loop notices and cleans up, and any further signal is
noted and otherwise ignored until the process exits. Cleanup must therefore be bounded in
time: launch's SIGKILL stays the last resort.
"""

from collections.abc import Callable
import signal
import threading
from types import FrameType
from typing import Optional, Union

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

# What signal.signal gives back (and is handed again at release): a function, SIG_DFL or
# SIG_IGN, or None for a handler that was not installed from Python.
_Handler = Union[Callable[[int, Optional[FrameType]], object], int, signal.Handlers, None]


class StopRequest:
    """Remember the first stop signal; ignore the ones that follow.

    ``signal`` is that first signal: None until a stop is asked for, and set before
    :attr:`requested` turns True, so a caller that finds it set may name it.

    >>> stop = StopRequest()
    >>> stop.requested
    False
    >>> stop.request(signal.SIGTERM); stop.request(signal.SIGINT)
    >>> stop.signal.name, stop.count
    ('SIGTERM', 2)
    """

    def __init__(self) -> None:
        self.signal: Optional[signal.Signals] = None
        self.count = 0
        self._event = threading.Event()
        self._previous: dict[int, _Handler] = {}

    @property
    def requested(self) -> bool:
        """Return whether a stop was asked for."""
        return self._event.is_set()

    def request(self, number: int) -> None:
        """Ask to stop because of signal ``number`` (the first one is kept)."""
        self.count += 1
        if self.signal is None:
            self.signal = signal.Signals(number)
        self._event.set()

    def wait(self, timeout_s: Optional[float] = None) -> bool:
        """Block until a stop is asked for or ``timeout_s`` passes; return whether it was."""
        return self._event.wait(timeout_s)

    def install(self) -> bool:
        """Route SIGINT and SIGTERM here for the rest of the process's life.

        Only the main thread may set signal handlers (a node run from a test's thread keeps
        the handlers it has); returns whether they were installed.
        """
        if threading.current_thread() is not threading.main_thread():
            return False
        for number in STOP_SIGNALS:
            self._previous[number] = signal.signal(number, self._on_signal)
        return True

    def release(self) -> None:
        """Hand the signals back once cleanup is done.

        After a stop signal they are ignored from now on: launch's second SIGINT may still be
        on its way, and Python resets its own handlers to the default action (death by signal,
        exit status -2) while the interpreter shuts down. Otherwise the handlers found at
        :meth:`install` come back (a caller such as a test keeps its Ctrl-C).
        """
        for number, previous in self._previous.items():
            signal.signal(number, signal.SIG_IGN if self.requested else previous)
        self._previous.clear()

    def _on_signal(self, number: int, _frame: Optional[FrameType]) -> None:
        self.request(number)
