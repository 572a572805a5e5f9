"""The arm file's keys: what each holds, its unit and its rules, each rule stated once.

One YAML file describes the arm for every node and for ``load_arm``. A ROS parameter holds a
scalar or a flat array, so nested maps become dotted names (``joints.elbow.max_deg``); ``*``
in :data:`KEYS` stands for one joint (or auxiliary servo) name. A servo section holds the keys
of one family: a PWM servo's pulse keys or a bus servo's count keys, the same family for every
servo of the arm (:data:`SERVO_FAMILIES`). The readers
(key_readers.py) check a value against its entry's rules, and the nodes describe each ROS
parameter with :attr:`KeySpec.description`, which is written from the same rules: the rule
enforced is the rule shown.
"""

from collections.abc import Iterable
from dataclasses import dataclass
import difflib
import enum
from fnmatch import fnmatchcase
import math
from typing import Any, Optional

from fabrik_ros.kinematics.description.joint import JointKind
from fabrik_ros.kinematics.options import Bend, SolverOptions


class _Missing:
    """Stands for an absent key (and for a key without a default) in error messages."""

    def __repr__(self) -> str:
        """Return the marker shown as the value of a missing key."""
        return '<missing>'


MISSING: Any = _Missing()

# No hobby arm has a length beyond this [m]: a larger one is a unit slip (issue 22), most
# likely millimetres written as metres, which would start the solver on a 70 m arm.
LENGTH_LIMIT_M = 2.0


class ValueKind(enum.Enum):
    """The type a key's value must have; the value is the phrase an error shows."""

    FLOAT = 'a float'
    INT = 'an integer'
    STR = 'a string'
    FLOAT_LIST = 'a list of floats'
    STR_LIST = 'a list of strings'


@dataclass(frozen=True)
class Bounds:
    """A numeric rule: the value (each entry of a list) lies between ``low`` and ``high``.

    :param low: the lower end, included unless ``low_open``
    :param high: the upper end, included
    :param low_open: the value must be greater than ``low``
    :param unit: shown after a two-ended interval
    :param unit_slip: a value outside is likely millimetres written as metres: say so

    >>> Bounds(-180.0, 180.0).phrase, Bounds(0.0, low_open=True).phrase
    ('within [-180.0, 180.0]', '> 0.0')
    """

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    unit: str = ''
    unit_slip: bool = False

    def holds(self, value: float) -> bool:
        """Return True when ``value`` keeps the rule."""
        above = value > self.low if self.low_open else value >= self.low
        return above and value <= self.high

    @property
    def phrase(self) -> str:
        """Return the rule in words, as a description and an error (after 'must be') say it."""
        if math.isinf(self.high):
            return f'{">" if self.low_open else ">="} {self.low}'
        if math.isinf(self.low):
            return f'<= {self.high}'
        opening = '(' if self.low_open else '['
        unit = f' {self.unit}' if self.unit else ''
        return f'within {opening}{self.low}, {self.high}]{unit}'

    def broken(self, value: float) -> str:
        """Return the rule an error shows for ``value``, which breaks it.

        >>> LENGTH.broken(70.0)
        'must be within [-2.0, 2.0] m (millimetres written as metres? 70.0 mm = 0.07 m)'
        """
        if self.unit_slip:
            return (f'must be {self.phrase} (millimetres written as metres? '
                    f'{value} mm = {value / 1000.0} m)')
        return f'must be {self.phrase}'


