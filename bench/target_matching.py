"""Tell which target a frame on the serial line carries, so latency can be read per target.

Targets sweep along a horizontal arc in front of the arm, around its yaw axis. The base-yaw
angle of a point is its azimuth whatever the solver does with the pitch joints, so the yaw
servo's pulse (on a servo bus: its goal count; "pulse" and "µs" below read "count" there)
identifies the target: consecutive targets differ by ``step_us`` on the way out and the way
back, and the way back is offset by half a step, so a pulse value recurs only once per sweep
period (560 targets by default: 1.1 s at 500 Hz, far longer than any latency measured). Every
``hold_every``-th target repeats the one before it, so that the tool moves no faster than the
driver's speed limit lets it follow: at the shipped 1.5 rad/s, 2 µs steps with every fourth
target held are 1.18 rad/s at 500 Hz. A held target carries no new pulse and is not matched.

A frame is matched to the newest moving target that was published before the frame's first byte
arrived, has the frame's yaw pulse, and is newer than the previous frame's target. Frames that
match nothing (the move home, slew steps, position polls) are counted, not used; targets
passed over between two matched ones were coalesced (superseded before a frame carried them).
"""

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np

from fabrik_ros.kinematics import Arm, JointKind


@dataclass(frozen=True)
class YawSweep:
    """Targets whose yaw pulse encodes their index within a sweep period.

    :param arm: the arm; its first yaw joint carries the code
    :param radius_m: horizontal distance of the arc from the yaw axis [m]
    :param height_m: height of the arc above the yaw joint's base point [m]
    :param step_us: yaw pulse change between consecutive moving targets (even) [µs]
    :param per_ramp: moving targets on the way out (and as many on the way back)
    :param hold_every: every this many targets, one repeats the previous (0 = never)
    :param bob_m: amplitude of a vertical wave along the arc (two per sweep period), so that
        the pitch joints move with the yaw [m]; 0 = a level arc, on which only the yaw moves.
        At 500 targets/s, 0.01 keeps every joint within the shipped 1.5 rad/s; at 0.02 the
        wrist needs up to 2.6 rad/s, so the speed limits, not the transport, delay targets.
    """

    arm: Arm
    radius_m: float = 0.17
    height_m: float = 0.10
    step_us: int = 2
    per_ramp: int = 210
    hold_every: int = 4
    bob_m: float = 0.0

    def __post_init__(self) -> None:
        """Refuse a hold pattern that does not fit a whole number of times into a period."""
        if self.hold_every and (2 * self.per_ramp) % (self.hold_every - 1):
            raise ValueError(f'hold_every = {self.hold_every}: 2 * per_ramp = '
                             f'{2 * self.per_ramp} must be a multiple of hold_every - 1')

    @property
    def joint(self) -> int:
        """Return the index of the yaw joint that carries the code."""
        kinds = [joint.kind for joint in self.arm.joints]
        return kinds.index(JointKind.YAW)

    @property
    def channel(self) -> int:
        """Return the board channel of the yaw servo."""
        return self.arm.servo_map.calibrations[self.joint].channel

    @property
    def period(self) -> int:
        """Return the number of targets after which the pulses repeat."""
        moves = 2 * self.per_ramp
        return moves * self.hold_every // (self.hold_every - 1) if self.hold_every else moves

    def is_hold(self, index: int) -> bool:
        """Return True if target ``index`` repeats the one before it."""
        return bool(self.hold_every) and index % self.hold_every == self.hold_every - 1

    def pulse(self, index: int) -> int:
        """Return the yaw pulse of target ``index`` [µs]."""
        home = float(self.arm.servo_map.to_units(self.arm.home).units[self.joint])
        low = round(home) - self.step_us * (self.per_ramp // 2)
        phase = self._moved(index) % (2 * self.per_ramp)
        if phase < self.per_ramp:
            return low + self.step_us * phase
        top = low + self.step_us * (self.per_ramp - 1) + self.step_us // 2
        return top - self.step_us * (phase - self.per_ramp)

    def _moved(self, index: int) -> int:
        """Return how many moving targets came before target ``index`` (holds repeat)."""
        return index - (index + 1) // self.hold_every if self.hold_every else index

    def points(self) -> list[tuple[float, float, float]]:
        """Return the target point of each index in one period [m].

        The point lies in the arm's vertical plane at the yaw the code commands: the yaw
        joint's geometric angle (its zero and direction: the SO-101's pan turns against the
        model's yaw), around the yaw axis (the SO-101's stands 39 mm ahead of its base link),
        beside it by the tool's lateral offset at the home roll.
        """
        arm = self.arm
        pulses = np.asarray(arm.servo_map.to_units(arm.home).units, dtype=float)
        lateral = arm.model.lateral_m(arm.model.roll_of(arm.model.home))
        yaw_joint = arm.joints[self.joint]
        out = []
        for index in range(self.period):
            pulses[self.joint] = self.pulse(index)
            yaw = yaw_joint.geometric(float(arm.servo_map.to_angles(pulses)[self.joint]))
            wave = math.sin(2.0 * math.pi * self._moved(index) / self.per_ramp)
            out.append(arm.model.to_base(self.radius_m, lateral,
                                         self.height_m + self.bob_m * wave, yaw))
        return out

    def check(self) -> None:
        """Solve one period in order, as the IK node would; fail if a yaw pulse differs.

        :raises ValueError: naming the first target whose solved yaw pulse is not its code
        """
        seed = None
        for index, point in enumerate(self.points()):
            result = self.arm.ik(point, seed)
            seed = result.angles_rad
            pulse = round(float(self.arm.servo_map.to_units(result.angles_rad).units[
                self.joint]))
            if not result.reached or pulse != self.pulse(index):
                raise ValueError(f'sweep target {index} {point}: reached={result.reached}, '
                                 f'yaw pulse {pulse}, must be reached with {self.pulse(index)}')


@dataclass(frozen=True)
class Match:
    """What the frames of one run carried.

    :param latency_s: per carried target index, first byte arrival minus publish time [s]
    :param unmatched_frames: pulse frames that carried no new target
    """

    latency_s: dict[int, float]
    unmatched_frames: int


def match_frames(frames: Sequence[tuple[float, int]], stamps: Sequence[float],
                 first_index: int, sweep: YawSweep) -> Match:
    """Match ``(first_byte_s, yaw_pulse)`` frames to targets published at ``stamps``.

    :param frames: pulse frames in arrival order
    :param stamps: publish time of targets ``first_index``, ``first_index + 1``, ... [s]
    """
    by_pulse: dict[int, list[int]] = defaultdict(list)
    for offset in range(len(stamps)):
        if not sweep.is_hold(first_index + offset):
            by_pulse[sweep.pulse(first_index + offset)].append(offset)
    latency: dict[int, float] = {}
    last = -1
    unmatched = 0
    for arrived_s, pulse in frames:
        offsets = by_pulse.get(pulse, [])
        candidate = _newest_before(offsets, stamps, arrived_s)
        if candidate is None or candidate <= last:
            unmatched += 1
            continue
        latency[first_index + candidate] = arrived_s - stamps[candidate]
        last = candidate
    return Match(latency, unmatched)


def _newest_before(offsets: list[int], stamps: Sequence[float], at_s: float) -> int | None:
    """Return the last of ``offsets`` (ascending) published no later than ``at_s``."""
    times = [stamps[offset] for offset in offsets]
    position = bisect_right(times, at_s)
    return offsets[position - 1] if position else None


def staleness(match: Match, stamps: Sequence[float], first_index: int, sweep: YawSweep,
              measured_from: int) -> list[float]:
    """Return, per moving target from ``measured_from`` on, how long until the board had it.

    "Had it" means the first frame carrying that target or a newer one: a target replaced
    before any frame carried it waits for the frame that carries its successor. Targets after
    the last carried one are left out (the run ended before a frame could carry them).

    :param stamps: publish time of targets ``first_index``, ``first_index + 1``, ... [s]
    :return: one delay per target [s], in publish order
    """
    arrivals = {index: latency + stamps[index - first_index]
                for index, latency in match.latency_s.items()}
    carried = sorted(arrivals)
    delays = []
    position = 0
    for index in range(measured_from, first_index + len(stamps)):
        while position < len(carried) and carried[position] < index:
            position += 1
        if position == len(carried):
            break
        if not sweep.is_hold(index):
            delays.append(arrivals[carried[position]] - stamps[index - first_index])
    return delays
