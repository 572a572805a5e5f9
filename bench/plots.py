"""Draw the benchmark plots (PNG, matplotlib's Agg backend, no display needed)."""

from pathlib import Path

import matplotlib

matplotlib.use('Agg')

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullFormatter  # noqa: E402
import numpy as np  # noqa: E402

GOAL_MS = 2.0


def latency_plot(layouts: dict, path: Path) -> Path:
    """Draw the latency distribution (empirical CDF) per rate, one panel per layout."""
    figure, axes = plt.subplots(1, len(layouts), figsize=(6 * len(layouts), 4.2),
                                sharey=True, squeeze=False)
    for axis, result in zip(axes[0], layouts.values(), strict=True):
        for rate, latencies in result['latency_ms'].items():
            values = np.sort(np.asarray(latencies))
            if len(values):
                axis.step(values, np.arange(1, len(values) + 1) / len(values), where='post',
                          label=f'{rate} Hz (p99 {np.percentile(values, 99):.1f} ms)')
        axis.axvline(GOAL_MS, color='grey', linestyle=':', label='2 ms goal')
        axis.set_xscale('log')
        _ms_ticks(axis.xaxis)
        axis.set_xlabel('target published → first byte of its frame on the board [ms]')
        axis.set_title(f'{result["layout"].replace("_", " ")}, {result["protocol"]}, '
                       f'{result["settings"]}, {result["baud"]} baud')
        axis.grid(True, which='both', alpha=0.3)
        axis.legend(loc='lower right', fontsize=8)
    axes[0][0].set_ylabel('fraction of targets carried')
    return _save(figure, path)


def rates_plot(runs: dict, path: Path) -> Path:
    """Draw p50 (dashed) and p99 (solid) latency against target rate for every e2e run."""
    figure, axis = plt.subplots(figsize=(7.5, 4.5))
    colours = plt.rcParams['axes.prop_cycle'].by_key()['color']
    for colour, result in zip(colours, runs.values(), strict=False):
        rates = list(result['rates'])
        label = f'{result["layout"]}, {result["protocol"]}'
        for figure_key, style in (('p99_ms', '-'), ('p50_ms', '--')):
            values = [result['rates'][r][figure_key] for r in rates]
            axis.plot([float(r) for r in rates], values, style, marker='o', color=colour,
                      label=f'{label} ({figure_key[:3]})')
    axis.axhline(GOAL_MS, color='grey', linestyle=':', label='2 ms goal')
    axis.set_xscale('log')
    axis.set_yscale('log')
    axis.set_xticks([20, 50, 100, 200, 500], ['20', '50', '100', '200', '500'])
    axis.xaxis.set_minor_formatter(NullFormatter())
    _ms_ticks(axis.yaxis)
    axis.set_xlabel('target rate [Hz]')
    axis.set_ylabel('target → first byte of its frame [ms]')
    axis.set_title('shipped defaults, every layout and protocol (PWM 115200 baud, bus 1 Mbaud)')
    axis.grid(True, which='both', alpha=0.3)
    axis.legend(fontsize=6.5, ncol=2)
    return _save(figure, path)


def scaling_plot(rows: list[dict], path: Path) -> Path:
    """Draw µs and iterations against chain length: ours solid, textbook dashed."""
    variants = list(dict.fromkeys(row['variant'] for row in rows))
    reaches = sorted({row['reach'] for row in rows})
    figure, axes = plt.subplots(2, len(variants), figsize=(5 * len(variants), 7),
                                sharex=True, squeeze=False)
    colours = plt.rcParams['axes.prop_cycle'].by_key()['color']
    for column, variant in enumerate(variants):
        for colour, reach in zip(colours, reaches, strict=False):
            cells = [r for r in rows if r['variant'] == variant and r['reach'] == reach]
            links = [r['links'] for r in cells]
            for solver, style in (('ours', '-'), ('textbook', '--')):
                label = f'{solver}, {reach:.0%} reach'
                axes[0][column].plot(links, [r[solver]['median_us'] for r in cells], style,
                                     marker='o', color=colour, label=label)
                axes[1][column].plot(links, [r[solver]['iterations_median'] for r in cells],
                                     style, marker='o', color=colour, label=label)
        axes[0][column].set_title(f'{variant} chain')
        axes[0][column].set_yscale('log')
        axes[1][column].set_xlabel('bones')
        for row in (0, 1):
            axes[row][column].set_xscale('log')
            axes[row][column].set_xticks([3, 5, 10, 20, 50], ['3', '5', '10', '20', '50'])
            axes[row][column].xaxis.set_minor_formatter(NullFormatter())
            axes[row][column].grid(True, which='both', alpha=0.3)
    axes[0][0].set_ylabel('median µs per solve')
    axes[1][0].set_ylabel('median iterations')
    axes[0][-1].legend(fontsize=7)
    return _save(figure, path)


def configs_plot(solver: dict, path: Path) -> Path:
    """Draw median single-solve µs per shipped config, ours beside the textbook baseline."""
    names = list(solver)
    x = np.arange(len(names))
    figure, axis = plt.subplots(figsize=(6, 3.8))
    axis.bar(x - 0.2, [solver[n]['median_us'] for n in names], 0.4, label='ours (limits held)')
    axis.bar(x + 0.2, [solver[n]['baseline_median_us'] for n in names], 0.4,
             label='textbook FABRIK (no limits)')
    axis.set_xticks(x, names)
    axis.set_ylabel('median µs per single solve')
    axis.grid(True, axis='y', alpha=0.3)
    axis.legend()
    return _save(figure, path)


def _ms_ticks(axis) -> None:
    """Label a logarithmic millisecond axis at 1-2-5 steps."""
    axis.set_major_locator(FixedLocator([0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500]))
    axis.set_major_formatter(FormatStrFormatter('%g'))
    axis.set_minor_formatter(NullFormatter())


def _save(figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
