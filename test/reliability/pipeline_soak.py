"""The whole pipeline under a 1 kHz target stream, measured from outside.

fabrik_arm (fabrik_ik and servo_driver in one process, as deployed) → pty → TappedBoard. The
targets sweep the base yaw along a triangle wave, so the yaw of a joint command or of a base
servo pulse tells which target it answers, and when that target was published.
"""

from dataclasses import dataclass, field
import math
import os
from pathlib import Path
import subprocess
import sys
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Point, PointStamped
import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor

from bench.priority import boost_current_thread
from fabrik_ros.kinematics import load_arm
from test.reliability.board_process import BoardProcess
from test.reliability.results import percentile

RADIUS_M, HEIGHT_M = 0.15, 0.10
YAW_MIN, YAW_STEP = -1.0, 0.0005       # triangle: 4000 targets up from -1 rad, 4000 down
RAMP = 4000


def target_yaw(index: int) -> float:
    """Return the base yaw of target ``index`` [rad]: an 8 s triangle wave at 1 kHz."""
    phase = index % (2 * RAMP)
    return YAW_MIN + YAW_STEP * (phase if phase <= RAMP else 2 * RAMP - phase)


def index_of(yaw: float, latest: int, slack: int = 0) -> int:
    """Return the index of the target with base yaw ``yaw`` published last up to ``latest``.

    :param slack: how many targets past ``latest`` a rounded yaw may point (a 1 µs servo
        pulse spans about five targets of yaw); the result is never past ``latest``.
    :returns: -1 if no target up to ``latest + slack`` has that yaw.
    """
    up = min(max(round((yaw - YAW_MIN) / YAW_STEP), 0), RAMP)
    base = latest - latest % (2 * RAMP)
    candidates = [base + k * 2 * RAMP + phase for k in (-1, 0, 1)
                  for phase in (up, 2 * RAMP - up)]
    found = max((i for i in candidates if 0 <= i <= latest + slack), default=-1)
    return min(found, latest)


@dataclass
class SoakRecord:
    """Everything measured, as arrays over time [s since the stream started]."""

    published: int = 0
    publish_at: np.ndarray = field(default_factory=lambda: np.zeros(0))
    board_latency: list[tuple[float, float]] = field(default_factory=list)  # (t, s)
    rss_mb: list[tuple[float, float]] = field(default_factory=list)         # (t, MB)
    board_stall_s: float = 0.0      # longest pause of the simulated board's thread
    instrument_realtime: bool = False  # board and target source ran at SCHED_FIFO
    final_base_us: int = 0          # the base servo's target at the end
    expected_base_us: int = 0       # the base servo pulse of the last target published
    diagnostics: dict[str, dict[str, str]] = field(default_factory=dict)
    worst_level: dict[str, int] = field(default_factory=dict)


class TargetStream(threading.Thread):
    """Publish target_point at ``rate_hz`` for ``duration_s`` from a context of its own."""

    def __init__(self, namespace: str, rate_hz: float, duration_s: float) -> None:
        super().__init__(name='1 kHz targets', daemon=True)
        self.rate_hz = rate_hz
        self.count = int(rate_hz * duration_s)
        self.publish_at = np.full(self.count, np.nan)
        self.started_at = 0.0
        self.published = 0
        self.stop = threading.Event()
        self.realtime = False
        self._context = rclpy.Context()
        rclpy.init(context=self._context)
        self._node = rclpy.create_node('soak_targets', namespace=namespace,
                                       context=self._context)
        self._publisher = self._node.create_publisher(PointStamped, 'target_point', 10)

    def wait_subscribed(self, timeout_s: float) -> None:
        """Wait until fabrik_ik subscribes target_point."""
        deadline = time.monotonic() + timeout_s
        while not self._publisher.get_subscription_count():
            if time.monotonic() > deadline:
                raise AssertionError('fabrik_arm did not subscribe target_point')
            self.stop.wait(0.05)

    def run(self) -> None:
        """Publish on an absolute schedule (no drift), catching up at most one period late."""
        period = 1.0 / self.rate_hz
        self.realtime = boost_current_thread()
        self.started_at = time.monotonic()
        for index in range(self.count):
            due = self.started_at + index * period
            if self.stop.wait(max(0.0, due - time.monotonic())):
                break
            yaw = target_yaw(index)
            msg = PointStamped(point=Point(x=RADIUS_M * math.cos(yaw),
                                           y=RADIUS_M * math.sin(yaw), z=HEIGHT_M))
            self.publish_at[index] = time.monotonic()
            self._publisher.publish(msg)
            self.published = index + 1

    def close(self) -> None:
        """Stop, and release the context."""
        self.stop.set()
        self.join(5.0)
        self._node.destroy_node()
        rclpy.shutdown(context=self._context)


