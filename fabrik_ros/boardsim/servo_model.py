"""Simulated servo outputs: targets, linear moves, limits and enable bits, on a given clock.

Pure: every method takes the time ``now`` [s]; :class:`~fabrik_ros.boardsim.SimBoard`
supplies it. Pulses are microseconds; 0 means "never set".
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math
from typing import Optional

from fabrik_ros.servo_io.protocols.native import DEFAULT_LIMITS_US

MoveListener = Callable[[int, float, int, float, float], None]


@dataclass
class _Motion:
    """A channel moving from ``start_us`` at ``t0_s`` toward ``target_us`` at ``rate``."""

    start_us: float = 0.0
    target_us: int = 0
    t0_s: float = 0.0
    rate_us_per_s: float = math.inf

    def at(self, now_s: float) -> float:
        if self.target_us == 0:
            return 0.0
        delta = self.target_us - self.start_us
        if math.isinf(self.rate_us_per_s):
            return float(self.target_us)
        travelled = self.rate_us_per_s * max(0.0, now_s - self.t0_s)
        if travelled >= abs(delta):
            return float(self.target_us)
        return self.start_us + math.copysign(travelled, delta)


class ServoModel:
    """The pulse outputs of a servo board.

    :param channels: number of outputs.
    :param speed_us_per_s: fastest any output may change (a slow servo); None = no cap.
    :param on_move: called as ``on_move(channel, start_us, target_us, now_s, rate_us_per_s)``
        for every move a channel starts (rate inf = a jump), for instruments that keep a record.
    """

    def __init__(self, channels: int, *, speed_us_per_s: Optional[float] = None,
                 on_move: Optional[MoveListener] = None) -> None:
        self.channels = channels
        self.speed_us_per_s = speed_us_per_s if speed_us_per_s else math.inf
        self.on_move = on_move
        self._motions = [_Motion() for _ in range(channels)]
        self.limits: list[tuple[int, int]] = [DEFAULT_LIMITS_US] * channels
        self.enabled_mask = 0

    def position(self, channel: int, now_s: float) -> float:
        """Return the pulse channel ``channel`` is at [µs] (0 if never set)."""
        return self._motions[channel].at(now_s)

    def positions(self, now_s: float) -> list[int]:
        """Return every channel's current pulse, rounded [µs] (0 if never set)."""
        return [round(self.position(ch, now_s)) for ch in range(self.channels)]

    def outputs(self, now_s: float) -> list[int]:
        """Return what each pin emits: the current pulse if enabled, else 0."""
        return [pulse if self.enabled_mask >> ch & 1 else 0
                for ch, pulse in enumerate(self.positions(now_s))]

    def target(self, channel: int) -> int:
        """Return the channel's target [µs] (0 if never set)."""
        return self._motions[channel].target_us

    def move(self, channel: int, target_us: int, now_s: float,
             rate_us_per_s: float = math.inf) -> None:
        """Start moving ``channel`` toward ``target_us`` at ``rate_us_per_s`` (capped).

        A channel that was never set takes its target at once.
        """
        current = self.position(channel, now_s)
        rate = min(rate_us_per_s, self.speed_us_per_s) if current else math.inf
        self._motions[channel] = _Motion(current or float(target_us), target_us, now_s, rate)
        if self.on_move is not None:
            self.on_move(channel, current, target_us, now_s, rate)

    def move_over(self, targets_us: Sequence[int], duration_s: float, now_s: float) -> None:
        """Move every channel with a non-zero target so that all arrive after ``duration_s``."""
        for channel, target in enumerate(targets_us):
            if target:
                distance = abs(target - self.position(channel, now_s))
                rate = distance / duration_s if duration_s > 0 else math.inf
                self.move(channel, target, now_s, rate)

    def hold(self, now_s: float) -> None:
        """Stop every move where it is."""
        for channel in range(self.channels):
            current = self.position(channel, now_s)
            if current:
                self._motions[channel] = _Motion(current, round(current), now_s)

    def stop(self, channel: int) -> None:
        """Forget a channel's pulse entirely (SSC-32U ``P0``, Maestro target 0)."""
        self._motions[channel] = _Motion()
        self.enabled_mask &= ~(1 << channel)

    def in_limits(self, channel: int, pulse_us: int) -> bool:
        """Return True if ``pulse_us`` lies inside the channel's limits."""
        lo, hi = self.limits[channel]
        return lo <= pulse_us <= hi

    def set_limits(self, limits_us: Sequence[tuple[int, int]], now_s: float) -> None:
        """Store limits for the first channels and clamp positions and targets into them."""
        for channel, (lo, hi) in enumerate(limits_us):
            self.limits[channel] = (lo, hi)
            motion = self._motions[channel]
            if motion.target_us == 0:
                continue
            current = min(max(motion.at(now_s), lo), hi)
            target = min(max(motion.target_us, lo), hi)
            self._motions[channel] = _Motion(current, target, now_s, motion.rate_us_per_s)

    def moving(self, now_s: float) -> bool:
        """Return True while any channel has not reached its target."""
        return any(self.position(ch, now_s) != self.target(ch) for ch in range(self.channels))
