"""Benchmark end to end: target_point → fabrik_ik → servo_driver → simulated board or servo bus.

This process publishes PointStamped targets at a fixed rate and hosts the simulated board
(each protocol in turn, on a pty, modelling the serial line, 115200 baud unless ``--baud``;
the bus protocols drive the SO-101's six simulated servos, ``config/so101.yaml``, at 1 Mbaud).
Both run at real-time priority where allowed (priority.py), so that a busy machine delays the
nodes under test, not the measuring instrument. The nodes run as their own processes: the two
executables, or both composed in one, ``fabrik_arm`` (``--layout``), with the parameters
arm.launch.py gives them and the shipped defaults for the rest (``--tuned``: the former
benchmark tuning, a 500 Hz driver tick and a 100 rad/s speed limit).

Latency is the time from just before ``publish()`` to the arrival of the first byte of the
command (native SET_PULSES, SSC-32U group move, Maestro Set Target, the bus's sync write of
goals) that carries the target's pulses or counts (target_matching.py explains how commands are
matched to targets). Per rate: median, p99, max; the p99 over every target of the wait until a
frame carried it or a newer one (``any p99``); targets carried by a frame (sent) or superseded
before one (coalesced); CPU per process. A longer run at 500 Hz then tracks memory (RSS) and
whether latency creeps up (a growing backlog). With ``--probe`` the benchmark also listens to
joint_commands, to split the latency at the IK node's output (the probe adds a subscriber and a
spinning thread, so headline figures come from runs without it). Prints a table and writes
bench/out/e2e_latency.json.

    .venv/bin/python bench/e2e_latency.py [--quick] [--layout two_process composed]
        [--protocol native ssc32 maestro feetech dynamixel] [--tuned]
"""

import argparse
from collections.abc import Iterator
import contextlib
from dataclasses import dataclass, field, replace
import gc
import json
import os
from pathlib import Path
import sys
import tempfile
import threading
import time
from typing import Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ros_env import isolate_ros, ROOT  # noqa: E402

isolate_ros()

from board_timing import frames_from_chunks, pulse_of, TimedBoard  # noqa: E402
from geometry_msgs.msg import PointStamped  # noqa: E402
from node_processes import (  # noqa: E402
    DriverSettings,
    Layout,
    NodeProcess,
    parameter_file,
    start_nodes,
)
from priority import boost_current_thread, restore_current_thread  # noqa: E402
import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from target_matching import match_frames, staleness, YawSweep  # noqa: E402

from fabrik_ros.kinematics import load_arm  # noqa: E402
from fabrik_ros.nodes.executor import executor_kind, EXECUTOR_VARIABLE  # noqa: E402
from fabrik_ros.servo_io import BUS_PROTOCOLS, Protocol, PWM_PROTOCOLS  # noqa: E402

CONFIG = ROOT / 'config' / 'arm_4dof.yaml'
BUS_CONFIG = ROOT / 'config' / 'so101.yaml'     # Feetech STS3215 on the arm, ids 1-6
OUT = Path(__file__).parent / 'out' / 'e2e_latency.json'
LOG_DIR = ROOT / 'build' / 'bench'
BAUD = 115200
BUS_BAUD = 1_000_000
PROBE_SPIN_S = 0.01
RATES_HZ = (20, 50, 200, 500)
SOAK_RATE_HZ = 500
START_TIMEOUT_S = 30.0
DRAIN_S = 0.2
SETTLED_S = 0.2       # no new board target for this long: the arm has arrived


@dataclass(frozen=True)
class Budget:
    """How long each part runs [s]."""

    seconds_per_rate: float = 5.0
    warmup_s: float = 0.5
    soak_s: float = 60.0


QUICK = Budget(seconds_per_rate=0.25, warmup_s=0.05, soak_s=0.5)


