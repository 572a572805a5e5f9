"""What the nodes cost the computer they run on: CPU idle and per target, resident memory.

Starts what ``sim.launch.py sim_device:=true`` starts, each as its own process: the simulated
board or bus on a pty (``python -m fabrik_ros.boardsim``, the ``sim_device`` executable),
fabrik_ik and servo_driver (bench/node_processes.py's parameters: the shipped arm file, the
port and protocol, the shipped defaults for everything else, baud included). Two cases: the
PWM board (config/arm_4dof.yaml, protocol native) and the Feetech bus (config/so101.yaml,
protocol feetech; the driver reads the servos' positions at its default feedback rate).

Each case, once a first target has moved the arm and it has settled, measures three windows
of ``--seconds``: idle (no targets), then targets at 20 Hz and at 50 Hz, published from this
process's own rclpy node. The targets are reachable points that differ from one to the next:
tool points of a smooth joint-space path (every joint but a roll swings about a bent pose,
within half the driver's default speed limit at 50 Hz), each checked to be reached by a seeded
solve before the run. Every rate streams for a lead-in before its window, so that the arm's
first move to the path is not counted.

CPU time is read from /proc/<pid>/stat (utime + stime, every thread of the process), memory
from /proc/<pid>/status (VmRSS, the largest seen at the end of a window), so nothing in the
nodes is changed to measure them. Per target, two figures:

- ``ms/target``, the goal's figure: CPU of the window at the rate minus the idle CPU of as long,
  divided by the targets published. It is everything streaming adds, at the rate the goal
  names, including work that comes with any stream rather than with each target (a moving
  arm's control ticks, a busier bus schedule): an upper bound of what one more target costs.
  Work that a change moves out of idle but not out of a stream (a timer that rests while the
  arm holds) raises it; the table's ``50 Hz %`` (CPU of the stream) shows the whole.
- ``slope``: the CPU rate's increase from 20 to 50 Hz over the 30 targets/s more, the figure
  issue 34's first table used. It leaves out what both streams pay alike, but it is the
  difference of two noisy rates: over short windows, noisier than the first.

To compare changes, ``--trees`` names source trees whose package the started processes import
(their PYTHONPATH; the arm files are this checkout's), measured in turn case by case, so that
what the shared host does meanwhile falls on all of them alike; ``--rounds`` repeats that and
the table shows medians. It puts the goals beside the figures (idle <= 1 % of a core, <= 0.3
ms per target at 50 Hz, per node); sim_device's row is for reference (it stands in for
hardware). JSON goes to bench/out/node_cpu.json.

Every process started here is this process's child in its process group, is asked to end on
SIGTERM should this process die first (PR_SET_PDEATHSIG), and is stopped in a ``finally``
that SIGINT, SIGTERM and SIGHUP also reach. The pids go to stderr
(``started <name> pid <n>``) and each window's start too, for a profiler to attach to.

    .venv/bin/python bench/node_cpu.py [--seconds 10] [--quick] [--cases pwm bus]
        [--trees ../main ../wt-nodes] [--rounds 3]
"""

import argparse
from collections.abc import Iterator, Sequence
import contextlib
from dataclasses import dataclass, field
import json
import math
import os
from pathlib import Path
import signal
from statistics import median
import subprocess
import sys
import tempfile
import time
from types import FrameType
from typing import Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ros_env import isolate_ros, ROOT  # noqa: E402

isolate_ros()

from geometry_msgs.msg import PointStamped  # noqa: E402
from node_processes import DriverSettings, NodeProcess, parameter_file  # noqa: E402
from parent_watch import ended_with  # noqa: E402
import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.signals import SignalHandlerOptions  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

import fabrik_ros  # noqa: E402
from fabrik_ros.kinematics import Arm, load_arm  # noqa: E402
from fabrik_ros.kinematics.description.joint import JointKind  # noqa: E402

OUT = Path(__file__).parent / 'out' / 'node_cpu.json'
NODE_MAIN = Path(__file__).resolve().parent / 'node_main.py'
NODES = (('fabrik_ik', 'fabrik_ros.nodes.ik_node:main'),
         ('servo_driver', 'fabrik_ros.nodes.driver_node:main'))
