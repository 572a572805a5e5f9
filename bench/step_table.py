"""Print the per-step effect table (markdown) from e2e_latency.py results, one file per step.

Each step is one e2e_latency.py run at 500 Hz (``--rates 500``), every layout and protocol;
a row shows, per layout, the median over the three protocols of each figure, and the spread
(lowest–highest) of the p99. Figures of a busy machine wander, hence the median and spread.

    .venv/bin/python bench/step_table.py 'label=bench/out/step_a.json' ...
"""

import json
from pathlib import Path
import statistics
import sys


def row(label: str, results: dict, layout: str) -> str:
    """Return one markdown row: ``layout`` runs of one step at 500 Hz."""
    runs = [r for r in results.values() if r['layout'] == layout]
    figures = [r['rates']['500'] for r in runs]

    def median(key: str) -> float:
        return statistics.median(f[key] for f in figures)

    p99s = sorted(f['p99_ms'] for f in figures)
    sent = statistics.median(f['sent'] / max(1, f['sent'] + f['coalesced']) for f in figures)
    loads = [x for r in runs for x in r['loadavg_1min']]
    return (f'| {label} | {layout} | {median("p50_ms"):.2f} | {median("p99_ms"):.1f} '
            f'({p99s[0]:.1f}–{p99s[-1]:.1f}) | {median("any_p50_ms"):.2f} | '
            f'{median("any_p99_ms"):.1f} | {sent:.0%} | {min(loads):.1f}–{max(loads):.1f} |')


def main() -> None:
    """Print the table of the steps named on the command line, in order."""
    print('| step | layout | p50 ms | p99 ms (spread) | any p50 ms | any p99 ms | carried | '
          'load |')
    print('|---|---|---:|---:|---:|---:|---:|---|')
    for argument in sys.argv[1:]:
        label, path = argument.split('=', 1)
        results = json.loads(Path(path).read_text(encoding='utf-8'))
        for layout in ('two_process', 'composed'):
            print(row(label, results, layout))


if __name__ == '__main__':
    main()
