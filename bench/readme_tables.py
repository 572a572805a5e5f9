"""Print the performance tables of docs/performance.md (markdown) from bench/results.json.

It only prints: paste a published run's tables into docs/performance.md by hand, each under
the paragraph that says how to repeat it.

Usage: ``.venv/bin/python bench/readme_tables.py [path/to/results.json]``.
"""

import json
from pathlib import Path
import sys

RESULTS = Path(__file__).resolve().parent / 'results.json'


def solver_table(results: dict) -> list[str]:
    """Return the per-config solver table."""
    lines = ['| config | success | median µs (ours) | median µs (textbook) | batch solves/s |',
             '|---|---:|---:|---:|---:|']
    for name, f in results['solver'].items():
        lines.append(f'| {name} | {f["success_rate"]:.1%} | {f["median_us"]:.0f} | '
                     f'{f["baseline_median_us"]:.0f} | {f["batch_solves_per_s"]:,.0f} |')
    return lines


def peer_table(results: dict) -> list[str]:
    """Return each arm against roboticstoolbox-python's best call, then arm_4dof's batch rates."""
    peer = results['peer_ik']
    if 'skipped' in peer:
        return [f'(peer comparison skipped: {peer["skipped"]})']
    if 'arms' not in peer:
        return ['(peer figures written by an older bench/peer_ik.py: re-run `make bench`)']
    lines = ['| arm | targets | solver | success | median µs | p90 µs | p99 µs |',
             '|---|---|---|---:|---:|---:|---:|']
    notes = []
    for arm, report in peer['arms'].items():
        if 'skipped' in report:
            notes.append(f'- {arm}: skipped, {report["skipped"]}')
            continue
        for kind, key in (('random', 'single'), ('stream', 'stream')):
            for name, f in report[key].items():
                lines.append(f'| {arm} | {f["targets"]} {kind} | {name} | '
                             f'{f["success_rate"]:.2%} | {f["us_median"]:.1f} | '
                             f'{f["us_p90"]:.0f} | {f["us_p99"]:.0f} |')
        notes.append(f'- {arm}: median ours / rtb best call {report["median_ratio"]:.2f} on '
                     f'random targets, {report["stream_median_ratio"]:.2f} in the stream '
                     f'(goal <= 0.5); best call `{report["peer_best_call"]}`; models agree to '
                     f'{report["fk_error_max_m"]:.1g} m ({report["peer_model"]})')
    far = peer['unreachable']
    lines += ['', *notes, '',
              f'arm_4dof unreachable targets: {far["us_median"]:.0f} µs median, '
              f'{far["us_p99"]:.0f} µs p99, {far["closest_within_1mm_rate"]:.0%} within 1 mm of '
              'the closest point', '',
              '| batch | targets | solves/s (wall) | solves/s (CPU) | success |',
              '|---|---:|---:|---:|---:|']
    for row in peer['batch']:
        for label in ('cold', 'seeded'):
            f = row[label]
            lines.append(f'| {label} | {row["targets"]:,} | {f["solves_per_s"]:,.0f} | '
                         f'{f["solves_per_cpu_s"]:,.0f} | {f["success_rate"]:.1%} |')
    return lines


def e2e_table(results: dict, keys: tuple[str, ...]) -> list[str]:
    """Return the end-to-end table of the given runs: p50 / p99 / max and sent / coalesced."""
    setup = results['e2e_setup']['runs']
    lines = ['| run | rate | p50 ms | p99 ms | max ms | any p99 ms | sent | coalesced | CPU % |',
             '|---|---:|---:|---:|---:|---:|---:|---:|---|']
    for key in keys:
        run = setup[key]
        label = f'{run["layout"]}, {run["protocol"]}'
        if run.get('config', 'config/arm_4dof.yaml') != 'config/arm_4dof.yaml':
            label += f' ({Path(run["config"]).stem})'
        rows = [*results[key].items(), ('soak', results['soak'][key])]
        for rate, f in rows:
            shown = f'{f["rate_hz"]:.0f} ({f["seconds"]:.0f} s)' if rate == 'soak' else rate
            cpu = ', '.join(f'{n.split()[0]} {v:.0f}' for n, v in f['cpu_percent'].items())
            lines.append(f'| {label} | {shown} | {f["p50_ms"]:.2f} | {f["p99_ms"]:.2f} | '
                         f'{f["max_ms"]:.1f} | {f["any_p99_ms"]:.2f} | {f["sent"]} | '
                         f'{f["coalesced"]} | {cpu} |')
    return lines


def scaling_table(results: dict) -> list[str]:
    """Return the scaling table at 95 % reach: µs and iterations, ours vs textbook."""
    lines = ['| chain | bones | ours µs | textbook µs | iterations (both) | reached (ours) |',
             '|---|---:|---:|---:|---:|---:|']
    for row in results['solver_scaling']:
        if row['reach'] != 0.95:
            continue
        o, t = row['ours'], row['textbook']
        lines.append(f'| {row["variant"]} | {row["links"]} | {o["median_us"]:.0f} | '
                     f'{t["median_us"]:.0f} | {o["iterations_median"]:.0f} / '
                     f'{t["iterations_median"]:.0f} | {o["reached_rate"]:.0%} |')
    return lines


def serial_table(results: dict) -> list[str]:
    """Return the serial table per protocol."""
    lines = ['| protocol | bytes per 6-servo command | line limit | reached the board |',
             '|---|---:|---:|---:|']
    for name, f in results['serial'].items():
        lines.append(f'| {name} ({f["command"]}) | {f["bytes_per_command"]} | '
                     f'{f["line_limit_hz"]:.0f} Hz | {f["max_rate_hz"]:.0f} Hz |')
    return lines


def pin_table(results: dict) -> list[str]:
    """Return the servo-pin table: latency beside the physical floor, per firmware and path."""
    lines = ['| firmware | path | targets | pin p50 / p99 ms | floor p50 / p99 ms | '
             'a frame behind the floor | host share p50 ms | new width a slot late ¹ |',
             '|---|---|---:|---:|---:|---:|---:|---:|']
    for key, f in results['pin_latency']['runs'].items():
        firmware, path, _ = key.split('/')
        lat, flo = f['latency'], f['floor']
        cap = f'{f["link_max_rate_hz"]:.0f} Hz link cap' if f['link_max_rate_hz'] else 'line rate'
        lines.append(f'| {firmware} | {path} ({cap}) | '
                     f'{f["rate_hz"]} Hz | {lat["p50_ms"]:.1f} / {lat["p99_ms"]:.1f} | '
                     f'{flo["p50_ms"]:.1f} / {flo["p99_ms"]:.1f} | '
                     f'{f["behind_floor_share"]:.1%} | '
                     f'{f["host_share"]["p50_ms"]:.1f} | '
                     f'{f["missed_slots"] / lat["samples"]:.1%} |')
    return lines


def main() -> None:
    """Print every table."""
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS
    results = json.loads(path.read_text(encoding='utf-8'))
    e2e_runs = tuple(results['e2e_setup']['runs'])
    for title, lines in (('Solver', solver_table(results)),
                         ('Solver against RTB', peer_table(results)),
                         ('End to end, shipped defaults', e2e_table(results, e2e_runs)),
                         ('Scaling at 95 % reach', scaling_table(results)),
                         ('Serial', serial_table(results)),
                         ('Servo pin (simavr)', pin_table(results))):
        print(f'\n{title}\n')
        print('\n'.join(lines))


if __name__ == '__main__':
    main()
