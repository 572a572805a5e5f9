"""Benchmark our single IK solve against roboticstoolbox-python's best call, target by target.

The peer is roboticstoolbox-python's C++ Levenberg-Marquardt solver called at its best: the
robot's ETS taken once, then ``ets.ik_LM(T, q0=<middle of the limits>, mask=<xyz>, tol=5e-9,
joint_limits=True, method=..., k=...)`` (tol 5e-9 on E = |e|^2 / 2 means |e| < 0.1 mm), with
the method and damping ``k`` that answer a calibration set of targets (not the timed ones)
fastest at >= 99.9 % success among the documented calls (``ik_LM``'s three methods over a
range of ``k``, ``ik_GN``, ``ik_NR``; ``--scan-peer`` prints that search). Its default call
(``robot.ik_LM(T, mask=<xyz>)``: random starts, tol 1e-6, i.e. |e| < 1.4 mm) is timed beside
it, named as such.

Each arm is checked before anything is timed: both models' tool points at random angles within
the limits agree (1e-9 m for a peer built from the loaded arm, 1e-5 m for a peer that read a
URDF itself, the guarantee of arm_from_urdf). Then the same FK-sampled targets are solved
alternating target by target (ours, peer's best call, ours, ...), so machine load hits both
alike; nothing else runs between the calls (the answers are judged afterwards: the checks in
between slowed ours by 10 % more than the peer). The default call runs in a pass of its own.

- random targets: ours as users run it (``arm.ik(target)``, the arm file's solver options, no
  seed, the target a tuple as fabrik_ik passes it) against the peer's best call from the middle
  of the limits;
- a stream of nearby targets (tool steps under 1 mm along a joint-space path): ours seeded
  from its previous answer, as fabrik_ik does within a stream, against the peer's best call
  from its previous answer; each also counts its elbow flips (a change of the elbow's branch
  between consecutive answers, which a tracked target must never cause).

Success = residual under 0.1 mm (measured with the peer's FK, i.e. the URDF's when it read
one) with every angle within both models' limits. On arm_4dof it then gives the project's own
figures that have no peer: unreachable targets and batch rates. Writes bench/out/peer_ik.json.

    .venv/bin/python bench/peer_ik.py [--targets 2000] [--profile] [--scan-peer]
    .venv/bin/python bench/peer_ik.py --arm ARM.yaml [--urdf ARM.urdf --tool-link LINK]

Without ``--arm`` it runs arm_4dof (the peer model built from the loaded arm) and, where its
files exist, the SO-101 (config/so101.yaml against the SO-101 URDF read by RTB's own loader).
roboticstoolbox-python is a bench-only dependency (bench/requirements.txt, ``make bench``).
"""

import argparse
from collections.abc import Callable
import cProfile
from dataclasses import dataclass
import itertools
import json
import math
import os
from pathlib import Path
import pstats
import sys
import time
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import ik_bench  # noqa: E402
import roboticstoolbox as rtb  # noqa: E402
from roboticstoolbox.models.URDF.URDFRobot import URDF_read  # noqa: E402

from fabrik_ros.kinematics import Arm, ArmConfigError, JointKind, load_arm  # noqa: E402

OUT = Path(__file__).parent / 'out' / 'peer_ik.json'
SO101_ARM = ROOT / 'config' / 'so101.yaml'
SO101_URDF = ROOT / 'test' / 'kinematics' / 'description' / 'urdf' / 'so101.urdf'
SO101_TOOL_LINK = 'gripper_frame_link'
SEED = 2014
POSITION_ONLY = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
BUILT_TOLERANCE_M = 1e-9
URDF_TOLERANCE_M = 1e-5
LIMIT_SLACK_RAD = 1e-9
SUCCESS_M = 1e-4
PEER_TOL = 5e-9
PEER_SUCCESS_GOAL = 0.999
CALIBRATION_TARGETS = 1000
STREAM_STEP_M = 1e-3
STREAM_WAYPOINTS = 12
BATCH_SIZES = (100_000, 1_000)
EXTRAS_SUCCESS_M = 1e-3
FLIP_BEND = 0.05