@dataclass(frozen=True)
class KeySpec:
    """What one key of the arm file holds, and every rule on its value alone or its siblings.

    :param kind: the type of its value (ints are taken where a float is asked)
    :param meaning: what it is, without unit or rules
    :param unit: 'm', 'deg', 'us', 'count' or '' (shown in brackets)
    :param rules: numeric rules on the value, or on each entry of a list, checked in order
    :param choices: the allowed values, for a key that holds one of a few
    :param default: the value when the key is absent; :data:`MISSING` when it is required
    :param size: the number of entries a list must have (0: any number)
    :param below: a sibling key this value must be smaller than
    :param within: two sibling keys this value must lie between (inclusive)
    :param family: the servo family (``'pulse'``, ``'count'``) of a servo key, else ''
    """

    kind: ValueKind
    meaning: str
    unit: str = ''
    rules: tuple[Bounds, ...] = ()
    choices: tuple[Any, ...] = ()
    default: Any = MISSING
    size: int = 0
    below: str = ''
    within: tuple[str, str] | tuple[()] = ()
    family: str = ''

    @property
    def description(self) -> str:
        """Return the meaning with its unit and every rule, as ROS parameter descriptions show.

        >>> KEYS['joints.*.home_deg'].description
        'home position [deg], within [min_deg, max_deg]'
        """
        parts = [f'{self.meaning} [{self.unit}]' if self.unit else self.meaning]
        if self.size:
            parts.append(f'{self.size} entries')
        parts.extend(rule.phrase for rule in self.rules)
        if self.choices:
            parts.append(f'one of {", ".join(str(c) for c in self.choices)}')
        if self.below:
            parts.append(f'< {self.below}')
        if self.within:
            parts.append(f'within [{self.within[0]}, {self.within[1]}]')
        if self.default is not MISSING:
            parts.append(f'default {self.default}')
        return ', '.join(parts)


_F, _I, _S = ValueKind.FLOAT, ValueKind.INT, ValueKind.STR
LENGTH = Bounds(-LENGTH_LIMIT_M, LENGTH_LIMIT_M, unit='m', unit_slip=True)


def length(meaning: str, *rules: Bounds, kind: ValueKind = _F, default: Any = MISSING,
           size: int = 0) -> KeySpec:
    """Return the entry of a length key [m]: its own rules, then the bound on every length.

    >>> length('an offset', default=0.0).description
    'an offset [m], within [-2.0, 2.0] m, default 0.0'
    """
    return KeySpec(kind, meaning, 'm', (*rules, LENGTH), default=default, size=size)


_POSITIVE = Bounds(0.0, low_open=True)
_JOINT_RANGE = Bounds(-360.0, 360.0)
_PULSE_RANGE = Bounds(400.0, 2600.0)
_CHANNEL = Bounds(0)
# Bus ids both makers accept: Feetech 0..253, Dynamixel Protocol 2.0 0..252 (253 is reserved
# and 254 is the broadcast id on both).
_BUS_ID = Bounds(0, 252)
# 4096 on the STS3215 and the Dynamixel X series; the range leaves room for other encoders
# (Dynamixel P series: hundreds of thousands) and refuses a slip such as 0 or 40.
_COUNTS_PER_TURN = Bounds(256, 1_048_576)
SERVO_FAMILIES = ('pulse', 'count')
_P, _C = SERVO_FAMILIES


def _count_keys(section: str, what: str, position: str) -> dict[str, KeySpec]:
    """Return the keys of a bus servo's calibration in counts, for ``servos`` or ``aux_servos``.

    ``count = zero_count + direction * position * counts_per_turn / 2 pi``; the range the
    positions' limits give must lie within the encoder's 0 .. counts_per_turn - 1 (checked
    with the joint, arm_sections.py).
    """
    return {
        f'{section}.*.id': KeySpec(_I, f'bus id of the servo {what}', rules=(_BUS_ID,),
                                   family=_C),
        f'{section}.*.zero_count': KeySpec(_F, f"the servo's count at {position} 0", 'count',
                                           (Bounds(0.0),), below='counts_per_turn', family=_C),
        f'{section}.*.direction': KeySpec(_I, f'1 where the count rises with the {position}, -1 '
                                          'against', choices=(1, -1), default=1, family=_C),
        f'{section}.*.counts_per_turn': KeySpec(_I, "counts in one turn of the servo's encoder",
                                                rules=(_COUNTS_PER_TURN,), default=4096,
                                                family=_C),
        f'{section}.*.homing_offset': KeySpec(_I, "the servo's homing-offset register value the "
                                              'counts were read with (written at connect where '
                                              'the servo holds another), smaller in size than '
                                              'counts_per_turn', 'count', default=None,
                                              family=_C),
    }


_DEFAULT_OPTIONS = SolverOptions()

