"""Benchmark: how long a target_point waits behind a big target_path in fabrik_ik.

fabrik_ik runs as its own process, as ``ros2 run`` starts it (config/arm_4dof.yaml, no
interactive marker). For each path size this process publishes a target_path of that many
poses (a line in front of the arm) and, as soon as fabrik_ik has acknowledged it, a
target_point off that line; the figure is the time from publishing the point to receiving
the joint_commands whose tool position is that point (within 1 mm). Before each round a
point away from both ends whatever the previous round left running.

Issue 22 (5): with the path prepared in the executor's thread, the point waited 10.4 s behind
a 100,000-pose path. A path above ``MAX_PATH_POSES`` is refused from its header; one within it
is prepared on a worker thread, so the figure should stay near a solve's latency for every
size.

    .venv/bin/python bench/path_stall.py [--quick] [--out bench/out/path_stall.json]

Prints a table and writes the JSON.
"""

import argparse
import json
import math
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from ros_env import isolate_ros, ROOT  # noqa: E402

isolate_ros()

from geometry_msgs.msg import PointStamped, PoseStamped  # noqa: E402
from nav_msgs.msg import Path as PathMsg  # noqa: E402
import rclpy  # noqa: E402
from rclpy.duration import Duration  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from fabrik_ros.kinematics import load_arm  # noqa: E402

CONFIG = ROOT / 'config' / 'arm_4dof.yaml'
OUT = BENCH / 'out'
SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 20_000)
ROUNDS = 5
QUICK_ROUNDS = 1
# The path: a line in front of the arm; the points: off it, on either side.
LINE_FROM, LINE_TO = (0.12, -0.06, 0.06), (0.12, 0.06, 0.06)
RESET = (0.13, 0.0, 0.10)
POINTS = ((0.15, 0.05, 0.12), (0.15, -0.05, 0.12))
TOOL_M = 1e-3
WAIT_S = 60.0


def line_path(poses: int) -> PathMsg:
    """Return a target_path of ``poses`` poses evenly along the line."""
    path = PathMsg()
    path.header.frame_id = 'base_link'
    items = []
    for i in range(poses):
        pose = PoseStamped()
        w = i / max(poses - 1, 1)
        position = pose.pose.position
        position.x, position.y, position.z = (a + (b - a) * w
                                              for a, b in zip(LINE_FROM, LINE_TO, strict=True))
        pose.pose.orientation.w = 1.0
        items.append(pose)
    path.poses = items
    return path


def point(xyz) -> PointStamped:
    """Return a target_point at ``xyz`` [m] in the base frame."""
    msg = PointStamped()
    msg.header.frame_id = 'base_link'
    msg.point.x, msg.point.y, msg.point.z = xyz
    return msg


class Probe:
    """The benchmark's node: publishes targets, times the joint_commands that answer them."""

    def __init__(self) -> None:
        self.arm = load_arm(CONFIG)
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('path_stall_bench', context=self.context)
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.received: list[tuple[float, tuple[float, ...]]] = []
        self.node.create_subscription(JointState, 'joint_commands', self._on_command, 100)
        self.points = self.node.create_publisher(PointStamped, 'target_point', 10)
        self.paths = self.node.create_publisher(PathMsg, 'target_path', 10)

    def _on_command(self, msg: JointState) -> None:
        self.received.append((time.monotonic(), tuple(msg.position)))

    def wait_for(self, condition, what: str) -> None:
        """Spin until ``condition()`` holds; fail naming ``what`` after WAIT_S."""
        deadline = time.monotonic() + WAIT_S
        while not condition():
            if time.monotonic() > deadline:
                raise RuntimeError(f'no {what} within {WAIT_S} s')
            self.executor.spin_once(timeout_sec=0.01)

    def answered_at(self, xyz, after_s: float):
        """Return when the first command after ``after_s`` put the tool at ``xyz``, or None."""
        for at_s, angles in self.received:
            if at_s >= after_s and math.dist(self.arm.fk(list(angles))[-1], xyz) < TOOL_M:
                return at_s
        return None

    def reach(self, xyz) -> float:
        """Publish a point and wait for its answer; return the latency [s]."""
        sent_s = time.monotonic()
        self.points.publish(point(xyz))
        self.wait_for(lambda: self.answered_at(xyz, sent_s) is not None, f'answer at {xyz}')
        return self.answered_at(xyz, sent_s) - sent_s

    def point_after_path(self, path: PathMsg, xyz) -> float:
        """Publish ``path``, then, once fabrik_ik has it, a point; return the point's latency [s].

        The point waits for the path's acknowledgement: a point sent while the megabytes of
        a big path are still on their way would be answered before the path arrives, and the
        stall would fall on the next target instead.
        """
        self.reach(RESET)
        self.paths.publish(path)
        if not self.paths.wait_for_all_acked(Duration(seconds=WAIT_S)):
            raise RuntimeError(f'fabrik_ik did not take the path within {WAIT_S} s')
        return self.reach(xyz)

    def close(self) -> None:
        """Destroy the node and the context."""
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def start_ik(log: Path) -> subprocess.Popen:
    """Start fabrik_ik as its own process, output into ``log``."""
    command = [sys.executable, str(BENCH / 'node_main.py'), 'fabrik_ros.nodes.ik_node:main',
               '--ros-args', '--params-file', str(CONFIG), '-p', 'interactive_target:=false']
    with log.open('w', encoding='utf-8') as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)


def run(*, quick: bool) -> dict:
    """Measure the point's latency after each path size; return the figures [ms]."""
    sizes, rounds = (QUICK_SIZES, QUICK_ROUNDS) if quick else (SIZES, ROUNDS)
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / 'fabrik_ik.log'
        process = start_ik(log)
        probe = Probe()
        try:
            probe.wait_for(lambda: probe.paths.get_subscription_count() > 0
                           and probe.points.get_subscription_count() > 0, 'fabrik_ik')
            probe.reach(RESET)
            idle_ms = [1e3 * probe.reach(POINTS[k % 2]) for k in range(rounds)]
            figures = {'no path': _summary(idle_ms)}
            for size in sizes:
                path = line_path(size)
                latencies = [1e3 * probe.point_after_path(path, POINTS[k % 2])
                             for k in range(rounds)]
                figures[f'{size} poses'] = _summary(latencies)
        finally:
            probe.close()
            process.send_signal(2)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()      # nothing this benchmark starts outlives it
                process.wait()
                raise
            lines = log.read_text(encoding='utf-8').splitlines()
    refusals = [line for line in lines if 'poses' in line and 'WARN' in line]
    return {'rounds': rounds, 'config': 'config/arm_4dof.yaml', 'latency_ms': figures,
            'refusal_lines': refusals}


def _summary(values: list[float]) -> dict:
    return {'median': round(statistics.median(values), 2), 'max': round(max(values), 2)}


def print_table(result: dict) -> None:
    """Print the point's latency after each path size."""
    print(f'\ntarget_point answered after a target_path ({result["rounds"]} rounds each)')
    print(f'{"published before the point":>28}  {"median ms":>10}  {"max ms":>10}')
    for label, figures in result['latency_ms'].items():
        print(f'{label:>28}  {figures["median"]:>10.1f}  {figures["max"]:>10.1f}')
    for line in result['refusal_lines']:
        print(f'fabrik_ik said: {line}')


def main() -> None:
    """Measure, print, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='one round, two sizes')
    parser.add_argument('--out', type=Path, default=OUT / 'path_stall.json')
    args = parser.parse_args()
    result = run(quick=args.quick)
    print_table(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + '\n', encoding='utf-8')
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