@dataclass(frozen=True)
class Peer:
    """The peer's model of one arm: its ETS (base to tool) and the robot for the default call."""

    robot: rtb.Robot
    ets: rtb.ETS
    tool_link: str | None
    source: str

    @property
    def low(self) -> np.ndarray:
        """Return the lower joint limits [rad]."""
        return np.asarray(self.ets.qlim[0], dtype=float)

    @property
    def high(self) -> np.ndarray:
        """Return the upper joint limits [rad]."""
        return np.asarray(self.ets.qlim[1], dtype=float)

    def tool(self, angles: np.ndarray) -> np.ndarray:
        """Return the tool point at ``angles`` by the peer's forward kinematics [m]."""
        return self.ets.eval(angles)[:3, 3]

    def default_call(self, pose: np.ndarray) -> Any:
        """Return the answer of RTB's default call: ``robot.ik_LM(T, end=<tool>, mask=<xyz>)``."""
        return self.robot.ik_LM(pose, end=self.tool_link, mask=POSITION_ONLY)


@dataclass(frozen=True)
class PeerCall:
    """One documented way of calling the peer: ``solve(pose, q0=q0, **options)``."""

    name: str
    solve: Callable[..., Any]
    options: dict[str, Any]


Limits = tuple[np.ndarray, np.ndarray]


def built_peer(arm: Arm) -> Peer:
    """Return the arm as an RTB ETS built from the loaded arm: the same joints, lengths, limits.

    Covers the plain model (yaw about z, pitches about -y with a translation per link, a roll
    about the last link); the FK check refuses any arm it does not describe.
    """
    lengths = iter([link.length_m for link in arm.links])
    elements = [] if arm.joints[0].kind is JointKind.YAW else [rtb.ET.tz(arm.shoulder_height_m)]
    for joint in arm.joints:
        limits = [joint.min_rad, joint.max_rad]
        if joint.kind is JointKind.YAW:
            elements += [rtb.ET.Rz(qlim=limits), rtb.ET.tz(arm.shoulder_height_m)]
        elif joint.kind is JointKind.PITCH:
            elements += [rtb.ET.Ry(flip=True, qlim=limits), rtb.ET.tx(next(lengths))]
        else:
            elements.append(rtb.ET.Rx(qlim=limits))
    robot = rtb.Robot(rtb.ETS(elements), name='from_arm')
    return Peer(robot, robot.ets(), None, 'ETS built from the loaded arm')


def urdf_peer(urdf: Path, tool_link: str) -> Peer:
    """Return the peer as RTB reads the URDF itself: its chain from the root to ``tool_link``."""
    links, name, _ = URDF_read(str(urdf.resolve()))  # a relative path is read under rtbdata
    robot = rtb.Robot(links, name=name)
    shown = urdf.resolve().relative_to(ROOT) if urdf.resolve().is_relative_to(ROOT) else urdf
    return Peer(robot, robot.ets(end=tool_link), tool_link,
                f'{shown} read by roboticstoolbox URDF_read, chain to {tool_link}')


def arm_limits(arm: Arm) -> Limits:
    """Return the arm file's lower and upper joint limits [rad]."""
    return (np.array([j.min_rad for j in arm.joints]),
            np.array([j.max_rad for j in arm.joints]))


def check_models(arm: Arm, peer: Peer, tolerance_m: float, rng: np.random.Generator,
                 count: int = 1000) -> tuple[Limits, dict]:
    """Return both models' common limits and how far they differ; raise beyond tolerance.

    The tool points are compared at ``count`` random angles within the common limits, in the
    peer's (the URDF's) joint convention, which the arm file's joint positions share.
    """
    low, high = arm_limits(arm)
    if peer.ets.n != len(low):
        raise RuntimeError(f'the peer chain has {peer.ets.n} joints, the arm file '
                           f'{len(low)}: not the same arm')
    common = (np.maximum(low, peer.low), np.minimum(high, peer.high))
    worst = 0.0
    for angles in rng.uniform(*common, size=(count, len(low))):
        worst = max(worst, float(np.linalg.norm(peer.tool(angles) - arm.fk(angles)[-1])))
    if worst > tolerance_m:
        raise RuntimeError(f'the peer model disagrees with arm.fk by {worst:.3g} m at random '
                           f'angles within the limits, must be <= {tolerance_m} m')
    return common, {'fk_error_max_m': worst, 'fk_tolerance_m': tolerance_m,
                    'limit_difference_max_rad': float(max(np.max(np.abs(low - peer.low)),
                                                          np.max(np.abs(high - peer.high))))}