KEYS: dict[str, KeySpec] = {
    'base_frame': KeySpec(_S, 'frame targets and joint positions are expressed in',
                          default='base_link'),
    'joint_names': KeySpec(ValueKind.STR_LIST, 'actuated joints in chain order: optional '
                           'yaw, pitch joints, then roll'),
    'geometry.base_xyz_m': length('where the yaw joint sits in the base frame, a point on '
                                  'the yaw axis (x, y, z)', kind=ValueKind.FLOAT_LIST,
                                  default=[0.0, 0.0, 0.0], size=3),
    'geometry.shoulder_height_m': length('height of the first pitch axis above base_xyz_m'),
    'geometry.shoulder_offset_m': length('distance of the first pitch axis forward of the yaw '
                                         'axis', default=0.0),
    'geometry.link_lengths_m': length('distance between consecutive pitch joints, shoulder '
                                      'first', _POSITIVE, kind=ValueKind.FLOAT_LIST),
    'geometry.tool_length_m': length('distance from the last pitch axis to the tool point, '
                                     'along the roll axis (the last link without one)',
                                     _POSITIVE),
    'geometry.lateral_offset_m': length("distance of the arm's plane from the yaw axis, along "
                                        'the pitch axes (+y at yaw 0)', default=0.0),
    'geometry.roll_axis_offset_m': length('distance of the roll axis from the last pitch axis, '
                                          "in the arm's plane", default=0.0),
    'geometry.tool_offset_m': length('distance of the tool point from the roll axis (needs a '
                                     'roll joint)', Bounds(0.0), default=0.0),
    'joints.*.kind': KeySpec(_S, 'yaw (about base z), pitch (hinge, horizontal axis) or roll '
                             '(tool axis)', choices=tuple(k.value for k in JointKind)),
    'joints.*.min_deg': KeySpec(_F, 'lower joint limit (a position)', 'deg', (_JOINT_RANGE,),
                                below='max_deg'),
    'joints.*.max_deg': KeySpec(_F, 'upper joint limit (a position), at most a turn above '
                                'min_deg', 'deg', (_JOINT_RANGE,)),
    'joints.*.home_deg': KeySpec(_F, 'home position', 'deg', within=('min_deg', 'max_deg')),
    'joints.*.zero_deg': KeySpec(_F, "the solver's angle at position 0 (its angle is zero_deg "
                                 '+ direction * position)', 'deg', (_JOINT_RANGE,), default=0.0),
    'joints.*.direction': KeySpec(_I, "1 where a position turns the way the solver's angle "
                                  'does (pitch lifts, yaw turns counter-clockwise seen from '
                                  'above), -1 against', choices=(1, -1), default=1),
    'servos.*.channel': KeySpec(_I, 'servo board channel driving this joint',
                                rules=(_CHANNEL,), family=_P),
    'servos.*.min_us': KeySpec(_F, 'lowest pulse width the servo is driven with', 'us',
                               (_PULSE_RANGE,), below='max_us', family=_P),
    'servos.*.max_us': KeySpec(_F, 'highest pulse width the servo is driven with', 'us',
                               (_PULSE_RANGE,), family=_P),
    'servos.*.angle_at_min_deg': KeySpec(_F, 'joint angle at min_us', 'deg', family=_P),
    'servos.*.angle_at_max_deg': KeySpec(_F, 'joint angle at max_us, not angle_at_min_deg',
                                         'deg', family=_P),
    'servos.*.trim_us': KeySpec(_F, 'offset added to every pulse to correct the horn '
                                'mounting, smaller in size than the pulse range', 'us',
                                default=0.0, family=_P),
    **_count_keys('servos', 'driving this joint', 'joint position'),
    'aux_servos.*.channel': KeySpec(_I, 'servo board channel of a servo outside the IK chain',
                                    rules=(_CHANNEL,), family=_P),
    'aux_servos.*.min_us': KeySpec(_F, 'lowest pulse width of the auxiliary servo', 'us',
                                   (_PULSE_RANGE,), below='max_us', family=_P),
    'aux_servos.*.max_us': KeySpec(_F, 'highest pulse width of the auxiliary servo', 'us',
                                   (_PULSE_RANGE,), family=_P),
    'aux_servos.*.home_us': KeySpec(_F, 'pulse width the auxiliary servo starts at', 'us',
                                    within=('min_us', 'max_us'), family=_P),
    **_count_keys('aux_servos', 'outside the IK chain', 'position'),
    'aux_servos.*.min_deg': KeySpec(_F, 'lowest position of the auxiliary bus servo (its '
                                    'joint_commands and joint_states position, radians there)',
                                    'deg',
                                    (_JOINT_RANGE,), below='max_deg', family=_C),
    'aux_servos.*.max_deg': KeySpec(_F, 'highest position of the auxiliary bus servo', 'deg',
                                    (_JOINT_RANGE,), family=_C),
    'aux_servos.*.home_deg': KeySpec(_F, 'position the auxiliary bus servo starts at', 'deg',
                                     within=('min_deg', 'max_deg'), family=_C),
    'solver.tolerance_m': KeySpec(_F, 'IK counts as reached when the tool point is this close',
                                  'm', default=_DEFAULT_OPTIONS.tolerance_m),
    'solver.max_iterations': KeySpec(_I, 'FABRIK iteration cap per attempt',
                                     default=_DEFAULT_OPTIONS.max_iterations),
    'solver.min_improvement_m': KeySpec(_F, 'an attempt stops as stalled after 2 iterations '
                                        'gaining less', 'm',
                                        default=_DEFAULT_OPTIONS.min_improvement_m),
    'solver.bend': KeySpec(_S, 'elbow preference: any (keep the seed branch), up or down',
                           choices=tuple(b.value for b in Bend),
                           default=_DEFAULT_OPTIONS.bend.value),
}