@dataclass
class Segment:
    """What one stream of targets did: latencies and counts, CPU per process."""

    rate_hz: float
    published: int
    achieved_rate_hz: float
    latency_s: np.ndarray
    sent: int
    coalesced: int
    lost: int
    unmatched_frames: int
    cpu_percent: dict[str, float]
    staleness_s: np.ndarray = field(default_factory=lambda: np.array([]))
    rss_kib: dict[str, list[int]] = field(default_factory=dict)
    ik_stage_s: np.ndarray = field(default_factory=lambda: np.array([]))
    driver_stage_s: np.ndarray = field(default_factory=lambda: np.array([]))

    def figures(self) -> dict:
        """Return the JSON figures of this segment (latencies summarised) [ms, %]."""
        ms = 1e3 * self.latency_s
        has = len(ms) > 0
        quarter = max(1, len(ms) // 4)
        return {
            'rate_hz': self.rate_hz, 'published': self.published,
            'achieved_rate_hz': self.achieved_rate_hz,
            'p50_ms': float(np.median(ms)) if has else None,
            'p90_ms': float(np.percentile(ms, 90)) if has else None,
            'p99_ms': float(np.percentile(ms, 99)) if has else None,
            'max_ms': float(np.max(ms)) if has else None,
            # every moving target: until a frame carried it or a newer one
            'any_p50_ms': _percentile_ms(self.staleness_s, 50),
            'any_p99_ms': _percentile_ms(self.staleness_s, 99),
            'sent': self.sent, 'coalesced': self.coalesced, 'lost': self.lost,
            'unmatched_frames': self.unmatched_frames,
            # later minus earlier median: a growing queue shows up as a positive drift
            'drift_ms': (float(np.median(ms[-quarter:]) - np.median(ms[:quarter]))
                         if has else None),
            'cpu_percent': self.cpu_percent,
            **self._ik_stage(),
        }

    def _ik_stage(self) -> dict:
        """Return the probe's figures: target published → joint_commands heard here [ms].

        And the rest, per target heard: joint_commands heard → first byte of the frame
        (servo_driver, the link and the line). Two processes only: the probe hears about when
        servo_driver does; composed, servo_driver has the command before any other process.
        """
        if not len(self.ik_stage_s):
            return {}
        ms, rest = 1e3 * self.ik_stage_s, 1e3 * self.driver_stage_s
        return {'ik_stage_p50_ms': float(np.median(ms)),
                'ik_stage_p99_ms': float(np.percentile(ms, 99)),
                'driver_stage_p50_ms': _percentile_ms(self.driver_stage_s, 50),
                'driver_stage_p99_ms': float(np.percentile(rest, 99)) if len(rest) else None}


def _percentile_ms(seconds: np.ndarray, percent: float) -> Optional[float]:
    return float(1e3 * np.percentile(seconds, percent)) if len(seconds) else None


class Rig:
    """The board, the node processes and the target publisher of one layout."""

    def __init__(self, layout: Layout, directory: Path, *, protocol: Protocol = Protocol.NATIVE,
                 tuned: bool = False, baud: int = BAUD, probe: bool = False,
                 realtime: bool = True, profile_dir: Optional[Path] = None,
                 niceness: int = 0, bob_m: float = 0.0) -> None:
        config = BUS_CONFIG if protocol.is_bus else CONFIG
        self.arm = load_arm(config)
        self.sweep = YawSweep(self.arm, bob_m=bob_m)
        self.sweep.check()
        self.points = self.sweep.points()
        self.protocol = protocol
        servos = (*self.arm.servo_map.calibrations, *self.arm.servo_map.aux)
        channels = max(s.channel for s in servos) if protocol.is_bus else len(self.arm.joints)
        self.board = TimedBoard(protocol, channels=channels,
                                link_path=str(directory / 'ttyBENCH'), baud=baud,
                                realtime=realtime).start()
        self.baud = baud
        make = DriverSettings.tuned if tuned else DriverSettings
        settings = make(self.board.path, len(self.arm.joints), protocol=protocol.value,
                        baud=baud)
        self.processes: list[NodeProcess] = start_nodes(
            layout, config, parameter_file(settings, directory), LOG_DIR,
            profile_dir=profile_dir, niceness=niceness)
        # after the nodes are spawned: they keep normal priority
        self.publisher_realtime = realtime and boost_current_thread()
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('e2e_bench', context=self.context)
        self.publisher = self.node.create_publisher(PointStamped, 'target_point', 10)
        self.message = PointStamped()
        self.message.header.frame_id = self.arm.base_frame
        self.index = 0
        self.heard: list[tuple[float, float]] = []
        self._spinning = threading.Event()
        self._spinner = None
        if probe:
            self.node.create_subscription(JointState, 'joint_commands', self._on_command, 100)
            self._spinner = threading.Thread(target=self._spin, name='probe', daemon=True)
            self._spinning.set()
            self._spinner.start()

    def _on_command(self, msg: JointState) -> None:
        self.heard.append((time.monotonic(), msg.position[self.sweep.joint]))

    def _spin(self) -> None:
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self.node)
        while self._spinning.is_set():
            executor.spin_once(timeout_sec=PROBE_SPIN_S)
        executor.remove_node(self.node)
        executor.shutdown()

    def take_heard(self) -> list[tuple[float, int]]:
        """Return the joint_commands heard since the last call as (time, yaw pulse)."""
        heard, self.heard = self.heard, []
        home = list(self.arm.home)
        pulses = []
        for stamp, yaw in heard:
            home[self.sweep.joint] = yaw
            pulse = self.arm.servo_map.to_units(home).units[self.sweep.joint]
            pulses.append((stamp, round(float(pulse))))
        return pulses

    def close(self) -> dict[str, Optional[int]]:
        """Stop the nodes, the publisher and the board; return each process's exit code."""
        restore_current_thread()
        codes = {p.name: p.stop() for p in self.processes}
        if self._spinner is not None:
            self._spinning.clear()
            self._spinner.join()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self.board.stop()
        return codes

    def publish(self) -> float:
        """Publish the next target of the sweep; return the time just before publishing."""
        x, y, z = self.points[self.index % self.sweep.period]
        self.message.point.x, self.message.point.y, self.message.point.z = x, y, z
        self.index += 1
        stamp = time.monotonic()
        self.publisher.publish(self.message)
        return stamp

    def wait_ready(self) -> None:
        """Wait until the nodes are up and a target travels all the way to the board."""
        deadline = time.monotonic() + START_TIMEOUT_S
        channel = self.sweep.channel
        while self.publisher.get_subscription_count() < 1 or not self.board.holds(channel):
            self._check_alive(deadline, 'the nodes to start and the driver to enable servos')
            time.sleep(0.05)
        while True:
            self.index = 0
            self.publish()
            if self.board.wait_until(lambda b: b.goals()[channel] == self.sweep.pulse(0),
                                     0.1):
                break
            self._check_alive(deadline, 'a first target to reach the board')
        # The pitch joints come from the home pose at the speed limit (about a second): a
        # step of theirs would hold up the yaw's in the first measured targets.
        settled = self.board.goals()
        while self.board.wait_until(lambda b, before=settled: b.goals() != before,
                                    SETTLED_S):
            settled = self.board.goals()
            self._check_alive(deadline, 'the arm to arrive at the first target')

    def _check_alive(self, deadline: float, what: str) -> None:
        dead = [p.name for p in self.processes if not p.alive()]
        if dead or time.monotonic() > deadline:
            logs = ', '.join(str(p.log) for p in self.processes)
            raise RuntimeError(f'timed out waiting for {what} (exited: {dead}); see {logs}')

    def stream(self, rate_hz: float, seconds: float) -> list[float]:
        """Publish targets at ``rate_hz`` for ``seconds``; return their publish times."""
        period = 1.0 / rate_hz
        stamps = []
        start = time.monotonic()
        for step in range(round(rate_hz * seconds)):
            delay = start + step * period - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            stamps.append(self.publish())
        return stamps

    def cpu_s(self) -> dict[str, float]:
        """Return the CPU time used so far by each node process and by this one [s]."""
        used = {p.name: p.cpu_s() for p in self.processes}
        used['bench (publisher + board)'] = time.process_time()
        return used


