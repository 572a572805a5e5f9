"""A TappedBoard in a process of its own, so the load of the measuring harness cannot stall it.

The soak streams 1 kHz targets from the test process; a board thread sharing that process's
GIL and CPU time would answer late now and then, and the link's timeouts would measure the
harness. The board process sends the moves of one channel back as ``(time, pulse)`` pairs on
the system-wide monotonic clock, which the test process shares.
"""

import multiprocessing
import os
import queue
import time

from bench.priority import boost_current_thread
from test.reliability.tapped_board import TappedBoard

_REPORT_S = 0.1


def _serve(link_path: str, channel: int, moves, results, stop) -> None:
    boosted = boost_current_thread()      # before the board thread starts: it inherits it
    board = TappedBoard(link_path=link_path).start()
    try:
        while not stop.wait(_REPORT_S):
            moves.put([(m.at_s, m.target_us) for m in board.take_moves() if m.channel == channel])
        moves.put([(m.at_s, m.target_us) for m in board.take_moves() if m.channel == channel])
        results.put({'targets': board.targets(), 'enabled': board.enabled,
                     'longest_stall_s': board.longest_stall_s, 'realtime': boosted})
    finally:
        board.stop()


class BoardProcess:
    """Run a native-protocol TappedBoard behind ``link_path`` in a spawned process.

    :param link_path: the symlink the host opens.
    :param channel: the channel whose moves come back.
    """

    def __init__(self, link_path: str, channel: int = 0) -> None:
        context = multiprocessing.get_context('spawn')
        self.link_path = link_path
        self._moves = context.Queue()
        self._results = context.Queue()
        self._stop = context.Event()
        self._process = context.Process(target=_serve, name='TappedBoard', daemon=True,
                                        args=(link_path, channel, self._moves, self._results,
                                              self._stop))

    def start(self, timeout_s: float = 30.0) -> 'BoardProcess':
        """Start the board and wait until its symlink is there."""
        self._process.start()
        deadline = time.monotonic() + timeout_s
        while not os.path.islink(self.link_path):
            if time.monotonic() > deadline or not self._process.is_alive():
                raise AssertionError(f'the board process did not create {self.link_path}')
            self._stop.wait(0.02)
        return self

    def moves(self) -> list[tuple[float, int]]:
        """Return the ``(time [s], pulse [µs])`` moves reported since the last call."""
        taken = []
        while True:
            try:
                taken += self._moves.get_nowait()
            except queue.Empty:
                return taken

    def stop(self, timeout_s: float = 10.0) -> dict:
        """Stop the board; return its final targets, enable bits, longest stall, priority."""
        self._stop.set()
        try:
            return self._results.get(timeout=timeout_s)
        finally:
            self._process.join(timeout_s)
