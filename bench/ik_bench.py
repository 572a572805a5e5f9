"""Benchmark arm IK on config/arm_4dof.yaml against textbook FABRIK.

1000 targets from forward kinematics of random in-limit angles (fixed seed) and 200 targets the
arm cannot reach. Success means error < 1 mm AND every angle within limits. Unreachable targets
are judged against the closest reachable point found independently (dense sampling of every
joint range plus a compass search, test/kinematics/reference.py). Single solves are timed one
by one; the batch solver is timed on the same 1200 targets and on 100,000 FK-sampled ones; a
seeded run follows a closed path in steps under 1 mm, as the fabrik_ik node does.
Prints a table and writes bench/out/ik_bench.json.

    .venv/bin/python bench/ik_bench.py [--profile]
"""

import argparse
import cProfile
import json
import math
from pathlib import Path
import pstats
import sys
import time

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from textbook_fabrik import textbook_fabrik  # noqa: E402

from fabrik_ros.kinematics import Arm, load_arm  # noqa: E402
from test.kinematics.reference import closest_distances, tool_points  # noqa: E402

CONFIG = ROOT / 'config' / 'arm_4dof.yaml'
OUT = Path(__file__).parent / 'out' / 'ik_bench.json'
SEED = 2011
REACHABLE = 1000
UNREACHABLE = 200
BIG_BATCH = 100_000
TRACK_STEPS = 1000
SUCCESS_M = 1e-3


def in_limits(arm: Arm, angles: np.ndarray) -> bool:
    """Return True when every angle is within its joint's limits."""
    return all(j.min_rad <= a <= j.max_rad for j, a in zip(arm.joints, angles, strict=True))


def reachable_targets(arm: Arm, rng: np.random.Generator, count: int) -> np.ndarray:
    """Return tool points of random in-limit joint angles."""
    low = [j.min_rad for j in arm.joints]
    high = [j.max_rad for j in arm.joints]
    return tool_points(arm, rng.uniform(low, high, size=(count, len(arm.joints))))


