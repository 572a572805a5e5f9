"""Benchmark to the servo pin: target -> first PWM pulse of the new width, firmware in simavr.

The Uno firmware (hardware/) runs in simavr in real time (``SimavrBoard``, speed 1). This
process drives it the way servo_driver does: a :class:`ServoLink` on the simulator's pty,
native protocol, 115200 baud, with the driver's shipped link settings (pulse commands capped
at control_rate_hz = 50 Hz, positions polled at 10 Hz, board watchdog 1 s, hold) and, as a
second setting, with the cap lifted to 1 kHz (what the serial line alone allows). Targets are
new widths on all six channels, each distinct from the one before, sent at 50 and 200 Hz.
Then the whole path as a user runs it: fabrik_ik and servo_driver as two processes with
arm.launch.py's parameters (config/arm_4dof.yaml, nothing overridden but the port), targets
published on target_point along target_matching.py's yaw sweep (2 us of yaw per target, under
the shipped 1.5 rad/s speed limit), each followed to the yaw servo's pin.

**Clocks.** A target's time ``t`` is the host's ``time.monotonic()`` just before
``set_pulses``. Pin edges are logged by the simulator in CPU cycles, i.e. simulated time.
The harness also logs, for every byte it feeds into the simulated UART, the host's
CLOCK_MONOTONIC at that moment (the same clock as ``time.monotonic()``). So each sample is
cut where both clocks are known, at the first byte of the frame that carries the target:

    latency = (host time that byte entered the simulation - t)                 [host clock]
            + (rising edge of the first new-width pulse - that byte's time)    [sim clock]

The first part is the host's share (link thread, its rate cap, the pty, and the simulator
picking the byte up: it runs ahead in bursts and sleeps to stay on the wall clock, which
adds up to about 1 ms here that a real USB-serial adapter replaces with its own latency).
The second part is what the serial line and the firmware take; in simulated time it is what
a real Uno would take whatever the host's speed. The simulator's speed against the host clock
(slope of the heartbeat pairs) and the scatter of that mapping are reported with the run: a
simulator that falls behind the wall clock holds bytes in the pty, which the host share
would wrongly absorb, so the simulator (which stands for hardware that no host load slows)
and the target publisher run SCHED_FIFO where the OS allows it (priority.py); the link's
thread, under test, keeps normal priority.

**Floor.** For the same target at the same phase of the board's frame: the frame's time on
the line (10 bits a byte at 115200 baud) plus the wait from the frame's end to the start of
that channel's next slot (the next rising edge of the channel, whatever its width) in the
20 ms frame; the target's simulated time is the first byte's simulated time minus the host
share above. The floor assumes no host delay; the firmware's own excess is measured apart:
the rise of the new width minus the first slot of that channel after the frame's actual end
(0 when the width is taken at the next slot; a frame, 20 ms, when it is taken one frame
late, counted as a missed slot). The simulated line runs at the UART's real rate
(hardware/sim/fabrik_servo_sim.c corrects simavr 1.6's byte time).

Latency minus floor, per sample, is a whole number of frames: 0 when the new width went out
in the floor's own slot, 20 ms when the host's delay or the firmware's reaction let that slot
pass. ``behind_floor_share`` is the share of samples a frame or more behind; it compares runs
whose phases differ (at 50 Hz the targets and the board's 50 Hz frame hardly drift against
each other, so one run's floor sits wherever its phase started).

**Frame.** ``--frames 20,5`` (the default) measures the link settings in the board's default
20 ms slotted frame and again in a 5 ms fast frame (SET_FRAME: all six pins rise together every
5 ms, for digital servos), current firmware only. A missed slot is then a missed 5 ms frame.

**Firmware.** ``--before REV`` builds the firmware of a git revision into
bench/out/firmware_<rev>/ (``git archive``), so an older firmware is measured in the same run.

**Nodes.** servo_driver sends each step with the time it takes at the speed limit, and the
board interpolates over it; a slot that starts within that move goes out with an interpolated
width, so in the node runs a "missed slot" is mostly interpolation, not the firmware's
reaction time.

A target whose widths never reach a pin (a newer target's frame was sent first, or reached
the board before that channel's slot) is counted as superseded on that pin, not timed.
Samples are per (target, channel); ``whole pose`` is the last of the six channels.

    .venv/bin/python bench/pin_latency.py [--quick] [--before REV] [--no-nodes]
                                          [--frames 20,5] [--results bench/results.json]

With ``--results`` the runs measured replace those of the same key in the file; the others
stay (so ``--frames 5 --no-nodes`` adds the fast-frame rows alone).

Prints a table and writes bench/out/pin_latency.json.
"""