def peer_calls(peer: Peer) -> list[PeerCall]:
    """Return the documented calls at tol 5e-9 (|e| < 0.1 mm) with joint limits to search.

    ``k`` scales the damping; RTB's ik_LM docstring suggests chan 1.0-0.01, wampler
    0.01-0.0001, sugihara 0.1-0.0001.
    """
    ets = peer.ets
    common = {'mask': POSITION_ONLY, 'tol': PEER_TOL, 'joint_limits': True}
    calls = [PeerCall(f'ets.ik_LM(method={method!r}, k={k:g})', ets.ik_LM,
                      {**common, 'method': method, 'k': k})
             for method, ks in (('chan', (1.0, 0.5, 0.3, 0.2, 0.1, 0.05)),
                                ('sugihara', (1e-2, 1e-3, 1e-4)),
                                ('wampler', (1e-2, 1e-3, 1e-4)))
             for k in ks]
    calls += [PeerCall('ets.ik_GN()', ets.ik_GN, common),
              PeerCall('ets.ik_NR()', ets.ik_NR, common)]
    return calls


def best_peer_call(peer: Peer, limits: Limits, targets: np.ndarray,
                   show: bool) -> tuple[PeerCall, list[dict]]:
    """Return the fastest call (median) at >= 99.9 % success on ``targets``, and the search.

    A call that fails more than 2 of its first 20 targets is dropped there (some take ms each).
    """
    q0 = (peer.low + peer.high) / 2
    rows: list[dict] = []
    best: tuple[PeerCall, float] | None = None
    for call in peer_calls(peer):
        us: list[float] = []
        ok: list[bool] = []
        pose = np.eye(4)
        for index, target in enumerate(targets):
            pose[:3, 3] = target
            started = time.perf_counter_ns()
            solution = call.solve(pose, q0=q0, **call.options)
            us.append((time.perf_counter_ns() - started) / 1e3)
            ok.append(succeeded(peer, limits, target, solution.q))
            if index == 19 and sum(ok) < 18:
                break
        rate, median = float(np.mean(ok)), float(np.median(us))
        rows.append({'call': call.name, 'targets': len(ok), 'success_rate': rate,
                     'us_median': median})
        if show:
            print(f'  {call.name:40} {len(ok):5} targets {rate:8.2%} {median:8.1f} us median')
        qualifies = len(ok) == len(targets) and rate >= PEER_SUCCESS_GOAL
        if qualifies and (best is None or median < best[1]):
            best = (call, median)
    if best is None:
        raise RuntimeError(f'no peer call reaches {PEER_SUCCESS_GOAL:.1%} success')
    return best[0], rows


def succeeded(peer: Peer, limits: Limits, target: np.ndarray, angles: np.ndarray) -> bool:
    """Return True when ``angles`` put the tool within 0.1 mm of ``target`` within the limits."""
    low, high = limits
    inside = bool(np.all((angles >= low - LIMIT_SLACK_RAD) & (angles <= high + LIMIT_SLACK_RAD)))
    return inside and float(np.linalg.norm(peer.tool(angles) - target)) < SUCCESS_M


def random_targets(peer: Peer, limits: Limits, rng: np.random.Generator,
                   count: int) -> np.ndarray:
    """Return tool points of random angles within both models' limits."""
    return np.array([peer.tool(q) for q in rng.uniform(*limits, size=(count, len(limits[0])))])


def stream_targets(peer: Peer, limits: Limits, rng: np.random.Generator,
                   count: int) -> np.ndarray:
    """Return ``count`` tool points along a joint-space path, each under 1 mm from the last.

    The path runs straight in joint space between random waypoints within the limits (kept
    5 % inside them), cut so that no tool step exceeds ``STREAM_STEP_M``.
    """
    low, high = limits
    margin = 0.05 * (high - low)
    points: list[np.ndarray] = []
    end = rng.uniform(low + margin, high - margin)
    while len(points) < count:
        start, end = end, rng.uniform(low + margin, high - margin)
        fine = _fine_path(peer, start, end)
        travelled = np.concatenate(
            [[0.0], np.cumsum(np.linalg.norm(np.diff(fine, axis=0), axis=1))])
        marks = np.arange(0.0, travelled[-1], 0.8 * STREAM_STEP_M)
        points.extend(fine[np.minimum(np.searchsorted(travelled, marks), len(fine) - 1)])
    stream = np.array(points[:count])
    longest = float(np.max(np.linalg.norm(np.diff(stream, axis=0), axis=1)))
    if longest > STREAM_STEP_M:
        raise RuntimeError(f'stream step {longest:.3g} m, must be <= {STREAM_STEP_M} m')
    return stream