RATES_HZ = (20, 50)
GOAL_IDLE_PERCENT = 1.0
GOAL_MS_PER_TARGET = 0.3      # at 50 Hz
START_TIMEOUT_S = 60.0
REACHED_M = 0.003             # a joint_states pose this near the first target: it arrived
PATH_PERIOD_S = 8.0           # one cycle of the slowest joint's swing at 50 Hz
PATH_SPEED_RAD_S = 0.75       # fastest joint speed at 50 Hz: half servo_driver's default limit

@dataclass(frozen=True)
class Case:
    """One arm on one simulated device."""

    key: str
    label: str
    config: Path
    protocol: str


CASES = {
    'pwm': Case('pwm', 'PWM board, arm_4dof, native', ROOT / 'config' / 'arm_4dof.yaml',
                'native'),
    'bus': Case('bus', 'Feetech bus, so101, feetech', ROOT / 'config' / 'so101.yaml',
                'feetech'),
}


@dataclass(frozen=True)
class Budget:
    """How long each part runs [s]."""

    window_s: float = 10.0
    lead_in_s: float = 1.5
    settle_s: float = 2.0


QUICK = Budget(window_s=1.0, lead_in_s=0.3, settle_s=0.3)


@dataclass
class Window:
    """CPU used by each process over one window, and the targets published in it."""

    rate_hz: Optional[float]
    wall_s: float
    targets: int
    cpu_s: dict[str, float]
    rss_kib: dict[str, int]

    def percent(self, name: str) -> float:
        """Return the process's CPU over the window [% of a core]."""
        return 100.0 * self.cpu_s[name] / self.wall_s


@dataclass
class CaseResult:
    """The windows of one case and the figures derived from them."""

    case: Case
    idle: Window
    rates: dict[float, Window] = field(default_factory=dict)

    def ms_per_target(self, name: str, rate_hz: float) -> float:
        """Return the CPU the stream at ``rate_hz`` added to idle, per target [ms]."""
        window = self.rates[rate_hz]
        idle_rate = self.idle.cpu_s[name] / self.idle.wall_s
        return 1e3 * (window.cpu_s[name] - idle_rate * window.wall_s) / window.targets

    def slope_ms(self, name: str) -> float:
        """Return the CPU rate's rise from the slowest to the fastest rate per target/s [ms]."""
        low, high = self.rates[min(self.rates)], self.rates[max(self.rates)]
        cpu = high.cpu_s[name] / high.wall_s - low.cpu_s[name] / low.wall_s
        return 1e3 * cpu / (high.targets / high.wall_s - low.targets / low.wall_s)

    def rss_mib(self, name: str) -> float:
        """Return the largest resident memory seen at the end of a window [MiB]."""
        return max(w.rss_kib[name] for w in (self.idle, *self.rates.values())) / 1024

    def figures(self) -> dict:
        """Return the JSON figures of this case."""
        names = list(self.idle.cpu_s)
        return {
            'label': self.case.label, 'config': self.case.config.relative_to(ROOT).as_posix(),
            'protocol': self.case.protocol,
            'windows': [{'rate_hz': w.rate_hz, 'wall_s': w.wall_s, 'targets': w.targets,
                         'cpu_s': w.cpu_s, 'rss_kib': w.rss_kib}
                        for w in (self.idle, *self.rates.values())],
            'nodes': {name: {
                'idle_percent': self.idle.percent(name),
                'percent_at_hz': {str(r): w.percent(name) for r, w in self.rates.items()},
                'ms_per_target_at_hz': {str(r): self.ms_per_target(name, r)
                                        for r in self.rates},
                'slope_ms_per_target': self.slope_ms(name),
                'rss_mib': self.rss_mib(name),
            } for name in names},
        }