import argparse
from dataclasses import dataclass
import json
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time
from typing import Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ros_env import isolate_ros, ROOT  # noqa: E402

isolate_ros()

from geometry_msgs.msg import PointStamped  # noqa: E402
from node_processes import Layout, NodeProcess, start_nodes  # noqa: E402
from priority import boost_current_thread, boost_process, restore_current_thread  # noqa: E402
import rclpy  # noqa: E402
from target_matching import YawSweep  # noqa: E402
import yaml  # noqa: E402

from fabrik_ros.boardsim.simavr_board import (  # noqa: E402
    build_hardware,
    CHANNELS,
    FIRMWARE_ELF,
    FRAME_PERIOD_S,
    LineByte,
    Pulse,
    SimavrBoard,
)
from fabrik_ros.kinematics import load_arm  # noqa: E402
from fabrik_ros.servo_io.link import ServoLink  # noqa: E402
from fabrik_ros.servo_io.link_options import LinkOptions  # noqa: E402
from fabrik_ros.servo_io.protocols.native import (  # noqa: E402
    Command,
    CRC_SIZE,
    HEADER_SIZE,
    SYNC,
    WatchdogAction,
)

OUT = Path(__file__).parent / 'out'
BAUD = 115200
BITS_PER_BYTE = 10
RATES_HZ = (50, 200)
WIDTH_MATCH_US = 1.0
# The firmware's UART runs at 16 MHz / (8 * 17) = 117647 baud (2.1 % fast), 10 bits a byte.
BYTE_S_AT_BOARD = 10 * 8 * 17 / 16e6
WAIT_S = 10.0
# The firmware applies a received frame well within this; later pulses are a newer target's.
SUPERSEDE_MARGIN_S = 0.002
# A new width that appears over half a frame after the slot following its frame waited a
# whole frame.
MISSED_SHARE_OF_FRAME = 0.5
SLOTTED_FRAME_MS = 20             # the board's default frame; any other is a SET_FRAME period
FRAMES_MS = (SLOTTED_FRAME_MS, 5)
# The link capped at 50 Hz (how servo_driver opened it until it sent on arrival: a what-if
# kept for comparison), and uncapped. The nodes' path opens it as the driver does today, with
# no cap but the line's (LinkOptions.max_rate_hz = 0).
LINK_SETTINGS = {
    'capped_50hz': LinkOptions(max_rate_hz=50.0, poll_hz=10.0),
    'uncapped': LinkOptions(max_rate_hz=1000.0, poll_hz=10.0),
}
DRIVER_LINK_MAX_RATE_HZ = LinkOptions().max_rate_hz
DRIVER_WATCHDOG = (1.0, WatchdogAction.HOLD)
# The nodes as arm.launch.py starts them: its arm file, no parameter but the board's port.
CONFIG = ROOT / 'config' / 'arm_4dof.yaml'
LOG_DIR = ROOT / 'build' / 'bench'
NODES_START_S = 30.0
# 2 us of yaw per target keeps the sweep under the shipped 1.5 rad/s speed limit at 200 Hz,
# so each target's yaw code reaches the board unshaped.
SWEEP_STEP_US = 2


@dataclass(frozen=True)
class Budget:
    """How long each measured stream runs [s] (simulated time is about the same)."""

    seconds: float = 20.0
    warmup_s: float = 0.5


QUICK = Budget(seconds=2.0, warmup_s=0.2)


@dataclass(frozen=True)
class SentFrame:
    """A SET_PULSES frame as the board received it."""

    first: LineByte
    last: LineByte
    size: int
    pulses_us: tuple[int, ...]
    end_s: float    # simulated time its last byte was in the UART [s]