def _fine_path(peer: Peer, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Return tool points along the joint-space line, none more than 0.2 mm from the next."""
    count = 1001
    while True:
        fine = np.array([peer.tool(start + f * (end - start))
                         for f in np.linspace(0.0, 1.0, count)])
        largest = float(np.max(np.linalg.norm(np.diff(fine, axis=0), axis=1)))
        if largest <= 0.2 * STREAM_STEP_M:
            return fine
        count = int(count * largest / (0.1 * STREAM_STEP_M)) + 1


def _timed(us: list[float], answers: list[Any], started_ns: int, angles: Any) -> None:
    """Append one solve's time (from ``started_ns`` to now) and its angles (judged later)."""
    us.append((time.perf_counter_ns() - started_ns) / 1e3)
    answers.append(angles)


def random_run(arm: Arm, peer: Peer, call: PeerCall, limits: Limits,
               targets: np.ndarray) -> dict:
    """Solve each random target with ours, then the peer's best call, in turn; its figures.

    Only the call itself is inside the clock, and nothing else runs between the calls (the
    answers are judged afterwards): ours takes the target as a tuple of floats (as fabrik_ik
    passes it) and answers with its angles as floats (what fabrik_ik publishes), the peer
    takes a 4x4 pose array it fills in place and answers with its ``q`` array. The peer's
    default call then runs over the same targets in a pass of its own.
    """
    ours: tuple[list[float], list[Any]] = ([], [])
    best: tuple[list[float], list[Any]] = ([], [])
    default: tuple[list[float], list[Any]] = ([], [])
    solve, options = call.solve, call.options
    q0 = (peer.low + peer.high) / 2
    pose = np.eye(4)
    for target in targets:
        point = (float(target[0]), float(target[1]), float(target[2]))
        started = time.perf_counter_ns()
        result = arm.ik(point)
        _timed(*ours, started, result.joint_angles_rad)
        pose[:3, 3] = target
        started = time.perf_counter_ns()
        solution = solve(pose, q0=q0, **options)
        _timed(*best, started, solution.q)
    for target in targets:
        pose[:3, 3] = target
        started = time.perf_counter_ns()
        solution = peer.default_call(pose)
        _timed(*default, started, solution.q)
    return {'ours': figures(peer, limits, targets, *ours),
            'rtb best call': figures(peer, limits, targets, *best),
            'rtb ik_LM default call': figures(peer, limits, targets, *default)}


def stream_run(arm: Arm, peer: Peer, call: PeerCall, limits: Limits,
               targets: np.ndarray) -> dict:
    """Follow the stream with ours and the peer's best call, each from its previous answer.

    Ours is seeded with its last answer's angles, a tuple of floats as fabrik_ik's last
    command is.
    """
    ours: tuple[list[float], list[Any]] = ([], [])
    best: tuple[list[float], list[Any]] = ([], [])
    solve, options = call.solve, call.options
    point = (float(targets[0][0]), float(targets[0][1]), float(targets[0][2]))
    seed = arm.ik(point).joint_angles_rad
    pose = np.eye(4)
    pose[:3, 3] = targets[0]
    previous = solve(pose, q0=(peer.low + peer.high) / 2, **options).q
    for target in targets[1:]:
        point = (float(target[0]), float(target[1]), float(target[2]))
        started = time.perf_counter_ns()
        result = arm.ik(point, seed)
        _timed(*ours, started, result.joint_angles_rad)
        seed = result.joint_angles_rad
        pose[:3, 3] = target
        started = time.perf_counter_ns()
        solution = solve(pose, q0=previous, **options)
        _timed(*best, started, solution.q)
        previous = solution.q
    return {'ours, seeded': {**figures(peer, limits, targets[1:], *ours),
                             'elbow_flips': elbow_flips(arm, ours[1])},
            'rtb best call, q0 = previous': {**figures(peer, limits, targets[1:], *best),
                                             'elbow_flips': elbow_flips(arm, best[1])}}


def elbow_flips(arm: Arm, answers: list[np.ndarray]) -> int:
    """Return how often the elbow changes branch between consecutive answers of a stream.

    The branch is the sign of the sine of the elbow's geometric angle (the arm's second pitch
    joint, in both models' joint convention); a step from or to an elbow within 0.05 of
    straight or folded back (where a path may cross between branches) is not counted.
    """
    index = arm.model.pitch_index[1]
    joint = arm.joints[index]
    bends = [math.sin(joint.geometric(float(q[index]))) for q in answers]
    return sum(1 for a, b in itertools.pairwise(bends)
               if a * b < 0.0 and min(abs(a), abs(b)) > FLIP_BEND)


def figures(peer: Peer, limits: Limits, targets: np.ndarray, times_us: list[float],
            answers: list[Any]) -> dict:
    """Return success rate, latency and residual (peer FK) figures of one solver's answers."""
    us = np.array(times_us)
    answers = [np.asarray(q, dtype=float) for q in answers]
    error = np.array([np.linalg.norm(peer.tool(q) - t) for q, t in zip(answers, targets,
                                                                          strict=True)])
    ok = [succeeded(peer, limits, t, q) for q, t in zip(answers, targets, strict=True)]
    return {'targets': len(us), 'success_rate': float(np.mean(ok)),
            'us_median': float(np.median(us)), 'us_p90': float(np.percentile(us, 90)),
            'us_p99': float(np.percentile(us, 99)), 'error_p99_m': float(np.percentile(error, 99))}


def compare_arm(name: str, arm_file: Path, urdf: Path | None, tool_link: str | None,
                count: int, scan: bool) -> tuple[Arm, dict]:
    """Check one arm's two models, pick the peer's best call, time both ways; its report."""
    arm = load_arm(arm_file)
    peer = built_peer(arm) if urdf is None else urdf_peer(urdf, tool_link or '')
    rng = np.random.default_rng(SEED)
    limits, agreement = check_models(
        arm, peer, BUILT_TOLERANCE_M if urdf is None else URDF_TOLERANCE_M, rng)
    if scan:
        print(f'{name}: peer calls at tol {PEER_TOL:g} on {CALIBRATION_TARGETS} calibration '
              'targets')
    call, search = best_peer_call(peer, limits, random_targets(peer, limits, rng,
                                                               CALIBRATION_TARGETS), scan)
    targets = random_targets(peer, limits, rng, count)
    stream = stream_targets(peer, limits, rng, count)
    random_run(arm, peer, call, limits, targets[:100])
    single = random_run(arm, peer, call, limits, targets)
    seeded = stream_run(arm, peer, call, limits, stream)
    return arm, {
        'arm_file': str(arm_file.resolve().relative_to(ROOT)
                        if arm_file.resolve().is_relative_to(ROOT) else arm_file),
        'peer_model': peer.source, **agreement,
        'peer_best_call': f'{call.name}, q0 = middle of the limits, mask xyz, tol {PEER_TOL:g}, '
                          'joint_limits=True',
        'peer_call_search': search, 'single': single, 'stream': seeded,
        'stream_step_m_max': float(np.max(np.linalg.norm(np.diff(stream, axis=0), axis=1))),
        'median_ratio': single['ours']['us_median'] / single['rtb best call']['us_median'],
        'stream_median_ratio': (seeded['ours, seeded']['us_median']
                                / seeded['rtb best call, q0 = previous']['us_median']),
    }


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
            'closest_within_1mm_rate': float(np.mean(np.abs(gap) < EXTRAS_SUCCESS_M))}