def start_fabrik_arm(config: Path, namespace: str, port: str, log_path: Path) -> subprocess.Popen:
    """Start fabrik_arm (both nodes, one process) on ``port``; stderr goes to ``log_path``."""
    command = [sys.executable, '-m', 'fabrik_ros.nodes.arm_composition', '--ros-args',
               '--params-file', str(config), '-r', f'__ns:={namespace}',
               '-p', f'port:={port}', '-p', 'interactive_target:=false',
               '-p', 'max_speed_rad_s:=[20.0, 20.0, 20.0, 20.0]',
               '-p', 'home_move_time_s:=0.2', '-p', 'diagnostics_period_s:=1.0']
    return subprocess.Popen(command, stdout=log_path.open('w'), stderr=subprocess.STDOUT,
                            env=dict(os.environ))


def rss_mb(pid: int) -> float:
    """Return the resident set size of process ``pid`` [MB]."""
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024.0
    return math.nan


def run_soak(config: Path, tmp_path: Path, *, duration_s: float,
             rate_hz: float = 1000.0) -> SoakRecord:
    """Run the 1 kHz stream for ``duration_s`` through fabrik_arm and a TappedBoard."""
    namespace = f'/soak_{os.getpid()}'
    arm = load_arm(config)
    board = BoardProcess(str(tmp_path / 'ttySOAK')).start()
    process = start_fabrik_arm(config, namespace, board.link_path, tmp_path / 'fabrik_arm.log')
    record = SoakRecord()
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    watcher = rclpy.create_node('soak_watcher', namespace=namespace, context=context)
    executor.add_node(watcher)
    stream = TargetStream(namespace, rate_hz, duration_s)
    yaw_channel = arm.servo_map.calibrations[0]
    try:
        def on_diagnostics(msg: DiagnosticArray) -> None:
            for status in msg.status:
                if status.name.startswith(namespace.lstrip('/') + '/'):
                    node = status.name.split(':')[0].rsplit('/', 1)[-1]
                    record.diagnostics[node] = {kv.key: kv.value for kv in status.values}
                    level = int.from_bytes(status.level, 'little')
                    if stream.started_at:
                        record.worst_level[node] = max(record.worst_level.get(node, 0), level)

        watcher.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 50)
        stream.wait_subscribed(30.0)
        _wait_board_moving(board, executor, 30.0)
        stream.start()
        next_rss = 0.0
        while stream.is_alive():
            executor.spin_once(timeout_sec=0.01)
            now = time.monotonic()
            if now >= next_rss:
                assert process.poll() is None, 'fabrik_arm died; see fabrik_arm.log'
                record.rss_mb.append((now - stream.started_at, rss_mb(process.pid)))
                next_rss = now + 1.0
                _board_latency(board, stream, yaw_channel, record)
        end = time.monotonic() + 3.0
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        _board_latency(board, stream, yaw_channel, record)
        record.published = stream.published
        record.publish_at = stream.publish_at
        last_yaw = target_yaw(stream.published - 1)
        record.expected_base_us = round(yaw_channel.pulse_us(last_yaw))
    finally:
        stream.close()
        watcher.destroy_node()
        executor.shutdown()
        rclpy.shutdown(context=context)
        process.terminate()
        process.wait(10.0)
        final = board.stop()
    record.final_base_us = final['targets'][0]
    record.board_stall_s = final['longest_stall_s']
    record.instrument_realtime = final['realtime'] and stream.realtime
    return record


def _wait_board_moving(board: BoardProcess, executor, timeout_s: float) -> None:
    """Wait for fabrik_arm's safe start to reach the board (its first move)."""
    deadline = time.monotonic() + timeout_s
    while not board.moves():
        if time.monotonic() > deadline:
            raise AssertionError('fabrik_arm never commanded the board')
        executor.spin_once(timeout_sec=0.05)


def _board_latency(board: BoardProcess, stream: TargetStream, yaw_channel,
                   record: SoakRecord) -> None:
    """Add the latency of each new base-servo move: its time minus its target's publication.

    The pulse has 1 µs steps (about 5 targets of yaw here), so each latency is good to ±3 ms.
    """
    slack = 8
    published = stream.publish_at
    for at_s, pulse_us in board.moves():
        if at_s < stream.started_at:
            continue
        latest = int(np.searchsorted(published[:stream.published], at_s)) - 1
        index = index_of(yaw_channel.angle_rad(float(pulse_us)), latest, slack)
        if index >= 0:
            record.board_latency.append((at_s - stream.started_at, at_s - published[index]))


def window_p99(samples: list[tuple[float, float]], start_s: float, end_s: float) -> float:
    """Return the p99 of the values sampled in [start_s, end_s)."""
    return percentile([v for t, v in samples if start_s <= t < end_s], 0.99)