def target_widths(index: int) -> tuple[int, ...]:
    """Return target ``index``'s pulse widths: distinct from the previous target's on every pin.

    Steps of 131 us (mod 1000) never repeat within 1000 targets, so a width on a pin names its
    target unambiguously among the targets that could still be in flight.
    """
    return tuple(1000 + (index * 131 + channel * 97) % 1000 for channel in range(CHANNELS))


def set_pulses_frames(received: list[LineByte]) -> list[SentFrame]:
    """Split the bytes the board received into frames; return the SET_PULSES ones."""
    frames = []
    ends_s = line_ends_s(received)
    values = bytes(b.value for b in received)
    start = values.find(SYNC)
    while start >= 0 and start + HEADER_SIZE <= len(values):
        size = HEADER_SIZE + values[start + 2] + CRC_SIZE
        if start + size > len(values):
            break
        if values[start + 4] == Command.SET_PULSES:
            payload = values[start + HEADER_SIZE:start + size - CRC_SIZE]
            pulses = tuple(int.from_bytes(payload[i:i + 2], 'little')
                           for i in range(2, len(payload), 2))
            frames.append(SentFrame(received[start], received[start + size - 1], size, pulses,
                                    ends_s[start + size - 1]))
        start = values.find(SYNC, start + size)
    return frames


def line_ends_s(received: list[LineByte]) -> list[float]:
    """Return when each of ``received`` was through the board's UART [s, simulated].

    The log has when each byte entered the simulated UART's queue (several at once when the
    host wrote them together); each then takes one byte time on the line after the one before.
    """
    ends, end_s = [], 0.0
    for byte in received:
        end_s = max(end_s, byte.time_s) + BYTE_S_AT_BOARD
        ends.append(end_s)
    return ends


def clock_figures(pairs: list[tuple[float, float]]) -> dict:
    """Return the simulation's speed against the host clock and the scatter of the mapping."""
    sim = np.array([p[0] for p in pairs])
    host = np.array([p[1] for p in pairs])
    slope, offset = np.polyfit(host - host[0], sim, 1)
    residual_ms = (sim - (slope * (host - host[0]) + offset)) * 1e3
    return {'sim_s_per_host_s': round(float(slope), 5),
            'mapping_scatter_p99_ms': round(float(np.percentile(np.abs(residual_ms), 99)), 3),
            'mapping_scatter_max_ms': round(float(np.max(np.abs(residual_ms))), 3)}


def pulses_by_channel(pulses: list[Pulse]) -> list[list[Pulse]]:
    """Return each channel's pulses in order of their rising edges."""
    by_channel: list[list[Pulse]] = [[] for _ in range(CHANNELS)]
    for pulse in pulses:
        by_channel[pulse.channel].append(pulse)
    for channel in by_channel:
        channel.sort(key=lambda p: p.rise_s)
    return by_channel


def match_by_widths(sent_at: list[float], frames: list[SentFrame]) -> list[tuple[int, SentFrame]]:
    """Return (target index, frame) for each frame that carries a target of :func:`stream`."""
    targets_of: dict[tuple[int, ...], list[int]] = {}
    for k in range(len(sent_at)):
        targets_of.setdefault(target_widths(k), []).append(k)
    carrying = []
    for frame in frames:
        # The newest target with these widths sent before the frame began (widths recur
        # every 1000 targets; warm-up frames precede every measured target).
        ks = [k for k in targets_of.get(frame.pulses_us, ()) if sent_at[k] <= frame.first.host_s]
        if ks:
            carrying.append((max(ks), frame))
    return carrying


