"""ServoLink finds a replugged board quickly, however long it was away."""

import os
import threading
import time

import pytest

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.servo_io import connection as link_module  # the port handling of the links
from fabrik_ros.servo_io import LinkOptions, LinkState, ServoLink

# A back-off far longer than the test waits for the reconnect, so only watching the path can
# reopen the port in time: the check is which mechanism reopened it, not how fast it was.
BACKOFF_S = 120.0
SLOW_BACKOFF = LinkOptions(backoff_min_s=BACKOFF_S, backoff_max_s=BACKOFF_S, path_check_s=0.05,
                           poll_hz=0.0)
RECONNECT_WAIT_S = 20.0


class StateLog:
    """Every state the link enters, in order, with a condition to wait on."""

    def __init__(self) -> None:
        self.states: list[LinkState] = []
        self._cv = threading.Condition()

    def __call__(self, state: LinkState) -> None:
        with self._cv:
            self.states.append(state)
            self._cv.notify_all()

    def wait(self, condition, timeout_s: float, what: str) -> float:
        """Wait until ``condition(states)`` holds; return how long that took [s]."""
        start = time.monotonic()
        with self._cv:
            if not self._cv.wait_for(lambda: condition(self.states), timeout_s):
                raise AssertionError(f'timed out after {timeout_s} s waiting for {what}; '
                                     f'states {[s.value for s in self.states]}')
        return time.monotonic() - start


class PathChecks:
    """Count the link's checks that found its device path missing, with a condition to wait on.

    Replugging before the link has entered its back-off would race it: a back-off that finds the
    path present waits in full (that spares a board that is there but fails to answer).
    """

    def __init__(self, monkeypatch, path: str) -> None:
        self.missing = 0
        self._cv = threading.Condition()
        self._path = path
        self._exists = link_module.os.path.exists
        monkeypatch.setattr(link_module.os.path, 'exists', self._check)

    def _check(self, path) -> bool:
        found = self._exists(path)
        if path == self._path and not found:
            with self._cv:
                self.missing += 1
                self._cv.notify_all()
        return found

    def wait_more_than(self, count: int, timeout_s: float) -> None:
        """Wait until the path was found missing more than ``count`` times."""
        with self._cv:
            if not self._cv.wait_for(lambda: self.missing > count, timeout_s):
                raise AssertionError(f'the link did not look for {self._path} in {timeout_s} s')


@pytest.mark.timeout(60)
def test_a_board_that_reappears_is_reopened_by_the_path_check_not_after_the_back_off(
        tmp_path, monkeypatch):
    """Regression: the link slept out its whole back-off (up to backoff_max_s) before looking.

    A user unplugs for seconds, so the back-off sits at its cap; the board's return must still
    be noticed by the path check. Here the back-off is 120 s and the test waits 20 s at most.
    """
    log = StateLog()
    with SimBoard(link_path=str(tmp_path / 'ttyBOARD')) as board, \
            ServoLink(board.path, channels=4, options=SLOW_BACKOFF, on_state=log) as link:
        link.wait_ready(5.0)
        # The device node goes first, so the link's back-off always finds the path missing.
        os.unlink(board.path)
        board.unplug()
        log.wait(lambda states: LinkState.DISCONNECTED in states, RECONNECT_WAIT_S,
                 'the link to notice the unplug')
        checks = PathChecks(monkeypatch, board.path)
        checks.wait_more_than(1, RECONNECT_WAIT_S)     # the back-off watches the missing path
        board.replug()
        log.wait(lambda states: states[-1] is LinkState.READY, RECONNECT_WAIT_S,
                 f'the link to reconnect (its back-off is {BACKOFF_S} s)')
        assert log.states.count(LinkState.READY) == 2
        assert link.stats().reconnects == 1