def run_segment(rig: Rig, rate_hz: float, seconds: float, warmup_s: float,
                sample_rss: bool = False) -> Segment:
    """Stream targets at ``rate_hz``; measure only those after the warm-up."""
    rig.board.take_chunks()
    rig.take_heard()
    first = rig.index
    sampler = RssSampler(rig.processes) if sample_rss else None
    cpu_before, wall_before = rig.cpu_s(), time.monotonic()
    with collector_held():
        stamps = rig.stream(rate_hz, warmup_s + seconds)
    wall = time.monotonic() - wall_before
    cpu_after = rig.cpu_s()
    rss = sampler.stop() if sampler else {}
    time.sleep(DRAIN_S)
    frames = [(f.first_byte_s, pulse)
              for f in frames_from_chunks(rig.board.take_chunks(), rig.baud, rig.protocol)
              if (pulse := pulse_of(f.frame, rig.sweep.channel)) is not None]
    match = match_frames(frames, stamps, first, rig.sweep)
    measured_from = first + round(rate_hz * warmup_s)
    heard = match_frames(rig.take_heard(), stamps, first, rig.sweep).latency_s
    carried = sorted(i for i in match.latency_s if i >= measured_from)
    last_carried = carried[-1] if carried else measured_from - 1
    moving = [i for i in range(measured_from, rig.index) if not rig.sweep.is_hold(i)]
    cpu = {name: 100.0 * (cpu_after[name] - cpu_before[name]) / wall for name in cpu_after}
    return Segment(
        rate_hz=rate_hz, published=rig.index - measured_from,
        achieved_rate_hz=(len(stamps) - 1) / (stamps[-1] - stamps[0]),
        latency_s=np.array([match.latency_s[i] for i in carried]), sent=len(carried),
        coalesced=sum(1 for i in moving if i <= last_carried) - len(carried),
        lost=sum(1 for i in moving if i > last_carried), unmatched_frames=match.unmatched_frames,
        staleness_s=np.array(staleness(match, stamps, first, rig.sweep, measured_from)),
        cpu_percent=cpu, rss_kib=rss,
        ik_stage_s=np.array([t for i, t in sorted(heard.items()) if i >= measured_from]),
        driver_stage_s=np.array([match.latency_s[i] - heard[i] for i in carried if i in heard]))