def analyse(sent_at: list[float], carrying: list[tuple[int, SentFrame]], pulses: list[Pulse],
            channels: tuple[int, ...] = tuple(range(CHANNELS))) -> dict:
    """Follow each carried target to ``channels``' pins; return the samples [s] and counts."""
    by_channel = pulses_by_channel(pulses)
    rises = [np.array([p.rise_s for p in channel]) for channel in by_channel]
    latency, host_share, floor, whole_pose, excess, over = [], [], [], [], [], []
    superseded = 0
    for n, (k, frame) in enumerate(carrying):
        host_s = frame.first.host_s - sent_at[k]
        target_sim_s = frame.first.time_s - host_s
        line_s = frame.size * BITS_PER_BYTE / BAUD
        arrival_s = target_sim_s + line_s
        # A pulse of these widths after the next frame has long been applied is not this one.
        until_s = (carrying[n + 1][1].last.time_s + SUPERSEDE_MARGIN_S if n + 1 < len(carrying)
                   else float('inf'))
        reached = []
        for channel in channels:
            rise = first_pulse_of(by_channel[channel], rises[channel], frame.last.time_s,
                                  until_s, frame.pulses_us[channel])
            if rise is None:
                superseded += 1
                continue
            grid = rises[channel]
            slot = grid[np.searchsorted(grid, arrival_s)]
            sample = host_s + rise - frame.first.time_s
            latency.append(sample)
            host_share.append(host_s)
            floor.append(slot - target_sim_s)
            over.append(sample - (slot - target_sim_s))
            # The firmware's own share: from the slot after the frame's actual arrival.
            actual_slot = grid[np.searchsorted(grid, frame.end_s)]
            excess.append(rise - actual_slot)
            reached.append(sample)
        if len(reached) == CHANNELS:
            whole_pose.append(max(reached))
    return {'latency': latency, 'host_share': host_share, 'floor': floor,
            'whole_pose': whole_pose, 'firmware_excess': excess, 'over_floor': over,
            'targets': len(sent_at),
            'carried': len(carrying), 'superseded_on_pin': superseded}


def first_pulse_of(pulses: list[Pulse], rises: np.ndarray, after_s: float, until_s: float,
                   width_us: int) -> Optional[float]:
    """Return the rise of the first pulse ``width_us`` wide rising in [after_s, until_s).

    None: a newer target's frame took the pin first (superseded on that pin).
    """
    start = int(np.searchsorted(rises, after_s))
    stop = int(np.searchsorted(rises, until_s))
    for pulse in pulses[start:stop]:
        if abs(pulse.width_us - width_us) <= WIDTH_MATCH_US:
            return pulse.rise_s
    return None


def percentiles_ms(samples: list[float]) -> dict:
    """Return p50 / p99 / max of ``samples`` [s] in milliseconds."""
    if not samples:
        return {'p50_ms': None, 'p99_ms': None, 'max_ms': None, 'samples': 0}
    values = np.array(samples) * 1e3
    return {'p50_ms': round(float(np.percentile(values, 50)), 3),
            'p99_ms': round(float(np.percentile(values, 99)), 3),
            'max_ms': round(float(np.max(values)), 3), 'samples': len(samples)}


def stream(link: ServoLink, rate_hz: float, seconds: float, first_index: int) -> list[float]:
    """Send targets ``first_index``... at ``rate_hz`` for ``seconds``; return their send times."""
    period = 1.0 / rate_hz
    sent_at = []
    start = time.monotonic()
    for n in range(round(seconds * rate_hz)):
        due = start + n * period
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        sent_at.append(time.monotonic())
        link.set_pulses(target_widths(first_index + n))
    return sent_at


def measure(elf: Path, options: LinkOptions, rate_hz: float, budget: Budget,
            frame_ms: int = SLOTTED_FRAME_MS) -> dict:
    """Run one firmware, link setting, frame and rate; return the figures."""
    with SimavrBoard(elf=elf) as board, ServoLink(board.port, channels=CHANNELS,
                                                  options=options) as link:
        assert board.pid is not None
        realtime = boost_process(board.pid)
        link.wait_ready(WAIT_S)
        link.set_watchdog(*DRIVER_WATCHDOG)
        if frame_ms != SLOTTED_FRAME_MS:
            link.set_frame(frame_ms * 1000)
        link.set_pulses(target_widths(-1))
        link.enable([True] * CHANNELS)
        link.sync(WAIT_S)
        # The publisher is the instrument, like the simulated board: real time where allowed.
        # The link's thread, under test, was started before and keeps normal priority.
        boost_current_thread()
        try:
            stream(link, rate_hz, budget.warmup_s, 500)
            sent_at = stream(link, rate_hz, budget.seconds, 0)
        finally:
            restore_current_thread()
        link.sync(WAIT_S)
        end_s = board.now_s
        board.wait_sim_time(end_s + 2 * FRAME_PERIOD_S + 0.005, WAIT_S)
        received, pulses, clock = board.received, board.pulses(), board.clock()
    found = analyse(sent_at, match_by_widths(sent_at, set_pulses_frames(received)), pulses)
    return {**figures(found, rate_hz, options.max_rate_hz, clock, realtime, frame_ms),
            'budget_s': budget.seconds, 'loadavg_before': os.getloadavg()}


