"""A leader arm's servo counts as the follower's joint commands, clamped to its limits.

Each of the follower's servos (its joints in joint order, then its auxiliary servos: the
gripper) is driven by one servo of the leader named in the mapping (by default the one of the
same name), through the leader's own calibration (its arm file: count -> position [rad]) and
``follower = direction * leader + offset_rad``, then clamped into the follower's range. An
empty leader name leaves that follower servo undriven (it holds its current target). A reading
that lacks a leader servo leaves its follower servo out of that command; nothing not finite is
ever returned.

>>> from pathlib import Path
>>> from fabrik_ros.kinematics import load_arm
>>> so101 = load_arm(Path(__file__).parents[2] / 'config' / 'so101.yaml')
>>> mapping = LeaderMap.build(so101, so101)
>>> names, positions = mapping.command({1: 2048 + 512, 6: 2048})
>>> names, [round(p, 4) for p in positions]
(('shoulder_pan', 'gripper'), [0.7854, 0.0])
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from typing import Optional, Union

from fabrik_ros.kinematics import Arm
from fabrik_ros.kinematics.description.count_calibration import CountAuxServo, CountCalibration

# A leader offset larger than a turn is a mistake (degrees given as radians, say).
MAX_OFFSET_RAD = 2.0 * math.pi


class MappingError(ValueError):
    """A leader -> follower mapping that cannot work; the message names the entry and why."""


@dataclass(frozen=True)
class Route:
    """One follower servo driven by one leader servo.

    :param follower: the follower joint's (or auxiliary servo's) name
    :param leader_id: the leader servo's bus id
    :param leader: the leader's calibration of that servo (count -> position [rad])
    :param offset_rad: added after the direction [rad]
    :param direction: 1, or -1 where the two arms count the joint the opposite ways
    :param low: the follower's lowest position [rad]
    :param high: the follower's highest position [rad]
    """

    follower: str
    leader_id: int
    leader: Union[CountCalibration, CountAuxServo]
    offset_rad: float
    direction: int
    low: float
    high: float

    def position(self, count: float) -> Optional[float]:
        """Return the follower position of a leader count, clamped; None if not finite."""
        leader_rad = self.leader.angle_rad(count)
        value = self.direction * leader_rad + self.offset_rad
        if not math.isfinite(value):
            return None
        return min(max(value, self.low), self.high)


@dataclass(frozen=True)
class LeaderMap:
    """The routes from the leader's servos to the follower's, in the follower's order."""

    routes: tuple[Route, ...]

    @property
    def leader_ids(self) -> tuple[int, ...]:
        """Return the leader servo ids read, each once, in route order."""
        return tuple(dict.fromkeys(route.leader_id for route in self.routes))

    def command(self, counts: Mapping[int, int]) -> tuple[tuple[str, ...], tuple[float, ...]]:
        """Return the follower names and positions [rad] of one leader reading [counts by id]."""
        names, positions = [], []
        for route in self.routes:
            count = counts.get(route.leader_id)
            if count is None:
                continue
            position = route.position(float(count))
            if position is not None:
                names.append(route.follower)
                positions.append(position)
        return tuple(names), tuple(positions)

    @classmethod
    def build(cls, leader: Arm, follower: Arm, *,
              leader_names: Optional[Sequence[str]] = None,
              offsets_rad: Optional[Sequence[float]] = None,
              directions: Optional[Sequence[int]] = None) -> 'LeaderMap':
        """Return the map of ``leader``'s servos onto ``follower``'s.

        Each sequence has one entry per follower servo, in :func:`follower_names` order; None
        gives the default (the same names, 0.0, 1).

        :raises MappingError: naming the entry: a length that is not the follower's servo
            count, a leader name the leader's arm file lacks, a leader named twice, a
            direction other than 1 or -1, an offset not finite or over a turn, or a leader
            that is not bus servos calibrated in counts
        """
        targets = follower_ranges(follower)
        order = tuple(targets)
        count = len(order)
        names = _entries('leader_joints', leader_names, order, count)
        offsets = _entries('offsets_rad', offsets_rad, (0.0,) * count, count)
        signs = _entries('directions', directions, (1,) * count, count)
        sources = _leader_servos(leader)
        routes: list[Route] = []
        used: dict[str, str] = {}
        for index, follower_name in enumerate(order):
            name = str(names[index])
            if not name:
                continue
            where = f'leader_joints[{index}] = {name!r} (follower {follower_name})'
            if name not in sources:
                raise MappingError(f'{where}: the leader arm has no such joint or auxiliary '
                                   f'servo; it has {", ".join(sources)} (or give \'\' to '
                                   'leave the follower servo undriven)')
            if name in used:
                raise MappingError(f'{where}: that leader servo already drives {used[name]}; '
                                   'each drives one follower servo')
            used[name] = follower_name
            offset, sign = offsets[index], signs[index]
            if not (isinstance(offset, (int, float)) and math.isfinite(offset)
                    and abs(offset) <= MAX_OFFSET_RAD):
                raise MappingError(f'offsets_rad[{index}] = {offset!r} (follower '
                                   f'{follower_name}): must be finite, within '
                                   f'[-{MAX_OFFSET_RAD:.4f}, {MAX_OFFSET_RAD:.4f}] rad')
            if sign not in (1, -1) or isinstance(sign, bool):
                raise MappingError(f'directions[{index}] = {sign!r} (follower {follower_name}): '
                                   'must be 1 or -1')
            servo = sources[name]
            low, high = targets[follower_name]
            routes.append(Route(follower_name, servo.channel, servo, float(offset), int(sign),
                                low, high))
        if not routes:
            raise MappingError('leader_joints names no leader servo: nothing would be driven')
        return cls(tuple(routes))


def follower_names(follower: Arm) -> tuple[str, ...]:
    """Return the follower servos a mapping has an entry for: joints, then auxiliary servos."""
    return tuple(follower_ranges(follower))


def follower_ranges(follower: Arm) -> dict[str, tuple[float, float]]:
    """Return each follower servo's position range [rad], joints then auxiliary servos.

    :raises MappingError: for an auxiliary servo of a PWM board (its position is a fraction
        of its pulse range, not an angle a leader's servo could give)
    """
    ranges = {joint.name: (joint.min_rad, joint.max_rad) for joint in follower.joints}
    for aux in follower.servo_map.aux:
        if not isinstance(aux, CountAuxServo):
            raise MappingError(f'follower auxiliary servo {aux.name} is a PWM servo (a '
                               'fraction of its pulse range); a leader arm drives bus servos '
                               'calibrated in radians')
        ranges[aux.name] = (aux.min_rad, aux.max_rad)
    return ranges


def _leader_servos(leader: Arm) -> dict[str, Union[CountCalibration, CountAuxServo]]:
    """Return the leader's servos by joint (or auxiliary servo) name."""
    try:
        joints, aux = leader.servo_map.count_servos()
    except ValueError:
        raise MappingError('the leader arm file calibrates pulse widths; a leader arm is bus '
                           'servos calibrated in counts (id, zero_count)') from None
    servos: dict[str, Union[CountCalibration, CountAuxServo]] = {c.joint: c for c in joints}
    servos.update({a.name: a for a in aux})
    return servos


def _entries(key: str, given: Optional[Sequence], default: Sequence, count: int) -> list:
    """Return ``given`` as a list of ``count`` entries (``default`` when None)."""
    values = list(default if given is None else given)
    if len(values) != count:
        raise MappingError(f'{key} has {len(values)} entries, must have {count}: one per '
                           'follower servo, its joints in joint_names order then its '
                           'auxiliary servos')
    return values
