"""Run every fabrik_ros benchmark, print the tables, write bench/results.json, draw the plots.

``make bench`` runs this. Parts, in order: the solver on every shipped config against textbook
FABRIK (solver_configs.py), chain-length scaling (solver_scaling.py), the arm_4dof solver
study (ik_bench.py, its own process), arm_4dof against roboticstoolbox-python's ik_LM
(peer_ik.py, its own process), serial bytes and rates per protocol (serial_bench.py's
measurements), end to end, target to serial frame, at the shipped defaults, with the nodes
as two processes and composed in one, for each protocol (e2e_latency.py), and to the servo
pin: the Uno firmware in simavr driven through ServoLink, target to the first pulse of the new
width (pin_latency.py), and how long a target waits behind a big target_path in fabrik_ik
(path_stall.py). About 15 minutes on a 2-core machine; ``--quick`` runs every part with
a tiny budget (about a minute); ``--smoke`` runs each benchmark once, in its smallest form
(one end-to-end layout at one rate, the pin on one link setting without the nodes), to check
that every part runs and prints its figures (seconds; the figures mean nothing).

Every process a benchmark starts ends with it: the node processes are stopped at exit,
SIGTERM included, and each watches this process and ends if it dies (parent_watch.py); a
run started with ``FABRIK_ROS_PARENT_PID`` (a test) ends with that process too.

A run writes into the untracked bench/out/ (results.json, plots/), so measuring never changes
the tracked figures; ``--publish`` (``make bench-publish``) then copies the last full run over
the tracked bench/results.json and bench/plots/, which docs/performance.md quotes.

    .venv/bin/python bench/run_all.py [--quick | --smoke] [--out bench/out/results.json]
    .venv/bin/python bench/run_all.py --publish
"""

import argparse
from dataclasses import dataclass
import json
import os
from pathlib import Path
import platform
import shutil
import signal
import subprocess
import sys
import time
from types import FrameType
from typing import Optional

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from ros_env import isolate_ros, ROOT  # noqa: E402

isolate_ros()

import e2e_latency  # noqa: E402
from node_processes import Layout, stop_all  # noqa: E402
from parent_watch import end_with_parent  # noqa: E402
import path_stall  # noqa: E402
import pin_latency  # noqa: E402
import plots  # noqa: E402
import serial_figures  # noqa: E402
import solver_configs  # noqa: E402
import solver_scaling  # noqa: E402

from fabrik_ros.servo_io import Protocol  # noqa: E402

OUT = BENCH / 'out'
RESULTS = BENCH / 'results.json'        # tracked: written only by --publish
PLOTS = BENCH / 'plots'                 # tracked: written only by --publish
IK_BENCH_JSON = OUT / 'ik_bench.json'
PEER_IK_JSON = OUT / 'peer_ik.json'
# --smoke: every part once, as small as it goes; nothing measured is meant to be read.
SMOKE_E2E = e2e_latency.Budget(seconds_per_rate=0.1, warmup_s=0.02, soak_s=0.2)
SMOKE_E2E_RATES_HZ = (50,)
SMOKE_PIN = pin_latency.Budget(seconds=0.2, warmup_s=0.05)
E2E_KEYS = ('p50_ms', 'p90_ms', 'p99_ms', 'max_ms', 'any_p50_ms', 'any_p99_ms', 'sent',
            'coalesced', 'lost', 'unmatched_frames', 'drift_ms', 'achieved_rate_hz',
            'cpu_percent')


def machine() -> dict:
    """Return what the figures were measured on."""
    model = next((line.split(':', 1)[1].strip()
                  for line in Path('/proc/cpuinfo').read_text().splitlines()
                  if line.startswith('model name')), platform.processor())
    return {'cpu': model, 'cores': os.cpu_count(), 'python': platform.python_version(),
            'kernel': platform.release(), 'rmw': os.environ['RMW_IMPLEMENTATION'],
            'date_utc': time.strftime('%Y-%m-%d %H:%M', time.gmtime()),
            'loadavg_before': os.getloadavg()}


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


def peer_ik(quick: bool) -> dict:
    """Run bench/peer_ik.py (each arm against RTB's best ik call) in its own process."""
    if quick:
        return {'skipped': 'not run with --quick'}
    subprocess.run([sys.executable, str(BENCH / 'peer_ik.py')], check=True)
    report = json.loads(PEER_IK_JSON.read_text(encoding='utf-8'))
    return {key: report[key] for key in ('peer', 'arms', 'unreachable', 'batch')}


@dataclass(frozen=True)
class E2eRun:
    """One end-to-end configuration: its key in results.json, layout and protocol."""

    key: str
    layout: Layout
    protocol: Protocol = Protocol.NATIVE
    baud: int = e2e_latency.BAUD
    in_quick: bool = True     # --quick skips runs that exercise no code the others do not


