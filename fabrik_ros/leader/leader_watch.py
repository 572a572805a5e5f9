"""When a leader reading is passed on, and what is said when the leader falls silent or returns.

Only a reading newer than the last one passed on is published, so a leader bus that falls
silent (unplugged, its supply off) stops the stream at once and the follower holds its last
target; one warning says so after ``silence_s`` without a new reading, and one line says when
readings come again. The newest reading always wins: readings that arrive faster than they are
looked at are never queued.

>>> watch = LeaderWatch(silence_s=0.5)
>>> watch.take(1.0, now_s=1.0).publish, watch.take(1.0, now_s=1.2).publish
(True, False)
>>> watch.take(1.0, now_s=1.6).warning
'no new leader reading for 0.6 s: the follower holds where it is'
>>> watch.take(2.0, now_s=2.0).info
'leader readings again after 1.0 s: following'
>>> late = LeaderWatch(silence_s=0.5)
>>> late.take(None, now_s=0.0).warning, late.take(None, now_s=0.6).warning
('', 'no leader reading yet after 0.6 s: the follower is not driven')
>>> late.take(1.0, now_s=0.8).info
'first leader reading after 0.8 s: following'
"""

from dataclasses import dataclass
import math
from typing import Optional


@dataclass(frozen=True)
class Verdict:
    """What to do with one look at the leader: publish the reading, say something."""

    publish: bool
    warning: str = ''
    info: str = ''


class LeaderWatch:
    """Pass on new readings; say once when they stop and once when they come back.

    :param silence_s: how long without a new reading counts as silent [s]
    """

    def __init__(self, silence_s: float) -> None:
        if not (math.isfinite(silence_s) and silence_s > 0.0):
            raise ValueError(f'silence_s = {silence_s!r}, must be a positive number of seconds')
        self.silence_s = silence_s
        self._last_stamp: Optional[float] = None
        self._last_new_s: Optional[float] = None
        self._started_s: Optional[float] = None
        self.silent = False

    def take(self, stamp_s: Optional[float], *, now_s: float) -> Verdict:
        """Judge the latest reading's stamp (None: none yet) at ``now_s``."""
        started = self._started_s = now_s if self._started_s is None else self._started_s
        if stamp_s is not None and (self._last_stamp is None or stamp_s > self._last_stamp):
            self._last_stamp = stamp_s
            was_silent, since = self.silent, self._last_new_s
            self._last_new_s = now_s
            self.silent = False
            if was_silent and since is None:
                return Verdict(True, info=f'first leader reading after '
                                          f'{now_s - started:.1f} s: following')
            if was_silent and since is not None:
                return Verdict(True, info=f'leader readings again after {now_s - since:.1f} s: '
                                          'following')
            return Verdict(True)
        quiet_since = self._last_new_s if self._last_new_s is not None else started
        if not self.silent and now_s - quiet_since >= self.silence_s:
            self.silent = True
            if self._last_new_s is None:
                return Verdict(False, warning=f'no leader reading yet after '
                                              f'{now_s - quiet_since:.1f} s: the follower is '
                                              'not driven')
            return Verdict(False, warning=f'no new leader reading for {now_s - quiet_since:.1f} '
                                          's: the follower holds where it is')
        return Verdict(False)
