"""Profile the nodes under a steady target stream to see where their CPU time goes.

Runs the end-to-end rig (e2e_latency.py) with every node process under cProfile, streams
targets at one rate, and prints each process's hottest functions (own time and cumulative).
cProfile sees the thread that spins the executor, i.e. every node callback; ServoLink's I/O
thread is not in the profile. Profiles are kept in build/bench/profile/<layout>/<name>.prof.

    .venv/bin/python bench/profile_nodes.py [--rate 500] [--seconds 10] [--layout composed]
"""

import argparse
from pathlib import Path
import pstats
import sys

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ros_env import isolate_ros, ROOT  # noqa: E402

isolate_ros()

import e2e_latency  # noqa: E402
from node_processes import Layout  # noqa: E402

PROFILE_DIR = ROOT / 'build' / 'bench' / 'profile'


def profile_layout(layout: Layout, rate_hz: float, seconds: float, top: int) -> dict:
    """Stream targets at ``rate_hz`` into profiled nodes; print and return the figures."""
    directory = PROFILE_DIR / layout.value
    directory.mkdir(parents=True, exist_ok=True)
    budget = e2e_latency.Budget(seconds_per_rate=seconds, warmup_s=0.5, soak_s=0.5)
    result = e2e_latency.measure_layout(layout, budget, rates_hz=(rate_hz,),
                                        profile_dir=directory)
    e2e_latency.print_layout(result)
    for profile in sorted(directory.glob('*.prof')):
        for order in ('tottime', 'cumulative'):
            print(f'--- {layout.value} / {profile.stem}: top {top} by {order}')
            pstats.Stats(str(profile)).strip_dirs().sort_stats(order).print_stats(top)
    return result


def main() -> None:
    """Profile the chosen layouts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rate', type=float, default=500.0, help='target rate [Hz]')
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--top', type=int, default=25)
    parser.add_argument('--layout', nargs='+', choices=[x.value for x in Layout],
                        default=[x.value for x in Layout])
    args = parser.parse_args()
    for layout in map(Layout, args.layout):
        profile_layout(layout, args.rate, args.seconds, args.top)


if __name__ == '__main__':
    main()
