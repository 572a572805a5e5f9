"""Benchmark the arm solver on every shipped config against textbook FABRIK in the same run.

Per config/*.yaml: targets from forward kinematics of random in-limit angles (fixed seed),
single solves timed one by one (ours, then the textbook baseline from the home pose on the
same targets), and the batch solver's throughput. Success means error < 1 mm AND every angle
within limits; the textbook baseline ignores limits, so for it only the error is judged here
(bench/ik_bench.py also reads its angles against the limits, on arm_4dof). Prints a table and
writes bench/out/solver_configs.json.

    .venv/bin/python bench/solver_configs.py [--quick]
"""

import argparse
import json
from pathlib import Path
import sys
import time

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

from ik_bench import batch_rate, reachable_targets, solve_ours  # noqa: E402
from textbook_fabrik import textbook_fabrik  # noqa: E402

from fabrik_ros.kinematics import Arm, JointKind, load_arm  # noqa: E402

CONFIGS = sorted((BENCH.parent / 'config').glob('*.yaml'))
OUT = BENCH / 'out' / 'solver_configs.json'
SEED = 7
SUCCESS_M = 1e-3


def baseline_chain(arm: Arm) -> np.ndarray:
    """Return the home pose as a textbook chain: shoulder first, one point per moving bone.

    The fixed column from the base to the shoulder of a yaw arm is not a bone the textbook
    solver may move, and a roll joint adds a point that coincides with its neighbour.
    """
    points = arm.fk(arm.home)
    if arm.joints[0].kind is JointKind.YAW:
        points = points[1:]
    keep = [0] + [i for i in range(1, len(points))
                  if np.linalg.norm(points[i] - points[i - 1]) > 1e-9]
    return points[keep]


def solve_textbook(arm: Arm, targets: np.ndarray) -> dict:
    """Solve with textbook FABRIK from the home pose; return errors, iterations, times."""
    home = baseline_chain(arm)
    options = arm.options
    errors, iterations, times = [], [], []
    for target in targets:
        start = time.perf_counter_ns()
        points, used = textbook_fabrik(home, target, tolerance_m=options.tolerance_m,
                                       max_iterations=options.max_iterations)
        times.append((time.perf_counter_ns() - start) / 1e3)
        errors.append(float(np.linalg.norm(points[-1] - target)))
        iterations.append(used)
    return {'error': np.array(errors), 'iterations': np.array(iterations),
            'us': np.array(times)}


def measure_config(path: Path, count: int, batch_count: int) -> dict:
    """Return the figures of one config."""
    arm = load_arm(path)
    rng = np.random.default_rng(SEED)
    targets = reachable_targets(arm, rng, count)
    arm.ik(targets[0])
    ours = solve_ours(arm, targets)
    textbook = solve_textbook(arm, targets)
    batch = batch_rate(arm, reachable_targets(arm, rng, batch_count))
    return {
        'targets': count,
        'success_rate': float(np.mean((ours['error'] < SUCCESS_M) & ours['in_limits'])),
        'median_us': float(np.median(ours['us'])),
        'p99_us': float(np.percentile(ours['us'], 99)),
        'iterations_median': float(np.median(ours['iterations'])),
        'baseline_median_us': float(np.median(textbook['us'])),
        'baseline_p99_us': float(np.percentile(textbook['us'], 99)),
        'baseline_iterations_median': float(np.median(textbook['iterations'])),
        'baseline_error_below_1mm_rate': float(np.mean(textbook['error'] < SUCCESS_M)),
        'batch_targets': batch_count,
        'batch_solves_per_s': float(batch['solves_per_s']),
        'batch_success_rate': float(np.mean((batch['error'] < SUCCESS_M)
                                            & batch['in_limits'])),
    }


def run(*, quick: bool = False) -> dict:
    """Measure every shipped config; keys are the config file stems."""
    count, batch_count = (50, 2000) if quick else (1000, 100_000)
    return {path.stem: measure_config(path, count, batch_count) for path in CONFIGS}


def print_table(report: dict) -> None:
    """Print the figures as a table."""
    print('solver per config (single solves: median µs, ours vs textbook from home)')
    print(f'{"config":18} {"success":>8} {"us med":>8} {"us p99":>8} {"it med":>6} '
          f'{"textbook us":>11} {"tb it":>5} {"batch solves/s":>15}')
    for name, f in report.items():
        print(f'{name:18} {f["success_rate"]:8.2%} {f["median_us"]:8.1f} {f["p99_us"]:8.1f} '
              f'{f["iterations_median"]:6.0f} {f["baseline_median_us"]:11.1f} '
              f'{f["baseline_iterations_median"]:5.0f} {f["batch_solves_per_s"]:15,.0f}')


def main() -> None:
    """Run, print and write the JSON file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='tiny budget (smoke test)')
    parser.add_argument('--out', type=Path, default=OUT)
    args = parser.parse_args()
    report = run(quick=args.quick)
    print_table(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + '\n', encoding='utf-8')
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