def batch(arm: Arm, rng: np.random.Generator, size: int, repeats: int = 3) -> dict:
    """Return batch rates (best of ``repeats``), cold and seeded with nearby poses.

    Both wall-clock and this process's CPU time are given: on a shared machine the CPU time
    shows what the solver costs, the wall clock what a caller waited.
    """
    low, high = arm_limits(arm)
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
                      'success_rate': float(np.mean((out.residual_m < EXTRAS_SUCCESS_M)
                                                    & inside))}
    return row


def print_arm(name: str, report: dict) -> None:
    """Print one arm's model check, the peer's best call and both side-by-side tables."""
    print(f'{name}: {report["arm_file"]} against {report["peer_model"]}; tool points agree to '
          f'{report["fk_error_max_m"]:.2g} m, limits to {report["limit_difference_max_rad"]:.2g}'
          f' rad')
    print(f'  peer best call: {report["peer_best_call"]}')
    for title, key, ratio in (('random targets', 'single', 'median_ratio'),
                              ('stream, <= 1 mm steps', 'stream', 'stream_median_ratio')):
        flips = ' elbow flips' if key == 'stream' else ''
        print(f'  {title:34} {"success":>8} {"us med":>8} {"us p90":>8} {"us p99":>8}{flips}')
        for solver, f in report[key].items():
            print(f'  {solver:34} {f["success_rate"]:8.2%} {f["us_median"]:8.1f} '
                  f'{f["us_p90"]:8.1f} {f["us_p99"]:8.1f}'
                  + (f' {f["elbow_flips"]:11d}' if flips else ''))
        print(f'  median ours / rtb best call = {report[ratio]:.2f} (goal <= 0.5)')


