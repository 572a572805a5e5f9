"""Measured figures of the reliability runs, written to build/reliability/ as JSON.

Every test records its figures under a name of its own; :func:`record` writes them to
``build/reliability/<name>.json`` and merges them into ``build/reliability/results.json``, so
the fast suite and the soak leave one file with everything they measured.
"""

from collections.abc import Mapping
import fcntl
import json
import math
import os
from pathlib import Path
import platform
import time

RESULTS_DIR = Path(__file__).resolve().parents[2] / 'build' / 'reliability'
RESULTS_FILE = RESULTS_DIR / 'results.json'


def record(name: str, figures: Mapping[str, object]) -> dict[str, object]:
    """Store ``figures`` under ``name`` (with the time and the machine) and return the entry.

    :param name: dotted name of the measurement, e.g. ``faults.unplug_replug``.
    :param figures: JSON-serialisable values; floats are rounded to 6 significant digits.
    """
    entry = {key: _rounded(value) for key, value in figures.items()}
    entry['recorded_utc'] = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
    entry['machine'] = (f'{platform.machine()}, {_cpu_count()} CPUs, '
                        f'Python {platform.python_version()}')
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / f'{name}.json').write_text(json.dumps(entry, indent=2) + '\n')
    with open(RESULTS_DIR / '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        merged = json.loads(RESULTS_FILE.read_text()) if RESULTS_FILE.exists() else {}
        merged[name] = entry
        RESULTS_FILE.write_text(json.dumps(merged, indent=2, sort_keys=True) + '\n')
    print(f'\n{name}: {json.dumps(entry)}')
    return entry


def percentile(values: list[float], fraction: float) -> float:
    """Return the ``fraction`` quantile of ``values`` (nearest rank), NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def _rounded(value: object) -> object:
    if isinstance(value, float):
        return float(f'{value:.6g}') if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return [_rounded(item) for item in value]
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    return value


def _cpu_count() -> int:
    return len(os.sched_getaffinity(0))