def figures(found: dict, rate_hz: float, link_max_rate_hz: float,
            clock: list[tuple[float, float]], realtime: bool,
            frame_ms: int = SLOTTED_FRAME_MS) -> dict:
    """Return one run's figures from :func:`analyse`'s samples."""
    missed_s = MISSED_SHARE_OF_FRAME * frame_ms / 1000
    return {
        'rate_hz': rate_hz, 'link_max_rate_hz': link_max_rate_hz, 'frame_ms': frame_ms,
        'targets': found['targets'], 'frames_carrying_a_target': found['carried'],
        'superseded_on_pin': found['superseded_on_pin'],
        'latency': percentiles_ms(found['latency']),
        'floor': percentiles_ms(found['floor']),
        # Latency minus floor is a whole number of frames: 0 = the floor's own slot.
        'behind_floor_share': round(sum(1 for o in found['over_floor'] if o > missed_s)
                                    / max(1, len(found['over_floor'])), 4),
        'host_share': percentiles_ms(found['host_share']),
        'whole_pose': percentiles_ms(found['whole_pose']),
        'firmware_excess': percentiles_ms(found['firmware_excess']),
        'missed_slots': sum(1 for e in found['firmware_excess'] if e > missed_s),
        'simulation': clock_figures(clock), 'instrument_realtime': realtime,
    }


class TargetPublisher:
    """Publish the yaw sweep's targets on target_point, as a user's node would."""

    def __init__(self, sweep: YawSweep, frame_id: str) -> None:
        self.sweep = sweep
        self.points = sweep.points()
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('pin_latency_bench', context=self.context)
        self.publisher = self.node.create_publisher(PointStamped, 'target_point', 10)
        self.message = PointStamped()
        self.message.header.frame_id = frame_id

    def publish(self, index: int) -> float:
        """Publish target ``index``; return the time just before publishing."""
        x, y, z = self.points[index % self.sweep.period]
        self.message.point.x, self.message.point.y, self.message.point.z = x, y, z
        stamp = time.monotonic()
        self.publisher.publish(self.message)
        return stamp

    def stream(self, rate_hz: float, seconds: float, first_index: int) -> list[float]:
        """Publish targets ``first_index``... at ``rate_hz``; return their publish times."""
        period = 1.0 / rate_hz
        stamps = []
        start = time.monotonic()
        for n in range(round(seconds * rate_hz)):
            pause = start + n * period - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            stamps.append(self.publish(first_index + n))
        return stamps

    def close(self) -> None:
        """Destroy the node and its context."""
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def match_by_yaw(stamps: list[float], first_index: int, frames: list[SentFrame],
                 sweep: YawSweep) -> list[tuple[int, SentFrame]]:
    """Return (offset into ``stamps``, frame) for each frame carrying a new sweep target.

    As target_matching.match_frames: the newest target published before the frame's first
    byte reached the board, with the frame's yaw pulse, newer than the previous match.
    """
    by_pulse: dict[int, list[int]] = {}
    for offset in range(len(stamps)):
        by_pulse.setdefault(sweep.pulse(first_index + offset), []).append(offset)
    carrying: list[tuple[int, SentFrame]] = []
    for frame in frames:
        offsets = [o for o in by_pulse.get(frame.pulses_us[sweep.channel], ())
                   if stamps[o] <= frame.first.host_s]
        if offsets and (not carrying or max(offsets) > carrying[-1][0]):
            carrying.append((max(offsets), frame))
    return carrying


