"""Fault scenarios shared by the fast suite (few cycles) and the soak (many)."""

from dataclasses import dataclass, field
import random
import time

from fabrik_ros.servo_io import Protocol
from test.reliability.results import percentile
from test.reliability.rig import CALIBRATED_US, joint_state, Rig, sweep_pose
from test.reliability.tapped_board import host_frames, sent_pulses

STREAM_HZ = 200.0
RECONNECT_LIMIT_S = 1.0


class CommandStream:
    """Publish joint_commands at a fixed rate from the probe's executor (a 200 Hz stream).

    :param rig: whose probe publishes; the poses sweep slowly around its arm's home.
    """

    def __init__(self, rig: Rig, rate_hz: float = STREAM_HZ) -> None:
        self.rig = rig
        self.sent = 0
        self.last: tuple[float, ...] = tuple(rig.arm.home)
        self.started_s = time.monotonic()
        self._timer = rig.probe.create_timer(1.0 / rate_hz, self._tick)

    def _tick(self) -> None:
        self.last = sweep_pose(self.rig.arm.home, time.monotonic() - self.started_s)
        self.rig.commands.publish(joint_state(self.rig.arm.joint_names, self.last))
        self.sent += 1

    def stop(self) -> tuple[float, ...]:
        """Stop publishing; return the last pose sent."""
        self._timer.cancel()
        self.rig.probe.destroy_timer(self._timer)
        return self.last


@dataclass
class UnplugFigures:
    """What the unplug/replug scenario measured, per cycle, from the board's side and the link's.

    ``heard_s`` and ``reconnect_s`` hold one entry per cycle: how long after the replug the
    host first wrote to the new pty (None: never) and first commanded a move there (None:
    never). ``link_reconnects`` is the driver's own count (its diagnostics), read after the
    last cycle.
    """

    cycles: int
    heard_s: list[float | None] = field(default_factory=list)
    reconnect_s: list[float | None] = field(default_factory=list)
    down_s: list[float] = field(default_factory=list)
    commands_sent: int = 0
    link_reconnects: int = -1

    @property
    def reconnected(self) -> list[int]:
        """Return the cycles after which the host opened the new pty and commanded moves."""
        return [cycle for cycle, (heard, moved) in enumerate(zip(self.heard_s, self.reconnect_s,
                                                                  strict=True))
                if heard is not None and moved is not None and heard <= moved]

    @property
    def over_limit(self) -> list[int]:
        """Return the cycles whose reconnect took longer than RECONNECT_LIMIT_S (or never came)."""
        return [cycle for cycle, seconds in enumerate(self.reconnect_s)
                if seconds is None or seconds > RECONNECT_LIMIT_S]

    def summary(self) -> dict[str, object]:
        """Return the figures as a flat mapping for results.json."""
        measured = [s for s in self.reconnect_s if s is not None]
        return {'cycles': self.cycles, 'cycles_reconnected': len(self.reconnected),
                'link_reconnects': self.link_reconnects, 'stream_hz': STREAM_HZ,
                'commands_sent': self.commands_sent,
                'unplugged_s_min': min(self.down_s), 'unplugged_s_max': max(self.down_s),
                'reconnect_s_median': percentile(measured, 0.5),
                'reconnect_s_p99': percentile(measured, 0.99),
                'reconnect_s_max': max(measured),
                'reconnect_limit_s': RECONNECT_LIMIT_S,
                'cycles_over_reconnect_limit': self.over_limit}


def unplug_replug(rig: Rig, cycles: int, *, seed: int,
                  longest_down_s: float = 2.5) -> UnplugFigures:
    """Pull and replug the board ``cycles`` times while joint_commands stream at 200 Hz.

    Each cycle the board is away for a random time (up to ``longest_down_s``, so the link's
    back-off reaches its cap) and back for a random time. Each cycle waits for the driver to
    command the replugged board (``RECONNECT_LIMIT_S`` and a margin for a loaded machine) and
    measures, board side, when the host first wrote to the new pty and first moved a servo
    there. Returns when the board holds the last commanded pose.
    """
    rng = random.Random(seed)
    figures = UnplugFigures(cycles)
    rig.wait_subscribed()
    stream = CommandStream(rig)
    rig.ros.spin_until(lambda: bool(rig.board.moves_since(stream.started_s)), timeout_s=10.0,
                       what='the stream to reach the board')
    for cycle in range(cycles):
        down_s = rng.uniform(0.05, longest_down_s)
        rig.board.unplug()
        rig.spin_for(down_s)
        rig.board.replug()
        back_s = rig.board.plugged_at[-1]
        rig.ros.spin_until(lambda at=back_s: bool(rig.board.moves_since(at)),
                           timeout_s=RECONNECT_LIMIT_S + 10.0,
                           what=f'cycle {cycle}: the driver to command the replugged board')
        heard = rig.board.heard_at[-1]
        figures.heard_s.append(None if heard is None else heard - back_s)
        figures.reconnect_s.append(rig.board.moves_since(back_s)[0].at_s - back_s)
        figures.down_s.append(down_s)
        rig.spin_for(rng.uniform(0.1, 0.4))
    last = stream.stop()
    figures.commands_sent = stream.sent
    rig.wait_board_at(last, 'the board to end at the last commanded pose')
    figures.link_reconnects = _link_reconnects(rig)
    return figures


def _link_reconnects(rig: Rig) -> int:
    """Return the driver's reconnect count from a diagnostics status published from now on."""
    seen = len(rig.diagnostics.get('servo_driver', []))
    rig.ros.spin_until(lambda: len(rig.diagnostics.get('servo_driver', [])) > seen + 1,
                       timeout_s=10.0, what='a fresh servo_driver diagnostics status')
    return int(rig.last_values()['reconnects'])


def pulses_outside_calibration(rig: Rig) -> list[str]:
    """Return every pulse the host sent or the board took outside the calibrated range."""
    low, high = CALIBRATED_US
    joints = set(rig.layout.joint_channels)
    bad = [f'board took {move}' for move in list(rig.board.moves)
           if move.channel in joints and not low <= move.target_us <= high]
    if rig.board.protocol is Protocol.NATIVE:
        for vector in sent_pulses(host_frames(rig.board.host_bytes())):
            bad += [f'host sent {vector}' for ch in joints
                    if ch < len(vector) and vector[ch] and not low <= vector[ch] <= high]
    return bad


def spin_latency(rig: Rig, seconds: float, rate_hz: float = 100.0) -> dict[str, float]:
    """Spin for ``seconds`` and measure how long each spin_once and each timer gap took [s].

    A probe timer ticks at ``rate_hz``; a callback that blocks (a node waiting on its serial
    port, say) shows up as a long spin_once and a long gap between ticks.
    """
    ticks: list[float] = []
    timer = rig.probe.create_timer(1.0 / rate_hz, lambda: ticks.append(time.monotonic()))
    spins = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.monotonic()
        rig.ros.executor.spin_once(timeout_sec=0.02)
        spins.append(time.monotonic() - started)
    timer.cancel()
    rig.probe.destroy_timer(timer)
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    return {'spins': len(spins), 'timer_ticks': len(ticks),
            'spin_once_s_p99': percentile(spins, 0.99),
            'spin_once_s_max': max(spins), 'timer_period_s': 1.0 / rate_hz,
            'timer_gap_s_p99': percentile(gaps, 0.99), 'timer_gap_s_max': max(gaps)}