def summarise(rounds: list[CaseResult]) -> dict[str, dict]:
    """Return each process's figures over the rounds of one case and tree: the medians.

    Resident memory is the largest of any round; the goals are judged on the medians.
    """
    nodes = [result.figures()['nodes'] for result in rounds]
    summary = {}
    for name in nodes[0]:
        each = [figures[name] for figures in nodes]
        at_hz = {rate: median(f['ms_per_target_at_hz'][rate] for f in each)
                 for rate in each[0]['ms_per_target_at_hz']}
        idle = median(f['idle_percent'] for f in each)
        fastest = at_hz[max(at_hz, key=float)]
        device = name == 'sim_device'
        summary[name] = {
            'idle_percent': idle, 'ms_per_target_at_hz': at_hz,
            'slope_ms_per_target': median(f['slope_ms_per_target'] for f in each),
            'percent_at_fastest': median(f['percent_at_hz'][max(at_hz, key=float)]
                                         for f in each),
            'rss_mib': max(f['rss_mib'] for f in each),
            'meets_idle_goal': None if device else idle <= GOAL_IDLE_PERCENT,
            'meets_target_goal': None if device else fastest <= GOAL_MS_PER_TARGET,
        }
    return summary


def target_path(arm: Arm, rate_hz: float = 50.0, period_s: float = PATH_PERIOD_S
                ) -> list[tuple[float, float, float]]:
    """Return one period of reachable tool points along a smooth joint-space swing [m].

    Each joint but a roll swings about a pose bent a quarter of the way from home toward
    its farther limit, joint i at i + 1 times the slowest frequency and by a sixth of its
    range divided by i + 1 (so the point never repeats within the period); every point is
    checked to be reached by a solve seeded with the answer to the point before it, as
    fabrik_ik solves a stream. At ``rate_hz`` no joint moves faster than
    :data:`PATH_SPEED_RAD_S`, half servo_driver's default speed limit: the figures are those
    of targets the driver passes on, not of moves its speed limits spread out.

    :raises RuntimeError: if a point of the path is not reached or moves a joint too fast
        (the path needs changing)
    """
    steps = round(rate_hz * period_s)
    centre: list[float] = []
    swing: list[float] = []
    for joint in arm.joints:
        up, down = joint.max_rad - joint.home_rad, joint.home_rad - joint.min_rad
        moves = joint.kind is not JointKind.ROLL
        centre.append(joint.home_rad + (0.25 * up if up >= down else -0.25 * down)
                      if moves else joint.home_rad)
        swing.append((joint.max_rad - joint.min_rad) / 6 / (len(swing) + 1) if moves else 0.0)
    points, seed, previous = [], None, None
    for step in range(steps):
        phase = 2 * math.pi * step / steps
        angles = [c + s * math.sin((i + 1) * phase + i) for i, (c, s)
                  in enumerate(zip(centre, swing, strict=True))]
        angles = [min(max(a, j.min_rad), j.max_rad)
                  for a, j in zip(angles, arm.joints, strict=True)]
        point = arm.fk(angles)[-1]
        result = arm.ik(point, seed)
        if not result.reached:
            raise RuntimeError(f'the benchmark path of {arm.joint_names} misses point {step}')
        if previous is not None and rate_hz * max(
                abs(a - b) for a, b in zip(result.angles_rad, previous, strict=True)
        ) > PATH_SPEED_RAD_S:
            raise RuntimeError(f'the benchmark path of {arm.joint_names} moves a joint faster '
                               f'than {PATH_SPEED_RAD_S} rad/s at point {step}')
        seed = previous = result.angles_rad
        points.append((float(point[0]), float(point[1]), float(point[2])))
    return points


def start_process(name: str, command: Sequence[str], log: Path, tree: Path) -> NodeProcess:
    """Start ``command`` as a child in this process group, importing the package from ``tree``.

    Its output goes to ``log``.
    """
    with log.open('w', encoding='utf-8') as out:
        popen = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL,
                                 env={**os.environ, 'PYTHONPATH': str(tree)},
                                 preexec_fn=ended_with(os.getpid()))
    process = NodeProcess(name, popen, log)
    print(f'started {name} pid {process.pid}', file=sys.stderr, flush=True)
    return process