@contextlib.contextmanager
def collector_held() -> Iterator[None]:
    """Hold this process's garbage collector off while the targets stream.

    The board's stamps and the publisher's share the process: a collection here (up to
    milliseconds, started by whichever thread allocates) would delay a first byte's stamp and
    count against the nodes. What the stream keeps is collected after it.
    """
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class RssSampler:
    """Read each process's resident memory once a second from a thread until stopped."""

    def __init__(self, processes: list[NodeProcess], period_s: float = 1.0) -> None:
        self._processes = processes
        self._period_s = period_s
        self._stop = threading.Event()
        self.samples: dict[str, list[int]] = {p.name: [] for p in processes}
        self._sample()
        self._thread = threading.Thread(target=self._run, name='rss sampler', daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        for process in self._processes:
            self.samples[process.name].append(process.rss_kib())

    def _run(self) -> None:
        while not self._stop.wait(self._period_s):
            self._sample()

    def stop(self) -> dict[str, list[int]]:
        """Stop sampling, take a last sample and return all of them [KiB]."""
        self._stop.set()
        self._thread.join()
        self._sample()
        return self.samples


def measure_layout(layout: Layout, budget: Budget, *, protocol: Protocol = Protocol.NATIVE,
                   rates_hz=RATES_HZ, tuned: bool = False, baud: int = BAUD,
                   probe: bool = False, realtime: bool = True,
                   profile_dir: Optional[Path] = None, niceness: int = 0,
                   bob_m: float = 0.0) -> dict:
    """Run every rate and the soak on one layout and protocol; return figures and latencies.

    :param tuned: run the driver with the former benchmark tuning instead of the defaults
    :param bob_m: the sweep's vertical wave (target_matching.YawSweep): > 0 moves every joint
    """
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as directory:
        rig = Rig(layout, Path(directory), protocol=protocol, tuned=tuned, baud=baud,
                  probe=probe, realtime=realtime, profile_dir=profile_dir, niceness=niceness,
                  bob_m=bob_m)
        try:
            rig.wait_ready()
            segments = {str(rate): run_segment(rig, rate, budget.seconds_per_rate,
                                               budget.warmup_s) for rate in rates_hz}
            soak = run_segment(rig, SOAK_RATE_HZ, budget.soak_s, budget.warmup_s,
                               sample_rss=True)
            instrument_realtime = rig.publisher_realtime and rig.board.realtime
        finally:
            exit_codes = rig.close()
    config = BUS_CONFIG if protocol.is_bus else CONFIG
    return {'layout': layout.value, 'protocol': protocol.value,
            'config': config.relative_to(ROOT).as_posix(),
            'settings': 'tuned' if tuned else 'shipped defaults', 'baud': baud, 'bob_m': bob_m,
            'executor': executor_kind().value, 'node_niceness': niceness,
            'instrument_realtime': instrument_realtime,
            # other processes compete for the cores: the 1-minute load average around the run
            'loadavg_1min': [load_before, os.getloadavg()[0]],
            'rates': {rate: s.figures() for rate, s in segments.items()},
            'soak': {**soak.figures(), 'seconds': budget.soak_s,
                     'rss_kib': soak.rss_kib,
                     'rss_growth_kib': {name: samples[-1] - samples[0]
                                        for name, samples in soak.rss_kib.items()}},
            'exit_codes': exit_codes,
            'latency_ms': {rate: (1e3 * s.latency_s).tolist() for rate, s in segments.items()}}


def print_layout(result: dict) -> None:
    """Print one layout's figures as a table."""
    load = '–'.join(f'{x:.1f}' for x in result['loadavg_1min'])
    print(f'end to end, {result["layout"]}, {result["protocol"]}, {result["config"]} '
          f'({result["settings"]}, '
          f'{result["baud"]} baud, {result["executor"]} executor, nice '
          f'{result["node_niceness"]}; load '
          f'average {load}), target published → first byte of its frame')
    print(f'{"rate":>6} {"p50 ms":>7} {"p99 ms":>7} {"max ms":>7} {"any p99":>7} {"sent":>6} '
          f'{"coalesc":>7} {"lost":>4} {"drift":>6}  CPU % per process')
    rows = [(rate, figures) for rate, figures in result['rates'].items()]
    rows.append((f'{SOAK_RATE_HZ}*', result['soak']))
    for rate, f in rows:
        cpu = ', '.join(f'{name} {value:.0f}' for name, value in f['cpu_percent'].items())
        print(f'{rate:>6} {_num(f["p50_ms"])} {_num(f["p99_ms"])} {_num(f["max_ms"])} '
              f'{_num(f["any_p99_ms"])} {f["sent"]:6d} {f["coalesced"]:7d} {f["lost"]:4d} '
              f'{_num(f["drift_ms"], 6)}  {cpu}')
    for rate, f in rows:
        if 'ik_stage_p50_ms' in f:
            rest = (f'; heard → first byte: p50 {_num(f["driver_stage_p50_ms"], 0)} ms, p99 '
                    f'{_num(f["driver_stage_p99_ms"], 0)} ms'
                    if result['layout'] == Layout.TWO_PROCESS.value else '')
            print(f'{rate:>6} probe: target → joint_commands heard: p50 '
                  f'{f["ik_stage_p50_ms"]:.2f} ms, p99 {f["ik_stage_p99_ms"]:.2f} ms{rest}')
    growth = ', '.join(f'{name} {kib / 1024:+.1f} MiB'
                       for name, kib in result['soak']['rss_growth_kib'].items())
    print(f'* soak {result["soak"]["seconds"]:.0f} s at {SOAK_RATE_HZ} Hz; RSS growth: {growth}')
    print('any p99: every moving target, until a frame carried it or a newer one')


def _num(value: Optional[float], width: int = 7) -> str:
    return f'{value:{width}.2f}' if value is not None else f'{"-":>{width}}'


def main() -> None:
    """Measure the chosen layouts, print them and write the JSON file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='tiny budget (smoke test)')
    parser.add_argument('--seconds', type=float, help='measured seconds per rate')
    parser.add_argument('--soak', type=float, help='seconds of the 500 Hz soak')
    shipped = [Layout.TWO_PROCESS.value, Layout.COMPOSED.value]
    parser.add_argument('--layout', nargs='+', choices=shipped, default=shipped)
    protocols = [p.value for p in PWM_PROTOCOLS + BUS_PROTOCOLS]
    parser.add_argument('--protocol', nargs='+', choices=protocols, default=protocols)
    parser.add_argument('--rates', nargs='+', type=int, default=RATES_HZ,
                        help='target rates [Hz]')
    parser.add_argument('--executor', choices=['single', 'events'],
                        help="the nodes' executor (default: as shipped, the EventsExecutor "
                             'where rclpy has it)')
    parser.add_argument('--nice', type=int, default=0,
                        help='nice value added to the node processes (e.g. -10)')
    parser.add_argument('--tuned', action='store_true',
                        help='the former tuning: 500 Hz driver tick, 100 rad/s speed limit')
    parser.add_argument('--baud', type=int, help='serial line speed [bit/s]; default '
                        f'{BAUD} (PWM boards), {BUS_BAUD} (servo buses)')
    parser.add_argument('--no-realtime', action='store_true',
                        help='run the board and publisher threads at normal priority')
    parser.add_argument('--bob', type=float, default=0.0,
                        help='vertical wave along the arc [m], so that every joint moves '
                             '(e.g. 0.01); default 0: only the yaw moves')
    parser.add_argument('--probe', action='store_true',
                        help='also time target → joint_commands (adds a subscriber)')
    parser.add_argument('--out', type=Path, default=OUT)
    parser.add_argument('--plots', type=Path,
                        help='also draw e2e_latency.png (native) and e2e_rates.png here')
    args = parser.parse_args()
    if args.executor:
        os.environ[EXECUTOR_VARIABLE] = args.executor      # read by the nodes at start
    budget = QUICK if args.quick else Budget()
    budget = replace(budget, seconds_per_rate=args.seconds or budget.seconds_per_rate,
                     soak_s=args.soak or budget.soak_s)
    results = {}
    for layout in map(Layout, args.layout):
        for protocol in map(Protocol, args.protocol):
            key = f'{layout.value}/{protocol.value}'
            results[key] = measure_layout(layout, budget, protocol=protocol,
                                          rates_hz=tuple(args.rates), tuned=args.tuned,
                                          baud=args.baud or (BUS_BAUD if protocol.is_bus
                                                             else BAUD), probe=args.probe,
                                          realtime=not args.no_realtime, niceness=args.nice,
                                          bob_m=args.bob)
            print_layout(results[key])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + '\n', encoding='utf-8')
    print(f'wrote {args.out}')
    if args.plots is not None:
        import plots  # matplotlib only when asked for
        native = {key: r for key, r in results.items() if r['protocol'] == 'native'}
        for path in (plots.latency_plot(native, args.plots / 'e2e_latency.png'),
                     plots.rates_plot(results, args.plots / 'e2e_rates.png')):
            print(f'drew {path}')


if __name__ == '__main__':
    main()