def print_extras(report: dict) -> None:
    """Print the arm_4dof figures that have no peer."""
    far = report['unreachable']
    print(f'unreachable: {far["us_median"]:.0f} us median, {far["us_p99"]:.0f} us p99, '
          f'{far["closest_within_1mm_rate"]:.1%} within 1 mm of the closest point')
    for row in report['batch']:
        for label in ('cold', 'seeded'):
            f = row[label]
            print(f'batch {row["targets"]:>7,} {label:6}: {f["solves_per_s"]:>11,.0f}/s wall, '
                  f'{f["solves_per_cpu_s"]:>11,.0f}/s CPU, success {f["success_rate"]:.2%}')


def profile_ours(arm: Arm) -> None:
    """Print where 1000 unseeded single solves of FK-sampled targets spend their time."""
    targets = ik_bench.reachable_targets(arm, np.random.default_rng(SEED), 1000)
    points = [tuple(float(v) for v in target) for target in targets]
    profiler = cProfile.Profile()
    profiler.enable()
    for point in points:
        arm.ik(point)
    profiler.disable()
    pstats.Stats(profiler).sort_stats('tottime').print_stats(20)


def cases(args: argparse.Namespace) -> list[tuple[str, Path, Path | None, str | None]]:
    """Return the arms to run: the one named on the command line, else arm_4dof and SO-101."""
    if args.arm is not None:
        if (args.urdf is None) != (args.tool_link is None):
            raise SystemExit('--urdf and --tool-link go together')
        return [(args.arm.stem, args.arm, args.urdf, args.tool_link)]
    found: list[tuple[str, Path, Path | None, str | None]] = [
        ('arm_4dof', ik_bench.CONFIG, None, None)]
    if SO101_ARM.is_file() and SO101_URDF.is_file():
        found.append(('so101', SO101_ARM, SO101_URDF, SO101_TOOL_LINK))
    return found


def main() -> None:
    """Run every arm (and arm_4dof's own figures), print and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--targets', type=int, default=2000)
    parser.add_argument('--arm', type=Path, help='arm file (default: arm_4dof and SO-101)')
    parser.add_argument('--urdf', type=Path, help='URDF the peer reads (default: built)')
    parser.add_argument('--tool-link', help="the URDF's tool link")
    parser.add_argument('--scan-peer', action='store_true', help='print the peer call search')
    parser.add_argument('--profile', action='store_true', help='cProfile our single solves')
    args = parser.parse_args()
    report: dict[str, Any] = {'peer': f'roboticstoolbox-python {rtb.__version__}',
                              'seed': SEED, 'loadavg_before': os.getloadavg(), 'arms': {}}
    for name, arm_file, urdf, tool_link in cases(args):
        try:
            arm, report['arms'][name] = compare_arm(name, arm_file, urdf, tool_link,
                                                    args.targets, args.scan_peer)
        except ArmConfigError as error:
            if args.arm is not None:
                raise
            report['arms'][name] = {'skipped': f'load_arm({arm_file.name}): {error}'}
            print(f'{name}: skipped, {report["arms"][name]["skipped"]}')
            continue
        print_arm(name, report['arms'][name])
        if args.profile:
            profile_ours(arm)
    if args.arm is None:
        arm = load_arm(ik_bench.CONFIG)
        rng = np.random.default_rng(SEED + 1)
        report['unreachable'] = unreachable(arm, rng)
        report['batch'] = [batch(arm, rng, size) for size in BATCH_SIZES]
        print_extras(report)
    report['loadavg_after'] = os.getloadavg()
    print(f'load average {report["loadavg_before"]} -> {report["loadavg_after"]}')
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + '\n', encoding='utf-8')
    print(f'wrote {OUT.relative_to(ROOT)}')


if __name__ == '__main__':
    main()