def keys_under(prefix: str, family: Optional[str] = None) -> tuple[str, ...]:
    """Return the leaf keys of the schema directly under ``prefix``, in schema order.

    :param family: only the servo keys of this family (and the keys of none)

    >>> keys_under('joints.*')
    ('kind', 'min_deg', 'max_deg', 'home_deg', 'zero_deg', 'direction')
    >>> keys_under('servos.*', 'count')
    ('id', 'zero_count', 'direction', 'counts_per_turn', 'homing_offset')
    """
    return tuple(pattern.rpartition('.')[2] for pattern, entry in KEYS.items()
                 if pattern.rpartition('.')[0] == prefix
                 and (family is None or entry.family in ('', family)))


def family_of(section: str, key: str) -> str:
    """Return the servo family of ``key`` in a servo section ('' if it has none or is unknown).

    >>> family_of('servos', 'zero_count'), family_of('aux_servos', 'home_us')
    ('count', 'pulse')
    """
    entry = KEYS.get(f'{section}.*.{key}')
    return entry.family if entry is not None else ''


TOP_KEYS = tuple(dict.fromkeys(pattern.split('.')[0] for pattern in KEYS))
GEOMETRY_KEYS = keys_under('geometry')
JOINT_KEYS = keys_under('joints.*')
SERVO_KEYS = keys_under('servos.*')
AUX_KEYS = keys_under('aux_servos.*')
SOLVER_KEYS = keys_under('solver')


def spec(name: str) -> Optional[KeySpec]:
    """Return the schema entry of a dotted key (any joint name for ``*``), None if unknown.

    >>> spec('joints.elbow.home_deg').description
    'home position [deg], within [min_deg, max_deg]'
    >>> spec('joints.elbow.max_deg.extra') is None
    True
    """
    for pattern, entry in KEYS.items():
        if fnmatchcase(name, pattern) and pattern.count('.') == name.count('.'):
            return entry
    return None


def describe(name: str) -> str:
    """Return the description (with unit and rules) of a dotted key, '' if unknown.

    >>> describe('solver.tolerance_m')
    'IK counts as reached when the tool point is this close [m], default 0.0001'
    """
    entry = spec(name)
    return entry.description if entry is not None else ''


def closest(name: str, known: Iterable[str]) -> str:
    """Return the known name most like ``name`` (a likely misspelling's intended key).

    >>> closest('aux_servo', ['servos', 'aux_servos', 'solver'])
    'aux_servos'
    """
    candidates = sorted(set(known))
    if not candidates:
        return ''
    return max(candidates, key=lambda c: difflib.SequenceMatcher(None, name, c).ratio())