E2E_RUNS = (
    E2eRun('e2e', Layout.TWO_PROCESS),
    E2eRun('e2e_composed', Layout.COMPOSED),
    E2eRun('e2e_ssc32', Layout.TWO_PROCESS, Protocol.SSC32),
    E2eRun('e2e_composed_ssc32', Layout.COMPOSED, Protocol.SSC32, in_quick=False),
    E2eRun('e2e_maestro', Layout.TWO_PROCESS, Protocol.MAESTRO),
    E2eRun('e2e_composed_maestro', Layout.COMPOSED, Protocol.MAESTRO, in_quick=False),
    # the bus protocols drive the SO-101 (e2e_latency.BUS_CONFIG); the demo tests cover --quick
    E2eRun('e2e_feetech', Layout.TWO_PROCESS, Protocol.FEETECH, e2e_latency.BUS_BAUD,
           in_quick=False),
    E2eRun('e2e_composed_feetech', Layout.COMPOSED, Protocol.FEETECH, e2e_latency.BUS_BAUD,
           in_quick=False),
    E2eRun('e2e_dynamixel', Layout.TWO_PROCESS, Protocol.DYNAMIXEL, e2e_latency.BUS_BAUD,
           in_quick=False),
    E2eRun('e2e_composed_dynamixel', Layout.COMPOSED, Protocol.DYNAMIXEL,
           e2e_latency.BUS_BAUD, in_quick=False),
)


def runs(quick: bool, smoke: bool = False) -> list[E2eRun]:
    """Return the end-to-end runs of a full, a quick or a smoke benchmark (the first only)."""
    if smoke:
        return list(E2E_RUNS[:1])
    return [run for run in E2E_RUNS if run.in_quick or not quick]


def end_to_end(quick: bool, smoke: bool = False) -> dict:
    """Measure every end-to-end configuration; return their full results by key."""
    results = {}
    for run in runs(quick, smoke):
        budget = SMOKE_E2E if smoke else e2e_latency.QUICK if quick else e2e_latency.Budget()
        rates = {'rates_hz': SMOKE_E2E_RATES_HZ} if smoke else {}
        results[run.key] = e2e_latency.measure_layout(run.layout, budget, protocol=run.protocol,
                                                      baud=run.baud, **rates)
        e2e_latency.print_layout(results[run.key])
    return results


def pin(quick: bool, smoke: bool = False) -> dict:
    """Measure the pin latency (smoke: the slotted frame, one rate, no nodes)."""
    if not smoke:
        return pin_latency.run(quick=quick)
    return pin_latency.run(quick=True, rates_hz=pin_latency.RATES_HZ[:1], nodes=False,
                           frames_ms=(pin_latency.SLOTTED_FRAME_MS,), budget=SMOKE_PIN)


def e2e_summary(result: dict) -> dict:
    """Return the per-rate figures of one layout, as results.json holds them."""
    return {rate: {key: figures[key] for key in E2E_KEYS}
            for rate, figures in result['rates'].items()}


def soak_summary(result: dict) -> dict:
    """Return the long run's figures: latency, counts, CPU and memory [KiB]."""
    soak = result['soak']
    return {'rate_hz': soak['rate_hz'], 'seconds': soak['seconds'],
            **{key: soak[key] for key in E2E_KEYS},
            'rss_start_kib': {name: s[0] for name, s in soak['rss_kib'].items()},
            'rss_growth_kib': soak['rss_growth_kib']}


def solver_parts(quick: bool) -> dict:
    """Run the solver benchmarks; return their results by results.json key."""
    solver = solver_configs.run(quick=quick)
    solver_configs.print_table(solver)
    scaling = solver_scaling.run(quick=quick)
    solver_scaling.print_table(scaling)
    return {'solver': solver, 'solver_scaling': scaling, 'ik_bench': ik_bench(quick),
            'peer_ik': peer_ik(quick)}


def solver_plots(solver: dict, folder: Path) -> list[Path]:
    """Draw the solver plots; return their paths."""
    return [plots.scaling_plot(solver['solver_scaling'], folder / 'solver_scaling.png'),
            plots.configs_plot(solver['solver'], folder / 'solver_configs.png')]


def refresh_solver(args: argparse.Namespace) -> None:
    """Re-measure the solver parts only and replace their keys in an existing results file.

    The other parts keep their figures; ``solver_machine`` records this run's machine and load.
    """
    source = args.out if args.out.exists() else RESULTS
    results = json.loads(source.read_text(encoding='utf-8')) if source.exists() else {}
    measured_on = machine()
    results.update(solver_parts(args.quick or args.smoke))
    measured_on['loadavg_after'] = os.getloadavg()
    results['solver_machine'] = measured_on
    solver_plots(results, args.plots)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + '\n', encoding='utf-8')
    print(f'updated the solver keys of {args.out}')