def sim_device_command(case: Case, arm: Arm, link: Path) -> list[str]:
    """Return the sim_device command sim.launch.py runs for the case's arm and protocol."""
    command = [sys.executable, '-m', 'fabrik_ros.boardsim', '--protocol', case.protocol,
               '--link', str(link)]
    if case.protocol in ('feetech', 'dynamixel'):     # the bus: ids 1 .. the highest
        servo_map = arm.servo_map
        command += ['--channels', str(max(s.channel for s in (*servo_map.calibrations,
                                                                *servo_map.aux)))]
    return command


def node_command(entry: str, config: Path, params: Path) -> list[str]:
    """Return the command that runs one node as bench/node_processes.py does."""
    return [sys.executable, str(NODE_MAIN), entry, '--ros-args', '--params-file', str(config),
            '--params-file', str(params)]


class _StoppedError(Exception):
    """A stop signal arrived."""


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into an exception (as SIGINT is), so that cleanups run."""
    def stop(number: int, frame: Optional[FrameType]) -> None:
        raise _StoppedError(signal.Signals(number).name)
    previous = {number: signal.signal(number, stop) for number in (signal.SIGTERM,
                                                                   signal.SIGHUP)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def stop_all(processes: list[NodeProcess]) -> dict[str, Optional[int]]:
    """Stop the processes, last started first, while no further signal interrupts it."""
    held = {number: signal.signal(number, signal.SIG_IGN)
            for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        return {p.name: p.stop() for p in reversed(processes)}
    finally:
        for number, handler in held.items():
            signal.signal(number, handler)


class Rig:
    """The processes of one case and this process's target publisher."""

    def __init__(self, case: Case, tree: Path, directory: Path, log_dir: Path) -> None:
        self.case = case
        self.tree = tree
        self.arm = load_arm(case.config)
        self.points = target_path(self.arm)
        self.index = 0
        self.processes: list[NodeProcess] = []
        self.context: Optional[rclpy.Context] = None
        self._log_dir = log_dir
        self._directory = directory

    def start(self) -> None:
        """Start sim_device and the nodes, then this process's rclpy node."""
        link = self._directory / 'ttyBENCH'
        device = start_process('sim_device', sim_device_command(self.case, self.arm, link),
                               self._log_dir / f'node_cpu_{self.case.key}_sim_device.log',
                               self.tree)
        self.processes.append(device)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not link.exists():
            self._check_alive(deadline, 'sim_device to open its pty')
            time.sleep(0.05)
        # baud 0: the protocol's default, as the launch files leave it
        settings = DriverSettings(str(link), len(self.arm.joints), protocol=self.case.protocol,
                                  baud=0)
        params = parameter_file(settings, self._directory)
        for name, entry in NODES:
            self.processes.append(start_process(
                name, node_command(entry, self.case.config, params),
                self._log_dir / f'node_cpu_{self.case.key}_{name}.log', self.tree))
        self.context = rclpy.Context()
        rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node('node_cpu_bench', context=self.context)
        self.publisher = self.node.create_publisher(PointStamped, 'target_point', 10)
        self.message = PointStamped()
        self.message.header.frame_id = self.arm.base_frame

    def close(self) -> dict[str, Optional[int]]:
        """Stop every process and this process's node; return the exit codes."""
        codes = stop_all(self.processes)
        if self.context is not None:
            self.node.destroy_node()
            rclpy.try_shutdown(context=self.context)
        return codes

    def publish(self) -> None:
        """Publish the next point of the path."""
        x, y, z = self.points[self.index % len(self.points)]
        self.message.point.x, self.message.point.y, self.message.point.z = x, y, z
        self.index += 1
        self.publisher.publish(self.message)

    def wait_ready(self, settle_s: float) -> None:
        """Wait until a first target has moved the arm there (joint_states says so)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while self.publisher.get_subscription_count() < 1:
            self._check_alive(deadline, 'fabrik_ik to subscribe to target_point')
            time.sleep(0.05)
        heard: list[JointState] = []
        subscription = self.node.create_subscription(JointState, 'joint_states', heard.append,
                                                     10)
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self.node)
        goal = np.array(self.points[0])
        names = self.arm.joint_names
        try:
            while True:
                self.index = 0
                self.publish()
                executor.spin_once(timeout_sec=0.1)
                if heard:
                    state = dict(zip(heard[-1].name, heard[-1].position, strict=True))
                    if all(n in state for n in names):
                        tool = self.arm.fk([state[n] for n in names])[-1]
                        if np.linalg.norm(tool - goal) < REACHED_M:
                            break
                    heard.clear()
                self._check_alive(deadline, 'the arm to reach a first target')
        finally:
            executor.remove_node(self.node)
            executor.shutdown()
            self.node.destroy_subscription(subscription)
        time.sleep(settle_s)

    def _check_alive(self, deadline: float, what: str) -> None:
        dead = [p.name for p in self.processes if not p.alive()]
        if dead or time.monotonic() > deadline:
            logs = ', '.join(str(p.log) for p in self.processes)
            raise RuntimeError(f'timed out waiting for {what} (exited: {dead}); see {logs}')

    def stream(self, rate_hz: float, seconds: float) -> int:
        """Publish targets at ``rate_hz`` for ``seconds``; return how many."""
        period = 1.0 / rate_hz
        count = round(rate_hz * seconds)
        start = time.monotonic()
        for step in range(count):
            delay = start + step * period - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.publish()
        # the window ends a period after the last target, so that its work falls inside
        delay = start + count * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        return count

    def window(self, rate_hz: Optional[float], seconds: float) -> Window:
        """Measure each process over ``seconds``, idle (rate None) or streaming at a rate."""
        what = 'idle' if rate_hz is None else f'{rate_hz:g} Hz'
        pids = ', '.join(f'{p.name} {p.pid}' for p in self.processes)
        print(f'window {self.case.key} {what} for {seconds:g} s ({pids})', file=sys.stderr,
              flush=True)
        before, started = {p.name: p.cpu_s() for p in self.processes}, time.monotonic()
        if rate_hz is None:
            time.sleep(seconds)
            targets = 0
        else:
            targets = self.stream(rate_hz, seconds)
        wall = time.monotonic() - started
        cpu = {p.name: p.cpu_s() - before[p.name] for p in self.processes}
        self._check_alive(math.inf, f'the {what} window to end')
        return Window(rate_hz, wall, targets, cpu, {p.name: p.rss_kib() for p in self.processes})


def measure_case(case: Case, tree: Path, budget: Budget, log_dir: Path
                 ) -> tuple[CaseResult, dict]:
    """Run one case's windows on ``tree``'s package; return them and the exit codes."""
    with tempfile.TemporaryDirectory(prefix='node_cpu_') as directory:
        rig = Rig(case, tree, Path(directory), log_dir)
        try:
            rig.start()
            rig.wait_ready(budget.settle_s)
            result = CaseResult(case, rig.window(None, budget.window_s))
            for rate in RATES_HZ:
                rig.stream(rate, budget.lead_in_s)
                result.rates[rate] = rig.window(rate, budget.window_s)
        finally:
            codes = rig.close()
    return result, codes


def _verdict(met: bool) -> str:
    return 'ok' if met else 'over'


@dataclass(frozen=True)
class Tree:
    """A source tree whose fabrik_ros the started processes import, and its label."""

    label: str
    path: Path
    commit: str


def print_table(summaries: list[tuple[Case, Tree, dict]], trees: list[Tree], budget: Budget,
                run: dict) -> None:
    """Print every case's figures per tree and process, the goals beside them."""
    load = '–'.join(f'{x:.1f}' for x in run['loadavg_1min'])
    print(f'node CPU at the shipped defaults; windows of {budget.window_s:g} s, median of '
          f'{run["rounds"]} round(s); load average {load}; CPU from /proc, % of one core')
    for tree in trees:
        print(f'  tree {tree.label}: {tree.path} ({tree.commit})')
    print(f'{"case":<28} {"tree":<4} {"process":<13} {"idle %":>7} {"goal":>9} '
          f'{"ms/target 20 Hz":>15} {"50 Hz":>6} {"goal":>10} {"slope ms":>8} {"50 Hz %":>7} '
          f'{"RSS MiB":>7}')
    for case, tree, summary in summaries:
        for name, f in summary.items():
            at = f['ms_per_target_at_hz']
            slow, fast = at[min(at, key=float)], at[max(at, key=float)]
            if name == 'sim_device':
                idle_goal, target_goal = '(device)', '(device)'
            else:
                idle_goal = f'<=1 {_verdict(f["meets_idle_goal"])}'
                target_goal = f'<=0.3 {_verdict(f["meets_target_goal"])}'
            print(f'{case.label:<28} {tree.label:<4} {name:<13} {f["idle_percent"]:7.2f} '
                  f'{idle_goal:>9} {slow:15.3f} {fast:6.3f} {target_goal:>10} '
                  f'{f["slope_ms_per_target"]:8.3f} {f["percent_at_fastest"]:7.2f} '
                  f'{f["rss_mib"]:7.1f}')
    print('ms/target: CPU of the stream minus idle CPU, per target; slope: 20 → 50 Hz')


