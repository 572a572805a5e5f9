"""Benchmark arm_4dof IK side by side with roboticstoolbox-python's C++ ``Robot.ik_LM``.

The peer model is built from the same loaded Arm (an ETS: yaw about z, the shoulder lift, one
pitch about -y plus a translation per link) and checked against ``arm.fk`` at random angles to
1e-9 m before anything is timed. Both solvers answer the same FK-sampled targets in the same
run, one target at a time and alternating, so machine load hits both alike. Success means a
residual under 1 mm with every angle within limits. Then the project's own figures that have
no peer: unreachable targets (latency tail) and batch rates on 100,000 and 1,000 targets, cold
and warm-started from seeds. Writes bench/out/peer_ik.json.

    .venv/bin/python bench/peer_ik.py [--targets 2000] [--profile]

roboticstoolbox-python is a bench-only dependency (bench/requirements.txt, installed by
``make bench``).
"""

import argparse
import cProfile
import json
import math
import os
from pathlib import Path
import pstats
import sys
import time

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import ik_bench  # noqa: E402
import roboticstoolbox as rtb  # noqa: E402

from fabrik_ros.kinematics import Arm, JointKind, load_arm  # noqa: E402

OUT = Path(__file__).parent / 'out' / 'peer_ik.json'
SEED = 2014
POSITION_ONLY = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
MODEL_TOLERANCE_M = 1e-9
BATCH_SIZES = (100_000, 1_000)
SUCCESS_M = 1e-3
BLOCK = 50


def peer_robot(arm: Arm) -> rtb.Robot:
    """Return the arm as an RTB robot: the same joints, link lengths and limits."""
    lengths = iter(link.length_m for link in arm.links)
    elements = [] if arm.joints[0].kind is JointKind.YAW else [rtb.ET.tz(arm.shoulder_height_m)]
    for joint in arm.joints:
        limits = [joint.min_rad, joint.max_rad]
        if joint.kind is JointKind.YAW:
            elements += [rtb.ET.Rz(qlim=limits), rtb.ET.tz(arm.shoulder_height_m)]
        elif joint.kind is JointKind.PITCH:
            elements += [rtb.ET.Ry(flip=True, qlim=limits), rtb.ET.tx(next(lengths))]
        else:
            elements.append(rtb.ET.Rx(qlim=limits))
    ets = rtb.ETS(elements)
    return rtb.Robot(ets, name='arm_4dof')


def check_model(arm: Arm, robot: rtb.Robot, rng: np.random.Generator, count: int = 200) -> float:
    """Return the largest FK disagreement [m]; raise if it exceeds 1e-9 m."""
    low, high = limits(arm)
    worst = 0.0
    for angles in rng.uniform(low, high, size=(count, len(arm.joints))):
        theirs = robot.fkine(angles).t
        worst = max(worst, float(np.linalg.norm(theirs - arm.fk(angles)[-1])))
    if worst > MODEL_TOLERANCE_M:
        raise RuntimeError(f'RTB model disagrees with arm.fk by {worst:.3g} m, '
                           f'must be <= {MODEL_TOLERANCE_M} m')
    return worst


def limits(arm: Arm) -> tuple[np.ndarray, np.ndarray]:
    """Return the lower and upper joint limits [rad]."""
    return (np.array([j.min_rad for j in arm.joints]),
            np.array([j.max_rad for j in arm.joints]))


def side_by_side(arm: Arm, robot: rtb.Robot, targets: np.ndarray) -> dict:
    """Solve every target with both solvers, alternating in blocks; return their figures.

    Blocks of ``BLOCK`` targets alternate between the solvers, so load changes hit both alike
    while each runs with warm caches, as a node calling it at a steady rate does.
    """
    runs = {'ours': _samples(), 'rtb_ik_LM': _samples()}
    for start in range(0, len(targets), BLOCK):
        block = targets[start:start + BLOCK]
        for target in block:
            started = time.perf_counter_ns()
            result = arm.ik(target)
            _record(runs['ours'], arm, started, result.residual_m, result.angles_rad)
        pose = np.eye(4)
        for target in block:
            pose[:3, 3] = target
            started = time.perf_counter_ns()
            peer = robot.ik_LM(pose, mask=POSITION_ONLY)
            _record(runs['rtb_ik_LM'], arm, started,
                    float(np.linalg.norm(robot.fkine(peer.q).t - target)), peer.q)
    return {name: figures(run) for name, run in runs.items()}


def _samples() -> dict:
    """Return empty per-solve sample lists."""
    return {'us': [], 'error': [], 'in_limits': []}


def _record(run: dict, arm: Arm, started_ns: int, error_m: float, angles: np.ndarray) -> None:
    """Append one solve's time (from ``started_ns`` to now), residual and limit check."""
    run['us'].append((time.perf_counter_ns() - started_ns) / 1e3)
    low, high = limits(arm)
    run['error'].append(error_m)
    run['in_limits'].append(bool(np.all((angles >= low) & (angles <= high))))


