"""Measure code versions against each other: e2e_latency.py of each commit, in alternation.

Figures of a shared 2-core machine wander with its load by more than a step changes them, so
the steps are not measured one after another but in turns: A B C A B C ... (``--repeats``
rounds). Each step is a commit, unpacked with ``git archive`` into a directory of its own and
run with that tree's benchmark and nodes first on the path; every run writes
``<out>/<label>_<round>.json``, which ``step_table.py --rates 'label=<out>/label_*.json'``
summarises (medians over protocols and rounds). The 1-minute load average before each run is
printed and kept in the file.

    .venv/bin/python bench/step_runs.py before=aa6b2a4^ after=HEAD -- --seconds 4 --soak 1
    .venv/bin/python bench/step_table.py --rates 'before=bench/out/steps/before_*.json' ...

Everything after ``--`` goes to e2e_latency.py (``--protocol native ssc32 maestro`` for the PWM
boards alone).
"""

import argparse
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / 'bench' / 'out' / 'steps'


def unpack(commit: str, directory: Path) -> None:
    """Write the tree of ``commit`` into ``directory`` (git archive, no checkout)."""
    archive = subprocess.run(['git', 'archive', '--format=tar', commit], cwd=ROOT,
                             check=True, capture_output=True).stdout
    subprocess.run(['tar', '-x', '-C', str(directory)], input=archive, check=True)


def set_session_nice(nice: int) -> None:
    """Weight this session against the others (autogroup); say so if the OS refuses.

    With autogroup scheduling (most desktop kernels) a process's own nice value counts only
    within its session: the node processes' share against another session's work is the
    session's.
    """
    try:
        Path('/proc/self/autogroup').write_text(str(nice), encoding='ascii')
    except OSError as error:
        print(f'session nice {nice} refused ({error}): runs at the default', file=sys.stderr)
        return
    print(f'session: {Path("/proc/self/autogroup").read_text(encoding="ascii").strip()}')


def main() -> None:
    """Unpack every step, then run the benchmark of each in turn, round after round."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('steps', nargs='+', help='label=commit, in the order to run them')
    parser.add_argument('--repeats', type=int, default=3, help='rounds of every step')
    parser.add_argument('--out', type=Path, default=OUT)
    parser.add_argument('--session-nice', type=int,
                        help="nice value of this session's autogroup (Linux: the CPU share of "
                             "this run, nodes included, against other sessions' work; e.g. "
                             '-10 on a machine shared with other users; needs the privilege)')
    argv = sys.argv[1:]
    split = argv.index('--') if '--' in argv else len(argv)
    args, bench_args = parser.parse_args(argv[:split]), argv[split + 1:]
    if args.session_nice is not None:
        set_session_nice(args.session_nice)
    steps = [tuple(step.split('=', 1)) for step in args.steps]
    args.out = args.out.resolve()      # each run's working directory is its own tree
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        trees = {}
        for label, commit in steps:
            trees[label] = Path(scratch) / label
            trees[label].mkdir()
            unpack(commit, trees[label])
        for round_ in range(args.repeats):
            for label, _ in steps:
                out = args.out / f'{label}_{round_}.json'
                # the step's own fabrik_ros before the installed (editable) one
                env = dict(os.environ, PYTHONPATH=str(trees[label]))
                load, started = os.getloadavg()[0], time.monotonic()
                run = subprocess.run([sys.executable, 'bench/e2e_latency.py', '--out', str(out),
                                      *bench_args], cwd=trees[label], env=env,
                                     capture_output=True, text=True)
                print(f'{label} round {round_}: exit {run.returncode}, '
                      f'{time.monotonic() - started:.0f} s, load {load:.1f} -> '
                      f'{os.getloadavg()[0]:.1f}', flush=True)
                if run.returncode:
                    print(run.stdout[-2000:], run.stderr[-3000:], file=sys.stderr, flush=True)


if __name__ == '__main__':
    main()