def _package_commit(package: Path) -> str:
    try:
        done = subprocess.run(['git', '-C', str(package), 'rev-parse', '--short', 'HEAD'],
                              capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return 'no git'
    dirty = subprocess.run(['git', '-C', str(package), 'status', '--porcelain', '.'],
                           capture_output=True, text=True).stdout.strip()
    return done.stdout.strip() + ('+changes' if dirty else '')


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Measure the chosen cases on each tree, print the table and write the JSON file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, help='seconds per window (default 10)')
    parser.add_argument('--quick', action='store_true', help='a smoke run of a few seconds')
    parser.add_argument('--cases', nargs='+', choices=list(CASES), default=list(CASES))
    parser.add_argument('--trees', nargs='+', type=Path,
                        help='source trees whose fabrik_ros the nodes and sim_device import '
                             '(their PYTHONPATH), measured in turn, case by case (default: '
                             'the tree this process imports fabrik_ros from)')
    parser.add_argument('--rounds', type=int, default=1,
                        help='times every case and tree is measured; the table shows medians')
    parser.add_argument('--out', type=Path, default=OUT)
    parser.add_argument('--log-dir', type=Path, default=ROOT / 'build' / 'bench')
    args = parser.parse_args(argv)
    budget = QUICK if args.quick else Budget()
    if args.seconds:
        budget = Budget(args.seconds, budget.lead_in_s, budget.settle_s)
    args.log_dir.mkdir(parents=True, exist_ok=True)
    paths = args.trees or [Path(fabrik_ros.__file__).resolve().parent.parent]
    trees = [Tree(chr(ord('A') + i), path.resolve(), _package_commit(path))
             for i, path in enumerate(paths)]
    load_before = os.getloadavg()[0]
    rounds: dict[tuple[str, str], list[CaseResult]] = {}
    codes = []
    with stop_signals():
        try:
            for _ in range(args.rounds):
                for key in args.cases:
                    for tree in trees:
                        result, exit_codes = measure_case(CASES[key], tree.path, budget,
                                                          args.log_dir)
                        rounds.setdefault((key, tree.label), []).append(result)
                        codes.append({'case': key, 'tree': tree.label, **exit_codes})
        except _StoppedError as stopped:
            print(f'node_cpu: stopped by {stopped}', file=sys.stderr)
            return 1
    run = {'window_s': budget.window_s, 'rounds': args.rounds,
           'loadavg_1min': [load_before, os.getloadavg()[0]],
           'trees': [{'label': t.label, 'path': str(t.path), 'commit': t.commit} for t in trees]}
    summaries = [(CASES[key], tree, summarise(rounds[key, tree.label]))
                 for key in args.cases for tree in trees]
    print_table(summaries, trees, budget, run)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    results = [{'case': case.key, 'label': case.label, 'tree': tree.label, 'nodes': summary,
                'rounds': [r.figures() for r in rounds[case.key, tree.label]]}
               for case, tree, summary in summaries]
    args.out.write_text(json.dumps({**run, 'exit_codes': codes, 'results': results},
                                   indent=2) + '\n', encoding='utf-8')
    print(f'wrote {args.out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