def unreachable_targets(arm: Arm, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Return targets at least 2 mm from anything reachable and their closest distances.

    Three kinds: beyond full reach, under the base, and tucked in next to the shoulder.
    """
    shoulder = np.array([0.0, 0.0, arm.shoulder_height_m])
    reach = sum(link.length_m for link in arm.links)
    kept, distances = [], []
    while len(kept) < UNREACHABLE:
        direction = rng.normal(size=(3, 3))
        direction /= np.linalg.norm(direction, axis=1)[:, None]
        candidates = np.array([
            shoulder + direction[0] * rng.uniform(1.05, 2.0) * reach,
            [*rng.uniform(-0.25, 0.25, 2), rng.uniform(-0.3, -0.12)],
            shoulder + direction[2] * rng.uniform(0.0, 0.02),
        ])
        found = closest_distances(arm, candidates)
        for target, distance in zip(candidates, found, strict=True):
            if distance > 2e-3 and len(kept) < UNREACHABLE:
                kept.append(target)
                distances.append(distance)
    return np.array(kept), np.array(distances)


def solve_ours(arm: Arm, targets: np.ndarray) -> dict:
    """Solve one target at a time; return per-target errors, limits, iterations, times."""
    errors, limits, iterations, times = [], [], [], []
    for target in targets:
        start = time.perf_counter_ns()
        result = arm.ik(target)
        times.append((time.perf_counter_ns() - start) / 1e3)
        errors.append(result.residual_m)
        limits.append(in_limits(arm, result.angles_rad))
        iterations.append(result.iterations)
    return {'error': np.array(errors), 'in_limits': np.array(limits),
            'iterations': np.array(iterations), 'us': np.array(times)}


def baseline_angles(arm: Arm, points: np.ndarray) -> np.ndarray:
    """Read yaw and pitch angles off a textbook solution, on whichever yaw branch fits."""
    tip = points[-1]
    azimuth = math.atan2(tip[1], tip[0]) if math.hypot(tip[0], tip[1]) > 1e-12 else 0.0
    best = None
    for yaw in (azimuth, math.remainder(azimuth + math.pi, 2 * math.pi)):
        heading = np.array([math.cos(yaw), math.sin(yaw)])
        along = points[:, :2] @ heading
        absolute = np.arctan2(np.diff(points[:, 2]), np.diff(along))
        relative = np.concatenate([[absolute[0]], np.diff(absolute)])
        angles = np.concatenate([[yaw], np.remainder(relative + math.pi, 2 * math.pi) - math.pi])
        if best is None or in_limits(arm, angles):
            best = angles
    return best


def solve_baseline(arm: Arm, targets: np.ndarray) -> dict:
    """Solve with textbook FABRIK from the home pose; judge its angles against the limits."""
    home = arm.fk(arm.home)[1:]
    options = arm.options
    errors, limits, iterations, times = [], [], [], []
    for target in targets:
        start = time.perf_counter_ns()
        points, used = textbook_fabrik(home, target, tolerance_m=options.tolerance_m,
                                       max_iterations=options.max_iterations)
        times.append((time.perf_counter_ns() - start) / 1e3)
        errors.append(float(np.linalg.norm(points[-1] - target)))
        limits.append(in_limits(arm, baseline_angles(arm, points)))
        iterations.append(used)
    return {'error': np.array(errors), 'in_limits': np.array(limits),
            'iterations': np.array(iterations), 'us': np.array(times)}


def batch_rate(arm: Arm, targets: np.ndarray, repeats: int = 3) -> dict:
    """Return the best of ``repeats`` timed batch solves (after one warm-up) and its quality."""
    arm.ik_batch(targets)
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        out = arm.ik_batch(targets)
        best = min(best, time.perf_counter() - start)
    low = np.array([j.min_rad for j in arm.joints])
    high = np.array([j.max_rad for j in arm.joints])
    inside = np.all((out.angles_rad >= low) & (out.angles_rad <= high), axis=1)
    return {'targets': len(targets), 'seconds': best, 'solves_per_s': len(targets) / best,
            'error': out.residual_m, 'in_limits': inside}


def tracking(arm: Arm) -> dict:
    """Follow a closed path in 1 mm steps, seeding each solve with the previous answer."""
    steps = np.linspace(0.0, 2.0 * math.pi, TRACK_STEPS, endpoint=False)
    path = np.column_stack([0.16 + 0.05 * np.cos(steps), 0.06 * np.sin(steps),
                            0.14 + 0.05 * np.sin(2.0 * steps)])
    angles = arm.ik(path[0]).angles_rad
    times, jumps, flips, reached = [], [], 0, 0
    for target in path[1:]:
        start = time.perf_counter_ns()
        result = arm.ik(target, seed=angles)
        times.append((time.perf_counter_ns() - start) / 1e3)
        jumps.append(float(np.max(np.abs(result.angles_rad - angles))))
        flips += int(np.sign(result.angles_rad[2]) != np.sign(angles[2]))
        reached += int(result.reached)
        angles = result.angles_rad
    step_m = np.linalg.norm(np.diff(path, axis=0), axis=1)
    return {'steps': len(times), 'step_m_max': float(step_m.max()),
            'reached_rate': reached / len(times), 'us_median': float(np.median(times)),
            'us_p99': float(np.percentile(times, 99)),
            'joint_step_max_deg': math.degrees(max(jumps)), 'elbow_flips': flips}


def summary(run: dict, reference: np.ndarray | None = None) -> dict:
    """Return the headline figures of one solver on one target set."""
    figures = {
        'success_rate': float(np.mean((run['error'] < SUCCESS_M) & run['in_limits'])),
        'in_limits_rate': float(np.mean(run['in_limits'])),
        'error_median_m': float(np.median(run['error'])),
        'error_p99_m': float(np.percentile(run['error'], 99)),
        'us_median': float(np.median(run['us'])),
        'us_p99': float(np.percentile(run['us'], 99)),
        'iterations_median': float(np.median(run['iterations'])),
        'iterations_p99': float(np.percentile(run['iterations'], 99)),
        'iterations_max': int(np.max(run['iterations'])),
    }
    if reference is not None:
        gap = run['error'] - reference
        figures['closest_within_1mm_rate'] = float(np.mean((np.abs(gap) < SUCCESS_M)
                                                           & run['in_limits']))
        figures['gap_to_closest_max_m'] = float(np.max(gap))
        figures['gap_to_closest_min_m'] = float(np.min(gap))
    return figures


def print_table(report: dict) -> None:
    """Print the figures as a table."""
    rows = [('reachable, ours', report['reachable']['ours']),
            ('reachable, textbook', report['reachable']['textbook']),
            ('unreachable, ours', report['unreachable']['ours']),
            ('unreachable, textbook', report['unreachable']['textbook'])]
    print(f'{"set / solver":24} {"success":>8} {"limits":>7} {"err med":>9} {"err p99":>9} '
          f'{"us med":>8} {"us p99":>8} {"it med":>6} {"it p99":>6}')
    for name, f in rows:
        print(f'{name:24} {f["success_rate"]:8.2%} {f["in_limits_rate"]:7.1%} '
              f'{f["error_median_m"] * 1e3:7.3f}mm {f["error_p99_m"] * 1e3:7.3f}mm '
              f'{f["us_median"]:8.1f} {f["us_p99"]:8.1f} {f["iterations_median"]:6.0f} '
              f'{f["iterations_p99"]:6.0f}')
    ours = report['unreachable']['ours']
    print(f'unreachable, ours: {ours["closest_within_1mm_rate"]:.2%} within 1 mm of the closest '
          f'reachable point and within limits (gap to closest '
          f'{ours["gap_to_closest_min_m"] * 1e3:+.4f} .. {ours["gap_to_closest_max_m"] * 1e3:+.4f}'
          ' mm)')
    track = report['tracking']
    print(f'tracking {track["steps"]} seeded steps (<= {track["step_m_max"] * 1e3:.1f} mm): '
          f'reached {track["reached_rate"]:.1%}, {track["us_median"]:.1f} us median, '
          f'largest joint step {track["joint_step_max_deg"]:.2f} deg, '
          f'{track["elbow_flips"]} elbow flips')
    speed = report['single_speedup_vs_textbook']
    print(f'median single solve: ours / textbook = 1 / {speed:.1f}')
    for batch in report['batch']:
        print(f'batch {batch["label"]:>26}: {batch["solves_per_s"]:>11,.0f} solves/s, '
              f'success {batch["success_rate"]:.3%}')


def profile_single(arm: Arm, targets: np.ndarray) -> None:
    """Print where single solves spend their time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for target in targets:
        arm.ik(target)
    profiler.disable()
    pstats.Stats(profiler).sort_stats('tottime').print_stats(15)


def main() -> None:
    """Run the benchmark, print the table and write the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--profile', action='store_true', help='cProfile the single solves')
    args = parser.parse_args()
    arm = load_arm(CONFIG)
    rng = np.random.default_rng(SEED)
    reachable = reachable_targets(arm, rng, REACHABLE)
    unreachable, closest = unreachable_targets(arm, rng)
    if args.profile:
        profile_single(arm, reachable)
    arm.ik(reachable[0])
    report = {
        'config': str(CONFIG.relative_to(ROOT)), 'seed': SEED,
        'options': {'tolerance_m': arm.options.tolerance_m,
                    'max_iterations': arm.options.max_iterations,
                    'min_improvement_m': arm.options.min_improvement_m},
        'reachable': {'ours': summary(solve_ours(arm, reachable)),
                      'textbook': summary(solve_baseline(arm, reachable))},
        'unreachable': {'ours': summary(solve_ours(arm, unreachable), closest),
                        'textbook': summary(solve_baseline(arm, unreachable), closest)},
    }
    report['tracking'] = tracking(arm)
    report['single_speedup_vs_textbook'] = (report['reachable']['textbook']['us_median']
                                            / report['reachable']['ours']['us_median'])
    big = reachable_targets(arm, np.random.default_rng(SEED + 1), BIG_BATCH)
    report['batch'] = []
    mixed = np.concatenate([reachable, unreachable])
    for label, targets in (('1000 reach. + 200 unreach.', mixed),
                           ('1000 reachable', reachable),
                           (f'{BIG_BATCH:,} FK-sampled', big)):
        run = batch_rate(arm, targets)
        report['batch'].append({
            'label': label, 'targets': run['targets'], 'seconds': run['seconds'],
            'solves_per_s': run['solves_per_s'],
            'success_rate': float(np.mean((run['error'] < SUCCESS_M) & run['in_limits']))})
    print_table(report)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + '\n')
    print(f'wrote {OUT.relative_to(ROOT)}')


if __name__ == '__main__':
    main()