def wait_for(condition, timeout_s: float, what: str, processes: list[NodeProcess]) -> None:
    """Poll ``condition`` until true; fail naming ``what`` if a node died or time ran out."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        dead = [p.name for p in processes if not p.alive()]
        if dead or time.monotonic() > deadline:
            logs = ', '.join(str(p.log) for p in processes)
            raise RuntimeError(f'timed out waiting for {what} (exited: {dead}); see {logs}')
        time.sleep(0.02)


def shipped_parameters(directory: Path, port: str) -> Path:
    """Write the only parameters the nodes get besides the arm file; return the file."""
    params = directory / 'pin_latency_params.yaml'
    params.write_text(yaml.safe_dump({
        'fabrik_ik': {'ros__parameters': {'interactive_target': False}},
        'servo_driver': {'ros__parameters': {'port': port}}}), encoding='utf-8')
    return params


def stream_through_nodes(board: SimavrBoard, publisher: TargetPublisher, rate_hz: float,
                         budget: Budget, processes: list[NodeProcess]) -> tuple[list[float], int]:
    """Wait for the pipeline, then stream; return the publish times and the first index."""
    sweep = publisher.sweep

    def first_target_on_pin() -> bool:
        publisher.publish(0)
        pulses = board.pulses(sweep.channel, board.now_s - 2 * FRAME_PERIOD_S)
        return bool(pulses) and round(pulses[-1].width_us) == sweep.pulse(0)

    wait_for(first_target_on_pin, NODES_START_S, 'the first target on the yaw pin', processes)
    boost_current_thread()
    try:
        publisher.stream(rate_hz, budget.warmup_s, 0)
        first = round(budget.warmup_s * rate_hz)
        return publisher.stream(rate_hz, budget.seconds, first), first
    finally:
        restore_current_thread()


def measure_nodes(elf: Path, rate_hz: float, budget: Budget) -> dict:
    """Run fabrik_ik + servo_driver at their shipped defaults on the simulated Uno."""
    arm = load_arm(CONFIG)
    sweep = YawSweep(arm, step_us=SWEEP_STEP_US)
    sweep.check()
    with SimavrBoard(elf=elf) as board, tempfile.TemporaryDirectory() as tmp:
        assert board.pid is not None
        realtime = boost_process(board.pid)
        processes = start_nodes(Layout.TWO_PROCESS, CONFIG,
                                shipped_parameters(Path(tmp), board.port), LOG_DIR)
        publisher = TargetPublisher(sweep, arm.base_frame)
        try:
            stamps, first = stream_through_nodes(board, publisher, rate_hz, budget, processes)
            board.wait_sim_time(board.now_s + 0.2, WAIT_S)
        finally:
            publisher.close()
            for process in processes:
                process.stop()
        received, pulses, clock = board.received, board.pulses(), board.clock()
    carrying = match_by_yaw(stamps, first, set_pulses_frames(received), sweep)
    found = analyse(stamps, carrying, pulses, channels=(sweep.channel,))
    return {**figures(found, rate_hz, DRIVER_LINK_MAX_RATE_HZ, clock, realtime),
            'channel': sweep.channel, 'sweep_step_us': SWEEP_STEP_US}


def build_revision(revision: str) -> Path:
    """Build the firmware of git ``revision`` into bench/out/firmware_<rev>/; return its ELF."""
    rev = subprocess.run(['git', '-C', str(ROOT), 'rev-parse', '--short', revision],
                         capture_output=True, text=True, check=True).stdout.strip()
    tree = OUT / f'firmware_{rev}'
    elf = tree / 'hardware' / 'build' / 'fabrik_servo_bridge.elf'
    if not elf.exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(['git', '-C', str(ROOT), 'archive', rev, 'hardware'],
                                 capture_output=True, check=True).stdout
        subprocess.run(['tar', '-x', '-C', str(tree)], input=archive, check=True)
        subprocess.run(['make', '-C', str(tree / 'hardware'), 'firmware'], check=True,
                       capture_output=True)
    return elf


def run(quick: bool = False, before: Optional[str] = None,
        rates_hz: tuple[int, ...] = RATES_HZ, nodes: bool = True,
        frames_ms: tuple[int, ...] = FRAMES_MS, budget: Optional[Budget] = None) -> dict:
    """Measure every firmware x frame x link setting x rate; return the results by key.

    Fast frames (any but the slotted 20 ms) run on the current firmware only: older ones
    have no SET_FRAME. ``budget`` (default: by ``quick``) overrides the time of each stream.
    """
    build_hardware('firmware', 'sim')
    if budget is None:
        budget = QUICK if quick else Budget()
    firmwares = {'current': FIRMWARE_ELF}
    if before is not None:
        firmwares[f'before_{before}'] = build_revision(before)
    results: dict = {'budget_s': budget.seconds, 'baud': BAUD, 'runs': {},
                     'loadavg_before': os.getloadavg()}
    for firmware, elf in firmwares.items():
        for frame_ms in frames_ms:
            if frame_ms != SLOTTED_FRAME_MS and firmware != 'current':
                continue
            suffix = '' if frame_ms == SLOTTED_FRAME_MS else f'_{frame_ms}ms_frame'
            for setting, options in LINK_SETTINGS.items():
                for rate in rates_hz:
                    key = f'{firmware}/{setting}{suffix}/{rate}hz'
                    results['runs'][key] = measure(elf, options, rate, budget, frame_ms)
                    print_row(key, results['runs'][key], flush=True)
    if nodes and SLOTTED_FRAME_MS in frames_ms:
        for rate in rates_hz:
            key = f'current/nodes_shipped_defaults/{rate}hz'
            results['runs'][key] = measure_nodes(FIRMWARE_ELF, rate, budget)
            print_row(key, results['runs'][key], flush=True)
    results['loadavg_after'] = os.getloadavg()
    return results


def _ms(value: Optional[float]) -> str:
    return '      -' if value is None else f'{value:7.2f}'


def print_row(key: str, run_result: dict, flush: bool = False) -> None:
    """Print one run: latency and floor p50 / p99, host share, whole pose, counts."""
    lat, flo, host = run_result['latency'], run_result['floor'], run_result['host_share']
    pose, sim = run_result['whole_pose'], run_result['simulation']
    print(f'{key:44s} pin p50 {_ms(lat["p50_ms"])} p99 {_ms(lat["p99_ms"])} | floor p50 '
          f'{_ms(flo["p50_ms"])} p99 {_ms(flo["p99_ms"])} | behind floor '
          f'{run_result["behind_floor_share"]:.1%} | host p50 {_ms(host["p50_ms"])} | '
          f'pose p99 {_ms(pose["p99_ms"])} | fw excess p99 '
          f'{_ms(run_result["firmware_excess"]["p99_ms"])} missed {run_result["missed_slots"]} '
          f'| n={lat["samples"]} superseded='
          f'{run_result["superseded_on_pin"]} | sim x{sim["sim_s_per_host_s"]:.4f} '
          f'scatter p99 {sim["mapping_scatter_p99_ms"]:.2f} ms', flush=flush)


def main() -> None:
    """Measure, print, write bench/out/pin_latency.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='tiny budget (smoke test)')
    parser.add_argument('--before', help='also measure the firmware of this git revision')
    parser.add_argument('--no-nodes', action='store_true',
                        help='skip the runs through fabrik_ik and servo_driver')
    parser.add_argument('--frames', default=','.join(str(f) for f in FRAMES_MS),
                        help='frame periods to measure [ms], comma-separated; '
                        f'{SLOTTED_FRAME_MS} = the default slotted frame')
    parser.add_argument('--out', type=Path, default=OUT / 'pin_latency.json')
    parser.add_argument('--results', type=Path,
                        help='also put the figures into this results.json (key pin_latency)')
    args = parser.parse_args()
    frames_ms = tuple(int(f) for f in args.frames.split(','))
    results = run(quick=args.quick, before=args.before, nodes=not args.no_nodes,
                  frames_ms=frames_ms)
    if args.results is not None:
        merged = json.loads(args.results.read_text(encoding='utf-8'))
        old = merged.get('pin_latency', {})
        runs = {**old.get('runs', {}), **results['runs']}
        # The run-wide fields (budget, load) describe the runs kept unless all were replaced;
        # each new run carries its own budget and load too.
        base = results if set(old.get('runs', {})) <= set(results['runs']) else old
        merged['pin_latency'] = {**base, 'runs': runs}
        args.results.write_text(json.dumps(merged, indent=2) + '\n', encoding='utf-8')
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + '\n', encoding='utf-8')
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