def figures(run: dict) -> dict:
    """Return success rate and latency figures of one solver's samples."""
    us, error = np.array(run['us']), np.array(run['error'])
    ok = (error < SUCCESS_M) & np.array(run['in_limits'])
    return {'targets': len(us), 'success_rate': float(ok.mean()),
            'us_median': float(np.median(us)), 'us_p90': float(np.percentile(us, 90)),
            'us_p99': float(np.percentile(us, 99)), 'error_p99_m': float(np.percentile(error, 99))}


def unreachable(arm: Arm, rng: np.random.Generator) -> dict:
    """Return latency and closeness figures on targets the arm cannot reach."""
    targets, closest = ik_bench.unreachable_targets(arm, rng)
    us, gap = [], []
    for target, distance in zip(targets, closest, strict=True):
        started = time.perf_counter_ns()
        result = arm.ik(target)
        us.append((time.perf_counter_ns() - started) / 1e3)
        gap.append(result.residual_m - distance)
    return {'targets': len(us), 'us_median': float(np.median(us)),
            'us_p99': float(np.percentile(us, 99)), 'us_max': float(np.max(us)),
            'closest_within_1mm_rate': float(np.mean(np.abs(gap) < SUCCESS_M))}


def batch(arm: Arm, rng: np.random.Generator, size: int, repeats: int = 3) -> dict:
    """Return batch rates (best of ``repeats``), cold and seeded with nearby poses.

    Both wall-clock and this process's CPU time are given: on a shared machine the CPU time
    shows what the solver costs, the wall clock what a caller waited.
    """
    low, high = limits(arm)
    angles = rng.uniform(low, high, size=(size, len(arm.joints)))
    targets = ik_bench.tool_points(arm, angles)
    seeds = np.clip(angles + rng.normal(scale=0.02, size=angles.shape), low, high)
    row: dict = {'targets': size}
    for label, seed in (('cold', None), ('seeded', seeds)):
        arm.ik_batch(targets, seeds=seed)
        wall, cpu = math.inf, math.inf
        for _ in range(repeats):
            started, started_cpu = time.perf_counter(), time.process_time()
            out = arm.ik_batch(targets, seeds=seed)
            wall = min(wall, time.perf_counter() - started)
            cpu = min(cpu, time.process_time() - started_cpu)
        inside = np.all((out.angles_rad >= low) & (out.angles_rad <= high), axis=1)
        row[label] = {'solves_per_s': size / wall, 'solves_per_cpu_s': size / cpu,
                      'success_rate': float(np.mean((out.residual_m < SUCCESS_M) & inside))}
    return row


def print_report(report: dict) -> None:
    """Print the side-by-side table and the project-only figures."""
    print(f'{"arm_4dof single solve":24} {"success":>8} {"us med":>8} {"us p90":>8} '
          f'{"us p99":>8}')
    for name, f in report['single'].items():
        print(f'{name:24} {f["success_rate"]:8.2%} {f["us_median"]:8.1f} {f["us_p90"]:8.1f} '
              f'{f["us_p99"]:8.1f}')
    print(f'median ours / rtb ik_LM = {report["median_ratio"]:.2f} (goal <= 0.5)')
    far = report['unreachable']
    print(f'unreachable: {far["us_median"]:.0f} us median, {far["us_p99"]:.0f} us p99, '
          f'{far["closest_within_1mm_rate"]:.1%} within 1 mm of the closest point')
    for row in report['batch']:
        for label in ('cold', 'seeded'):
            f = row[label]
            print(f'batch {row["targets"]:>7,} {label:6}: {f["solves_per_s"]:>11,.0f}/s wall, '
                  f'{f["solves_per_cpu_s"]:>11,.0f}/s CPU, success {f["success_rate"]:.2%}')
    print(f'load average {report["loadavg_before"]} -> {report["loadavg_after"]}')


def main() -> None:
    """Check the peer model, run every part, print and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--targets', type=int, default=2000)
    parser.add_argument('--profile', action='store_true', help='cProfile our single solves')
    args = parser.parse_args()
    arm = load_arm(ik_bench.CONFIG)
    robot = peer_robot(arm)
    rng = np.random.default_rng(SEED)
    model_error = check_model(arm, robot, rng)
    targets = ik_bench.reachable_targets(arm, rng, args.targets)
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(lambda: [arm.ik(t) for t in targets])
        pstats.Stats(profiler).sort_stats('tottime').print_stats(20)
    side_by_side(arm, robot, targets[:50])
    single = side_by_side(arm, robot, targets)
    loadavg_before = os.getloadavg()
    report = {
        'config': str(ik_bench.CONFIG.relative_to(ROOT)), 'seed': SEED,
        'loadavg_before': loadavg_before,
        'peer': f'roboticstoolbox-python {rtb.__version__} Robot.ik_LM, position mask',
        'model_fk_error_max_m': model_error, 'single': single,
        'median_ratio': single['ours']['us_median'] / single['rtb_ik_LM']['us_median'],
        'unreachable': unreachable(arm, rng),
        'batch': [batch(arm, rng, size) for size in BATCH_SIZES],
    }
    report['loadavg_after'] = os.getloadavg()
    print_report(report)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + '\n', encoding='utf-8')
    print(f'wrote {OUT.relative_to(ROOT)}')


if __name__ == '__main__':
    main()
