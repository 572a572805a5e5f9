"""Benchmark how FABRIK scales with chain length, ours against the textbook baseline.

Chains of 3, 5, 10, 20 and 50 bones (unequal lengths, fixed seed, 1 m in total): planar free,
planar with every joint limited to ±120°, and spatial free. Targets in random directions at
50 %, 80 % and 95 % of the reach. Both solvers start from the same gently curled pose, with
the same tolerance (0.1 mm) and iteration cap (100). Per cell: median µs, median iterations
and the share of targets reached. Prints a table and writes bench/out/solver_scaling.json.

    .venv/bin/python bench/solver_scaling.py [--quick]
"""

import argparse
from dataclasses import dataclass
import enum
import json
import math
from pathlib import Path
import sys
import time

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from textbook_fabrik import textbook_fabrik  # noqa: E402

from fabrik_ros.kinematics import Chain, FabrikSolver, SolverOptions, Vec3  # noqa: E402

OUT = BENCH / 'out' / 'solver_scaling.json'
LINKS = (3, 5, 10, 20, 50)
REACH = (0.5, 0.8, 0.95)
SEED = 2011
OPTIONS = SolverOptions(tolerance_m=1e-4, max_iterations=100)
HINGE_RAD = math.radians(120.0)


class Variant(enum.Enum):
    """Which kind of chain is solved."""

    PLANAR = '2d'
    PLANAR_HINGED = '2d ±120°'
    SPATIAL = '3d'


@dataclass(frozen=True)
class Case:
    """One chain and its targets, in the core's types and as numpy for the textbook solver."""

    chain: Chain
    targets: list
    start: list
    start_np: np.ndarray
    targets_np: np.ndarray


def _as_xyz(point) -> tuple[float, float, float]:
    if isinstance(point, complex):
        return (point.real, point.imag, 0.0)
    return (point.x, point.y, point.z)


def make_case(variant: Variant, links: int, reach: float, count: int,
              rng: np.random.Generator) -> Case:
    """Return a chain of ``links`` bones and ``count`` targets at ``reach`` of its length."""
    lengths = rng.uniform(0.5, 1.5, links)
    lengths = lengths / lengths.sum()
    if variant is Variant.SPATIAL:
        chain = Chain.spatial(lengths)
        directions = rng.normal(size=(count, 3))
        directions /= np.linalg.norm(directions, axis=1)[:, None]
        targets = [Vec3(*map(float, reach * d)) for d in directions]
    else:
        limits = [(-HINGE_RAD, HINGE_RAD) if variant is Variant.PLANAR_HINGED else None] * links
        chain = Chain.planar(lengths, limits)
        angles = rng.uniform(-math.pi, math.pi, count)
        targets = [complex(reach * math.cos(a), reach * math.sin(a)) for a in angles]
    start = list(chain.curled())
    return Case(chain, targets, start, np.array([_as_xyz(p) for p in start]),
                np.array([_as_xyz(t) for t in targets]))


def time_ours(case: Case, solver: FabrikSolver) -> dict:
    """Solve every target with our FABRIK; return µs, iterations and reached flags."""
    us, iterations, reached = [], [], []
    for target in case.targets:
        started = time.perf_counter_ns()
        solution = solver.solve(case.chain, target, start=case.start)
        us.append((time.perf_counter_ns() - started) / 1e3)
        iterations.append(solution.iterations)
        reached.append(solution.reached)
    return {'us': np.array(us), 'iterations': np.array(iterations),
            'reached': np.array(reached)}


def time_textbook(case: Case) -> dict:
    """Solve every target with textbook FABRIK; return µs, iterations and reached flags."""
    us, iterations, reached = [], [], []
    for target in case.targets_np:
        started = time.perf_counter_ns()
        points, used = textbook_fabrik(case.start_np, target, tolerance_m=OPTIONS.tolerance_m,
                                       max_iterations=OPTIONS.max_iterations)
        us.append((time.perf_counter_ns() - started) / 1e3)
        iterations.append(used)
        reached.append(np.linalg.norm(points[-1] - target) <= OPTIONS.tolerance_m)
    return {'us': np.array(us), 'iterations': np.array(iterations),
            'reached': np.array(reached)}


def _figures(run: dict) -> dict:
    return {'median_us': float(np.median(run['us'])),
            'p90_us': float(np.percentile(run['us'], 90)),
            'iterations_median': float(np.median(run['iterations'])),
            'iterations_p90': float(np.percentile(run['iterations'], 90)),
            'reached_rate': float(np.mean(run['reached']))}


def run(*, quick: bool = False) -> list[dict]:
    """Measure every variant × length × reach cell; return one row per cell."""
    count = 5 if quick else 100
    solver = FabrikSolver(OPTIONS)
    rows = []
    for variant in Variant:
        rng = np.random.default_rng(SEED)
        for links in LINKS:
            for reach in REACH:
                case = make_case(variant, links, reach, count, rng)
                solver.solve(case.chain, case.targets[0], start=case.start)
                rows.append({'variant': variant.value, 'links': links, 'reach': reach,
                             'targets': count, 'ours': _figures(time_ours(case, solver)),
                             'textbook': _figures(time_textbook(case))})
    return rows


def print_table(rows: list[dict]) -> None:
    """Print one line per cell."""
    print('solver scaling (median µs / median iterations / reached; ours vs textbook)')
    print(f'{"chain":10} {"links":>5} {"reach":>5}  {"ours us":>8} {"it":>4} {"ok":>5}  '
          f'{"textbook us":>11} {"it":>4} {"ok":>5}')
    for row in rows:
        o, t = row['ours'], row['textbook']
        print(f'{row["variant"]:10} {row["links"]:5d} {row["reach"]:5.0%}  '
              f'{o["median_us"]:8.1f} {o["iterations_median"]:4.0f} {o["reached_rate"]:5.0%}  '
              f'{t["median_us"]:11.1f} {t["iterations_median"]:4.0f} {t["reached_rate"]:5.0%}')


def main() -> None:
    """Run, print and write the JSON file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='tiny budget (smoke test)')
    parser.add_argument('--out', type=Path, default=OUT)
    args = parser.parse_args()
    rows = run(quick=args.quick)
    print_table(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2) + '\n', encoding='utf-8')
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
