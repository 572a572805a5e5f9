"""The few diagnostics a person driving the arm wants to see, from the nodes' statuses."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
import math

LEVELS = ('OK', 'WARN', 'ERROR', 'STALE')


@dataclass(frozen=True)
class Status:
    """One diagnostic status as published on /diagnostics (already out of its message)."""

    name: str
    level: int
    message: str
    values: Mapping[str, str]


class StatusBoard:
    """Keep the latest status of each component; show link, reached ratio and residual.

    >>> board = StatusBoard()
    >>> board.update([Status('fabrik_ik: inverse kinematics', 0, '3 solves',
    ...                      {'reached ratio': '1.0', 'last residual [m]': '2e-05'})])
    >>> print(board.markdown())
    **inverse kinematics** OK: 3 solves; reached ratio 100 %, residual 0.02 mm
    """

    def __init__(self) -> None:
        self._latest: dict[str, Status] = {}

    def update(self, statuses: Iterable[Status]) -> None:
        """Take newer statuses; a component is known by its name."""
        for status in statuses:
            self._latest[status.name] = status

    def markdown(self) -> str:
        """Return one line per component: level, message and the figures that matter."""
        if not self._latest:
            return 'waiting for /diagnostics'
        return '  \n'.join(_line(s) for _, s in sorted(self._latest.items()))


def _line(status: Status) -> str:
    component = status.name.rsplit(': ', 1)[-1]
    level = LEVELS[status.level] if 0 <= status.level < len(LEVELS) else str(status.level)
    figures = []
    if 'state' in status.values:
        figures.append(f"link {status.values['state']}")
    if 'reached ratio' in status.values:
        figures.append(f"reached ratio {_percent(status.values['reached ratio'])}")
    if 'last residual [m]' in status.values:
        figures.append(f"residual {_millimetres(status.values['last residual [m]'])}")
    tail = f"; {', '.join(figures)}" if figures else ''
    return f'**{component}** {level}: {status.message}{tail}'


def _percent(text: str) -> str:
    try:
        return f'{100.0 * float(text):.0f} %'
    except ValueError:
        return text


def _millimetres(text: str) -> str:
    try:
        value = float(text)
    except ValueError:
        return text
    return f'{1e3 * value:.2f} mm' if math.isfinite(value) else '—'