def publish(measured: Path = OUT / 'results.json') -> None:
    """Copy the last full run's results.json and plots over the tracked ones.

    :raises SystemExit: naming the file if there is no run to publish, or it was ``--quick``.
    """
    if not measured.exists():
        raise SystemExit(f'{measured}: no benchmark run to publish (run make bench first)')
    results = json.loads(measured.read_text(encoding='utf-8'))
    if results.get('quick', True):
        raise SystemExit(f'{measured}: quick = {results.get("quick")!r}, only a full run '
                         'is published')
    PLOTS.mkdir(exist_ok=True)
    published = []
    for plot in results.get('plots', []):
        # A plot drawn by this run is beside it; one kept from the tracked run is where it says.
        source = measured.parent / 'plots' / Path(plot).name
        if not source.exists():
            source = ROOT / plot
        target = PLOTS / source.name
        shutil.copyfile(source, target)
        published.append(str(target.relative_to(ROOT)))
    results['plots'] = published
    RESULTS.write_text(json.dumps(results, indent=2) + '\n', encoding='utf-8')
    print(f'published {measured} as {RESULTS.relative_to(ROOT)} and {len(published)} plots '
          f'in {PLOTS.relative_to(ROOT)}/')


def _stop_on_sigterm(number: int, frame: Optional[FrameType]) -> None:
    """Turn SIGTERM into SystemExit, so that every cleanup on the way out runs."""
    raise SystemExit(128 + number)


def main() -> None:
    """Run every part, print as it goes, then write results.json and the plots.

    Whatever ends the run (an error, Ctrl-C, SIGTERM), the node processes are stopped.
    """
    end_with_parent(default_to_parent=False)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        _main()
    finally:
        stop_all()


def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='tiny budget (about a minute)')
    parser.add_argument('--smoke', action='store_true',
                        help='each benchmark once, as small as it goes: checks that every part '
                             'runs and prints its figures (seconds)')
    parser.add_argument('--out', type=Path, default=OUT / 'results.json')
    parser.add_argument('--plots', type=Path, default=OUT / 'plots',
                        help='directory for the PNGs')
    parser.add_argument('--solver-only', action='store_true',
                        help='run only the solver parts and update their keys in --out '
                             '(seeded from the tracked results if --out does not exist)')
    parser.add_argument('--publish', action='store_true',
                        help='measure nothing: copy bench/out/ over the tracked results')
    args = parser.parse_args()
    if args.publish:
        publish()
        return
    if args.solver_only:
        refresh_solver(args)
        return
    quick, smoke = args.quick or args.smoke, args.smoke
    started = time.monotonic()
    measured_on = machine()
    solver = solver_parts(quick)
    serial = serial_figures.run(quick=quick)
    serial_figures.print_table(serial)
    e2e = end_to_end(quick, smoke)
    pin_figures = pin(quick, smoke)
    stall = path_stall.run(quick=quick)
    path_stall.print_table(stall)
    results = {
        'machine': measured_on, 'quick': quick, 'smoke': smoke, 'command': 'make bench',
        **solver, 'serial': serial,
        **{run.key: e2e_summary(e2e[run.key]) for run in runs(quick, smoke)},
        'soak': {run.key: soak_summary(e2e[run.key]) for run in runs(quick, smoke)},
        'e2e_setup': {
            'config': 'config/arm_4dof.yaml', 'settings': e2e['e2e']['settings'],
            'runs': {run.key: {'layout': run.layout.value, 'protocol': run.protocol.value,
                               'baud': run.baud, 'config': e2e[run.key]['config'],
                               'loadavg_1min': e2e[run.key]['loadavg_1min'],
                               'instrument_realtime': e2e[run.key]['instrument_realtime']}
                     for run in runs(quick, smoke)}},
        'pin_latency': pin_figures,
        'path_stall': stall,
    }
    results['machine']['loadavg_after'] = os.getloadavg()
    written = [plots.latency_plot({run.key: e2e[run.key] for run in runs(quick, smoke)
                                   if run.protocol is Protocol.NATIVE},
                                  args.plots / 'e2e_latency.png'),
               plots.rates_plot(e2e, args.plots / 'e2e_rates.png'),
               *solver_plots(solver, args.plots)]
    results['plots'] = [str(p.resolve().relative_to(ROOT)) if p.resolve().is_relative_to(ROOT)
                        else str(p) for p in written]
    results['seconds'] = round(time.monotonic() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + '\n', encoding='utf-8')
    print(f'wrote {args.out} and {len(written)} plots in {args.plots} '
          f'({results["seconds"]:.0f} s)')


if __name__ == '__main__':
    main()
