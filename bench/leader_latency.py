"""Benchmark leader -> follower: a leader servo moved by hand, the follower's goal on the wire.

Two simulated Feetech buses of six STS3215 (SimBoard on ptys, the line modelled at 1 Mbaud)
run in this process; leader_arm reads one at the shipped feedback rate, servo_driver drives the
other, each its own process with ``config/so101.yaml`` (as teleop.launch.py starts them). This
script moves the leader's elbow by hand, a small step every ``--period`` s (alternately up and
down), and notes when. The follower's bus notes when the first byte of each sync write of
goals arrives; a step's latency is the first sync write after it whose elbow goal moved toward
the new position, minus the moment of the step: the leader's feedback read, leader_arm's look,
DDS, servo_driver and its bus link.

    .venv/bin/python bench/leader_latency.py [--steps 40] [--period 0.15]

Prints one line of figures (median, p90, p99, max) and writes bench/out/leader_latency.json.
"""

import argparse
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ros_env import isolate_ros, ROOT  # noqa: E402

isolate_ros()

from bus_link_latency import goal_arrivals, StampedBus  # noqa: E402

from fabrik_ros.boardsim import SimBoard  # noqa: E402
from fabrik_ros.kinematics import load_arm  # noqa: E402
from fabrik_ros.servo_io import Protocol  # noqa: E402
from fabrik_ros.servo_io.bus_line import DEFAULT_FEEDBACK_HZ  # noqa: E402
from fabrik_ros.servo_io.protocols.feetech import FeetechCodec  # noqa: E402

CONFIG = ROOT / 'config' / 'so101.yaml'
OUT = Path(__file__).parent / 'out' / 'leader_latency.json'
LOG_DIR = ROOT / 'build' / 'bench'
ELBOW_ID = 3
STEP_COUNTS = 40                # 3.5 degrees: a hand's small move, well inside the limits
START_TIMEOUT_S = 30.0
BAUD = 1_000_000


def _command(module: str, name: str) -> list[str]:
    """Return the command line of an executable, run by this Python from this checkout."""
    return [sys.executable, '-c', f'import sys; sys.argv[0] = {name!r}; '
            f'from {module} import main; main()']


def start_nodes(follower: str, leader: str, folder: Path) -> list[subprocess.Popen]:
    """Start servo_driver on ``follower`` and leader_arm on ``leader``, logs in build/bench."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    common = ['--ros-args', '--params-file', str(CONFIG),
              '-r', f'__ns:=/leader_bench_{os.getpid()}']
    runs = [(_command('fabrik_ros.nodes.driver_node', 'servo_driver'),
             ['-p', f'port:={follower}', '-p', 'protocol:=feetech', '-p',
              'home_move_time_s:=0.5'], 'servo_driver'),
            (_command('fabrik_ros.nodes.leader_node', 'leader_arm'),
             ['-p', f'port:={leader}'], 'leader_arm')]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    processes = []
    for command, own, name in runs:
        log = open(LOG_DIR / f'leader_latency_{name}.log', 'w', encoding='utf-8')
        processes.append(subprocess.Popen([*command, *common, *own], stdout=log,
                                          stderr=subprocess.STDOUT, env=env))
    return processes


def elbow_goals(chunks: list[tuple[float, bytes]]) -> list[tuple[float, int]]:
    """Return (first byte [s], elbow goal) of every sync write of goals the host wrote."""
    return goal_arrivals(chunks, FeetechCodec(), BAUD, ELBOW_ID)


def wait(condition, what: str, processes: list[subprocess.Popen]) -> None:
    """Return once ``condition()`` holds; exit naming ``what`` after START_TIMEOUT_S."""
    deadline = time.monotonic() + START_TIMEOUT_S
    tick = threading.Event()
    while not condition():
        if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
            raise SystemExit(f'leader_latency: no {what} (logs in {LOG_DIR})')
        tick.wait(0.01)


def measure(steps: int, period_s: float, folder: Path) -> dict:
    """Return the figures of ``steps`` hand steps of the leader's elbow."""
    follower = StampedBus(Protocol.FEETECH, channels=6,
                          link_path=str(folder / 'ttyFOLLOW')).start()
    leader = SimBoard(Protocol.FEETECH, channels=6, link_path=str(folder / 'ttyLEADER')).start()
    processes = start_nodes(follower.path, leader.path, folder)
    try:
        hand = leader.firmware
        centre = hand.present_positions(time.monotonic())[ELBOW_ID - 1]
        wait(lambda: not any(hand.torques()), 'limp leader', processes)

        def goal() -> float:
            return follower.firmware.servo(ELBOW_ID).goal_target()
        hand.move_by_hand(ELBOW_ID, centre + STEP_COUNTS, time.monotonic())
        wait(lambda: abs(goal() - (centre + STEP_COUNTS)) <= 2, 'follower following',
             processes)
        follower.chunks.clear()
        settled = (time.monotonic(), round(goal()))     # the goal the follower holds now
        moves = []
        tick = threading.Event()
        start = time.monotonic()
        for index in range(steps):
            tick.wait(max(0.0, start + index * period_s - time.monotonic()))
            target = centre + (STEP_COUNTS if index % 2 else -STEP_COUNTS)
            at = time.monotonic()
            hand.move_by_hand(ELBOW_ID, target, at)
            moves.append((at, target))
        tick.wait(period_s)
    finally:
        for process in processes:
            process.send_signal(2)
        for process in processes:
            try:
                process.wait(10.0)
            except subprocess.TimeoutExpired:
                process.kill()
        leader.stop()
        follower.stop()
    return _figures(moves, [settled, *elbow_goals(list(follower.chunks))])


def _figures(moves: list[tuple[float, int]], goals: list[tuple[float, int]]) -> dict:
    """Return the latency of each move: its first goal on the wire moved toward it."""
    latencies = []
    for at, target in moves:
        before = [g for s, g in goals if s < at]
        if not before:
            continue
        last = before[-1]
        sign = 1 if target > last else -1
        after = next((s for s, g in goals if s >= at and (g - last) * sign > 0), None)
        if after is not None:
            latencies.append(after - at)
    latencies.sort()
    if not latencies:
        raise SystemExit("leader_latency: no step reached the follower's wire")

    def percentile(p: float) -> float:
        return 1e3 * latencies[min(len(latencies) - 1, int(p * len(latencies)))]
    return {'steps': len(moves), 'seen': len(latencies), 'feedback_hz': DEFAULT_FEEDBACK_HZ,
            'median_ms': 1e3 * statistics.median(latencies), 'p90_ms': percentile(0.90),
            'p99_ms': percentile(0.99), 'max_ms': 1e3 * latencies[-1]}


def main() -> None:
    """Measure, print and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--steps', type=int, default=40, help='hand steps of the leader')
    parser.add_argument('--period', type=float, default=0.15, help='time between steps [s]')
    args = parser.parse_args()
    load_arm(CONFIG)        # a config that does not load stops here, before any process
    with tempfile.TemporaryDirectory() as folder:
        figures = measure(args.steps, args.period, Path(folder))
    print(f'leader -> follower (leader read at {figures["feedback_hz"]:g} Hz, SO-101, Feetech '
          f"1 Mbaud): hand step -> first byte of the follower's sync write, median "
          f'{figures["median_ms"]:.1f} ms, p90 {figures["p90_ms"]:.1f} ms, p99 '
          f'{figures["p99_ms"]:.1f} ms, max {figures["max_ms"]:.1f} ms '
          f'({figures["seen"]} of {figures["steps"]} steps)')
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(figures, indent=2) + '\n')
    print(f'wrote {OUT}')


if __name__ == '__main__':
    main()
