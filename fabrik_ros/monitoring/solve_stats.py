"""Running figures of the IK node for /diagnostics: rate, residual, reached ratio, solve time."""

from dataclasses import dataclass, field
import math


@dataclass
class SolveStats:
    """Count solves over a reporting window and since start.

    The window restarts at every :meth:`report`, so the rate and the mean solve time describe
    the last diagnostics period, while the reached ratio and the totals cover the whole run.
    """

    solves: int = 0
    reached: int = 0
    rejected: int = 0
    last_error_m: float = math.nan
    last_reached: bool = True
    _window_solves: int = field(default=0, repr=False)
    _window_seconds: float = field(default=0.0, repr=False)
    _window_max_seconds: float = field(default=0.0, repr=False)

    def record(self, *, reached: bool, error_m: float, solve_s: float) -> None:
        """Record one solve and how long it took [s]."""
        self.solves += 1
        self.reached += int(reached)
        self.last_reached = reached
        self.last_error_m = error_m
        self._window_solves += 1
        self._window_seconds += solve_s
        self._window_max_seconds = max(self._window_max_seconds, solve_s)

    def record_rejected(self) -> None:
        """Count a target message that was dropped (non-finite or wrong frame)."""
        self.rejected += 1

    def report(self, period_s: float) -> dict[str, object]:
        """Return the figures of the ``period_s`` [s] window ending now, and restart it."""
        window = self._window_solves
        figures: dict[str, object] = {
            'solve rate [1/s]': window / period_s if period_s > 0.0 else 0.0,
            'last residual [m]': self.last_error_m,
            'reached ratio': self.reached / self.solves if self.solves else 1.0,
            'mean solve time [ms]': 1e3 * self._window_seconds / window if window else 0.0,
            'max solve time [ms]': 1e3 * self._window_max_seconds,
            'solves': self.solves,
            'rejected targets': self.rejected,
        }
        self._window_solves, self._window_seconds, self._window_max_seconds = 0, 0.0, 0.0
        return figures
