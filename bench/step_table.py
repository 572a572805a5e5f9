"""Print the end-to-end tables of docs/performance.md (markdown) from e2e_latency.py result files.

Per-step effect: each step is one e2e_latency.py run at 500 Hz (``--rates 500``), every
layout and protocol; a row shows, per layout, the median over the three protocols of each
figure, and the spread (lowest–highest) of the p99. Figures of a busy machine wander, hence
the median and spread. ``--runs``: one row per layout, protocol and rate of a full run.
``--rates``: per step several runs (a glob, the repeats of an A/B/A/B alternation), one row
per step and layout with the p50 and p99 at each rate: medians over protocols and repeats,
the p99's spread over the repeats' medians, and the load average of the runs. ``--cells``:
several runs (of other rates or layouts) merged, one row per layout and protocol with the
p50 / p99 and the targets measured at every rate, a p99 above the goal (2 ms) in bold.

    .venv/bin/python bench/step_table.py 'label=bench/out/step_a.json' ...
    .venv/bin/python bench/step_table.py --runs bench/out/e2e_latency.json
    .venv/bin/python bench/step_table.py --rates 'label=bench/out/step_a_*.json' ...
    .venv/bin/python bench/step_table.py --cells bench/out/long_*.json
"""

import glob
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


def runs_table(results: dict) -> list[str]:
    """Return one row per run and rate, the 60 s soak last in each run."""
    lines = ['| layout, protocol | rate | p50 ms | p99 ms | max ms | any p99 ms | sent | '
             'coalesced | drift ms | CPU % |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|']
    for result in results.values():
        rows = [(str(rate), f) for rate, f in result['rates'].items()]
        rows.append((f'{result["soak"]["rate_hz"]:.0f} ({result["soak"]["seconds"]:.0f} s)',
                     result['soak']))
        for rate, f in rows:
            cpu = ', '.join(f'{n.split()[0]} {v:.0f}' for n, v in f['cpu_percent'].items())
            lines.append(f'| {result["layout"]}, {result["protocol"]} | {rate} | '
                         f'{f["p50_ms"]:.2f} | {f["p99_ms"]:.2f} | {f["max_ms"]:.1f} | '
                         f'{f["any_p99_ms"]:.2f} | {f["sent"]} | {f["coalesced"]} | '
                         f'{f["drift_ms"]:+.2f} | {cpu} |')
    return lines


def rates_rows(label: str, runs: list[dict], layout: str, rates: list[str]) -> str:
    """Return one markdown row: the repeats ``runs`` of one step, one layout, every rate."""
    cells = []
    for rate in rates:
        # per repeat, the median over the protocols; then the median over the repeats
        per_run = [[r['rates'][rate] for r in run.values()
                    if r['layout'] == layout and rate in r['rates']] for run in runs]
        per_run = [figures for figures in per_run if figures]
        p99s = sorted(statistics.median(f['p99_ms'] for f in figures) for figures in per_run)
        p50 = statistics.median(f['p50_ms'] for figures in per_run for f in figures)
        p99 = statistics.median(f['p99_ms'] for figures in per_run for f in figures)
        cells.append(f'{p50:.2f} / {p99:.1f} ({p99s[0]:.1f}–{p99s[-1]:.1f})')
    loads = [x for run in runs for r in run.values() if r['layout'] == layout
             for x in r['loadavg_1min']]
    return (f'| {label} | {layout} | {" | ".join(cells)} | {len(runs)} | '
            f'{min(loads):.1f}–{max(loads):.1f} |')


def rates_table(arguments: list[str]) -> list[str]:
    """Return the per-rate step table of ``label=glob`` arguments, in order."""
    steps = []
    for argument in arguments:
        label, pattern = argument.split('=', 1)
        paths = sorted(glob.glob(pattern))
        if not paths:
            raise SystemExit(f'step {label!r}: no file matches {pattern!r}')
        steps.append((label, [json.loads(Path(p).read_text(encoding='utf-8')) for p in paths]))
    first = next(iter(steps[0][1][0].values()))
    rates = list(first['rates'])
    lines = ['| step | layout | ' + ' | '.join(f'{rate} Hz p50 / p99 ms (spread)'
                                                for rate in rates) + ' | runs | load |',
             '|---|---|' + '---:|' * len(rates) + '---:|---|']
    for label, runs in steps:
        for layout in ('two_process', 'composed'):
            if any(r['layout'] == layout for run in runs for r in run.values()):
                lines.append(rates_rows(label, runs, layout, rates))   # a layout run
    return lines


GOAL_P99_MS = 2.0       # issue 24.7: p99 <= 2 ms at every rate, layout and protocol


def cells_table(paths: list[str]) -> list[str]:
    """Return one row per layout and protocol, every rate of the runs in ``paths`` merged."""
    cells: dict[tuple[str, str], dict[float, dict]] = {}
    for path in paths:
        for result in json.loads(Path(path).read_text(encoding='utf-8')).values():
            key = (result['layout'], result['protocol'])
            for rate, figures in result['rates'].items():
                cells.setdefault(key, {})[float(rate)] = figures
    rates = sorted({rate for by_rate in cells.values() for rate in by_rate})
    lines = ['| layout | protocol | ' + ' | '.join(f'{rate:g} Hz p50 / p99 ms (targets)'
                                                  for rate in rates) + ' |',
             '|---|---|' + '---:|' * len(rates)]
    for (layout, protocol), by_rate in sorted(cells.items(), key=lambda item: (
            item[0][0] != 'two_process', item[0][1])):
        shown = []
        for rate in rates:
            figures = by_rate.get(rate)
            if figures is None:
                shown.append('–')
                continue
            p99 = f'{figures["p99_ms"]:.2f}'
            shown.append(f'{figures["p50_ms"]:.2f} / '
                         f'{f"**{p99}**" if figures["p99_ms"] > GOAL_P99_MS else p99} '
                         f'({figures["sent"]})')
        lines.append(f'| {layout} | {protocol} | ' + ' | '.join(shown) + ' |')
    return lines


def main() -> None:
    """Print the table of the steps named on the command line, in order (or ``--runs``)."""
    if sys.argv[1:2] == ['--runs']:
        print('\n'.join(runs_table(json.loads(Path(sys.argv[2]).read_text(encoding='utf-8')))))
        return
    if sys.argv[1:2] == ['--cells']:
        print('\n'.join(cells_table(sys.argv[2:])))
        return
    if sys.argv[1:2] == ['--rates']:
        print('\n'.join(rates_table(sys.argv[2:])))
        return
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
