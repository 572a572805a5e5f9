"""Run every fabrik_ros benchmark, print the tables, write bench/results.json, draw the plots.

``make bench`` runs this. Parts, in order: the solver on every shipped config against textbook
FABRIK (solver_configs.py), chain-length scaling (solver_scaling.py), the arm_4dof solver
study (ik_bench.py, its own process), serial bytes and rates per protocol (serial_bench.py's
measurements), and end to end, target to serial frame, with the nodes as two processes and
composed in one (e2e_latency.py). About 6 minutes on a 2-core machine; ``--quick`` runs
every part with a tiny budget (seconds) to check that the suite works.

    .venv/bin/python bench/run_all.py [--quick] [--out bench/results.json]
"""

import argparse
import json
import os
from pathlib import Path
import platform
import subprocess
import sys
import time

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from ros_env import isolate_ros, ROOT  # noqa: E402

isolate_ros()

import e2e_latency  # noqa: E402
from node_processes import Layout  # noqa: E402
import plots  # noqa: E402
import serial_figures  # noqa: E402
import solver_configs  # noqa: E402
import solver_scaling  # noqa: E402

RESULTS = BENCH / 'results.json'
PLOTS = BENCH / 'plots'
IK_BENCH_JSON = BENCH / 'out' / 'ik_bench.json'
E2E_KEYS = ('p50_ms', 'p90_ms', 'p99_ms', 'max_ms', 'sent', 'coalesced', 'lost', 'drift_ms',
            'achieved_rate_hz', 'cpu_percent')


def machine() -> dict:
    """Return what the figures were measured on."""
    model = next((line.split(':', 1)[1].strip()
                  for line in Path('/proc/cpuinfo').read_text().splitlines()
                  if line.startswith('model name')), platform.processor())
    return {'cpu': model, 'cores': os.cpu_count(), 'python': platform.python_version(),
            'kernel': platform.release(), 'rmw': os.environ['RMW_IMPLEMENTATION'],
            'date_utc': time.strftime('%Y-%m-%d %H:%M', time.gmtime())}


def ik_bench(quick: bool) -> dict:
    """Run bench/ik_bench.py in its own process and return its headline figures."""
    if quick:
        return {'skipped': 'not run with --quick'}
    subprocess.run([sys.executable, str(BENCH / 'ik_bench.py')], check=True)
    report = json.loads(IK_BENCH_JSON.read_text(encoding='utf-8'))
    return {
        'reachable_success_rate': report['reachable']['ours']['success_rate'],
        'textbook_in_limits_rate': report['reachable']['textbook']['in_limits_rate'],
        'unreachable_closest_within_1mm_rate':
            report['unreachable']['ours']['closest_within_1mm_rate'],
        'single_speedup_vs_textbook': report['single_speedup_vs_textbook'],
        'batch_solves_per_s': {b['label']: b['solves_per_s'] for b in report['batch']},
    }


def end_to_end(quick: bool) -> dict:
    """Measure both node layouts; return their full results."""
    budget = e2e_latency.QUICK if quick else e2e_latency.Budget()
    results = {}
    for layout in Layout:
        results[layout.value] = e2e_latency.measure_layout(layout, budget)
        e2e_latency.print_layout(results[layout.value])
    return results


def e2e_summary(result: dict) -> dict:
    """Return the per-rate figures of one layout, as results.json holds them."""
    rates = {rate: {key: figures[key] for key in E2E_KEYS}
             for rate, figures in result['rates'].items()}
    soak = result['soak']
    rates['soak'] = {'rate_hz': soak['rate_hz'], 'seconds': soak['seconds'],
                     **{key: soak[key] for key in E2E_KEYS},
                     'rss_start_kib': {n: s[0] for n, s in soak['rss_kib'].items()},
                     'rss_growth_kib': soak['rss_growth_kib']}
    return rates


def main() -> None:
    """Run every part, print as it goes, then write results.json and the plots."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='tiny budget (smoke test)')
    parser.add_argument('--out', type=Path, default=RESULTS)
    parser.add_argument('--plots', type=Path, default=PLOTS, help='directory for the PNGs')
    args = parser.parse_args()
    started = time.monotonic()
    solver = solver_configs.run(quick=args.quick)
    solver_configs.print_table(solver)
    scaling = solver_scaling.run(quick=args.quick)
    solver_scaling.print_table(scaling)
    ik = ik_bench(args.quick)
    serial = serial_figures.run(quick=args.quick)
    serial_figures.print_table(serial)
    e2e = end_to_end(args.quick)
    results = {
        'machine': machine(), 'quick': args.quick, 'command': 'make bench',
        'solver': solver, 'solver_scaling': scaling, 'ik_bench': ik, 'serial': serial,
        'e2e': e2e_summary(e2e[Layout.TWO_PROCESS.value]),
        'e2e_composed': e2e_summary(e2e[Layout.COMPOSED.value]),
        'e2e_setup': {'config': 'config/arm_4dof.yaml', 'protocol': 'native', 'baud': 115200,
                      'driver_control_rate_hz': e2e[Layout.TWO_PROCESS.value]['control_rate_hz'],
                      'layouts': {'e2e': 'fabrik_ik and servo_driver as two processes',
                                  'e2e_composed': 'both in one process (fabrik_arm)'}},
    }
    written = [plots.latency_plot(e2e, args.plots / 'e2e_latency.png'),
               plots.scaling_plot(scaling, args.plots / 'solver_scaling.png'),
               plots.configs_plot(solver, args.plots / 'solver_configs.png')]
    results['plots'] = [str(p.resolve().relative_to(ROOT)) if p.resolve().is_relative_to(ROOT)
                        else str(p) for p in written]
    results['seconds'] = round(time.monotonic() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + '\n', encoding='utf-8')
    print(f'wrote {args.out} and {len(written)} plots in {args.plots} '
          f'({results["seconds"]:.0f} s)')


if __name__ == '__main__':
    main()
