"""The arm file text of parameters read off a URDF, every number commented with its source.

The file has the project's arm-file form (``/**: ros__parameters:``, floats with a decimal
point). Geometry, zeros, directions and limits come from the URDF; the servo sections cannot
(a URDF knows nothing of pulse widths), so they are written as placeholders spanning each
joint's range, marked ``PLACEHOLDER: calibrate``. For bus servos (:class:`BusServos`) they are
count sections instead: each joint's position 0 at mid-turn where its range fits around it,
else the range centred in the turn, and a range wider than the turn narrowed to it (a
position-mode servo does not cross its encoder's seam), each said in a comment. The solver
section holds the defaults.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
import math
from typing import Optional

from fabrik_ros.kinematics import SolverOptions
from fabrik_ros.kinematics.description.urdf_in import ArmParameters, JointParameters

# A placeholder pulse range: the usual hobby-servo span, well inside the allowed [400, 2600].
PLACEHOLDER_US = (500.0, 2500.0)
PLACEHOLDER = 'PLACEHOLDER: calibrate'
# Kept inside a narrowed range's ends, so that the 12 digits written still load inside the turn.
_ROUNDING_DEG = 1e-6
# A bus gripper with no URDF joint of its name: a range to calibrate, well inside the turn.
PLACEHOLDER_AUX_DEG = (-90.0, 90.0)


@dataclass(frozen=True)
class BusServos:
    """Count servo sections (bus servos) in place of pulse placeholders.

    :param counts_per_turn: counts in one turn of the servos' encoders (4096: STS3215, X series)
    :param aux_ranges_deg: per auxiliary servo, (min_deg, max_deg, where they came from)
    """

    counts_per_turn: int
    aux_ranges_deg: Mapping[str, tuple[float, float, str]] = field(default_factory=dict)


def format_float(value: float) -> str:
    """Return ``value`` as YAML reads a float: always with a decimal point, 12 digits.

    >>> format_float(1e-07), format_float(2.0), format_float(-0.0), format_float(0.1160000211)
    ('1.0e-07', '2.0', '0.0', '0.1160000211')
    """
    if not math.isfinite(value):
        raise ValueError(f'{value!r} is not a finite number and has no place in an arm file')
    text = f'{value + 0.0:.12g}'
    if text == '-0':
        text = '0'
    mantissa, _, exponent = text.partition('e')
    if '.' not in mantissa:
        mantissa += '.0'
    return mantissa + ('e' + exponent if exponent else '')


def arm_file_text(params: ArmParameters, *, source: str, first_channel: int = 0,
                  aux_servos: Sequence[str] = (), bus: Optional[BusServos] = None) -> str:
    """Return the arm file of ``params`` as YAML text.

    :param source: how the header names the URDF (e.g. ``URDF so101_new_calib.urdf``)
    :param first_channel: servo channel (bus id) of the first joint; the others follow in chain
        order
    :param aux_servos: names of servos outside the chain (a gripper), given the channels after
        the joints' and a placeholder pulse range (bus servos: a count section)
    :param bus: write count sections for bus servos instead of pulse placeholders
    """
    names = [j.name for j in params.joints]
    fitted = [_fit_turn(j, bus.counts_per_turn) if bus else (j, '') for j in params.joints]
    units = 'counts of each bus servo' if bus else 'pulses in microseconds'
    lines = [
        f'# Arm {params.robot_name or "(unnamed)"} from its {source}, chain {params.base_frame}'
        f' -> {params.tool_link}, written by arm_from_urdf.',
        "# Joint positions (min/max/home_deg, topics) are the URDF's: same zero, same direction;",
        '# the solver turns them into geometric angles = zero_deg + direction * position.',
        f'# Lengths in metres, angles in degrees, {units}. Every servo section is',
        f'# a {PLACEHOLDER} it before driving the arm.',
        '/**:',
        '  ros__parameters:',
        f'    base_frame: {params.base_frame}  # the URDF base link',
        f'    joint_names: [{", ".join(names)}]  # the movable URDF joints from '
        f'{params.base_frame} to {params.tool_link}, in chain order',
        '    geometry:',
        *_geometry(params),
        '    joints:',
    ]
    for joint, narrowed in fitted:
        lines += _joint(joint, params.sources, narrowed)
    lines.append('    servos:')
    for index, (joint, _) in enumerate(fitted):
        channel = first_channel + index
        lines += _count_servo(joint, channel, bus) if bus else _servo(joint, channel)
    if aux_servos:
        lines.append('    aux_servos:')
        for index, name in enumerate(aux_servos):
            channel = first_channel + len(params.joints) + index
            lines += _count_aux_servo(name, channel, bus) if bus else _aux_servo(name, channel)
    return '\n'.join(lines + _solver()) + '\n'


def _geometry(params: ArmParameters) -> list[str]:
    """Return the geometry section's lines."""
    sources = params.sources
    xyz = ', '.join(format_float(v) for v in params.base_xyz_m)
    lines = [f'      base_xyz_m: [{xyz}]  # {sources["geometry.base_xyz_m"]}']
    for key in ('shoulder_height_m', 'shoulder_offset_m', 'lateral_offset_m'):
        lines.append(f'      {key}: {format_float(getattr(params, key))}  '
                     f'# {sources[f"geometry.{key}"]}')
    for index in range(len(params.link_lengths_m)):
        lines.append(f'      # link_lengths_m[{index}]: '
                     f'{sources[f"geometry.link_lengths_m[{index}]"]}')
    lengths = ', '.join(format_float(v) for v in params.link_lengths_m)
    comment = 'the axis distances named above, in order' if lengths else 'one pitch joint'
    lines.append(f'      link_lengths_m: [{lengths}]  # {comment}')
    for key in ('tool_length_m', 'roll_axis_offset_m', 'tool_offset_m'):
        lines.append(f'      {key}: {format_float(getattr(params, key))}  '
                     f'# {sources[f"geometry.{key}"]}')
    return lines


def _joint(joint: JointParameters, sources: dict[str, str], narrowed: str = '') -> list[str]:
    """Return one joint's section (its limits' source replaced by ``narrowed`` if given)."""
    key = f'joints.{joint.name}'
    low_source = narrowed or sources[f'{key}.min_deg']
    high_source = narrowed or sources[f'{key}.max_deg']
    return [
        f'      {joint.name}:',
        f'        kind: {joint.kind.value}  # from the joint axes at q = 0',
        f'        zero_deg: {format_float(joint.zero_deg)}  # {sources[f"{key}.zero_deg"]}',
        f'        direction: {joint.direction}  # {sources[f"{key}.direction"]}',
        f'        min_deg: {format_float(joint.min_deg)}  # {low_source}',
        f'        max_deg: {format_float(joint.max_deg)}  # {high_source}',
        f'        home_deg: {format_float(joint.home_deg)}  # {sources[f"{key}.home_deg"]}',
    ]


def _servo(joint: JointParameters, channel: int) -> list[str]:
    """Return a placeholder servo section spanning the joint's range."""
    low, high = PLACEHOLDER_US
    return [
        f'      {joint.name}:  # {PLACEHOLDER}: pulses and angles are not in the URDF',
        f'        channel: {channel}  # {PLACEHOLDER}: position in the chain',
        f'        min_us: {format_float(low)}  # {PLACEHOLDER}',
        f'        max_us: {format_float(high)}  # {PLACEHOLDER}',
        f'        angle_at_min_deg: {format_float(joint.min_deg)}  # {PLACEHOLDER}: '
        "the joint's min_deg",
        f'        angle_at_max_deg: {format_float(joint.max_deg)}  # {PLACEHOLDER}: '
        "the joint's max_deg",
        f'        trim_us: 0.0  # {PLACEHOLDER}',
    ]


def _fit_turn(joint: JointParameters, turn: int) -> tuple[JointParameters, str]:
    """Return the joint with its range narrowed to the turn's last count, and why ('' if kept).

    A position-mode bus servo reaches counts 0 .. turn - 1: a range of a whole turn (the SO-100
    wrist roll's +-3.14158 rad) keeps its middle and loses a fraction of a count at each end.
    """
    span_deg = (turn - 1) * 360.0 / turn - _ROUNDING_DEG
    if joint.max_deg - joint.min_deg <= span_deg:
        return joint, ''
    middle = (joint.min_deg + joint.max_deg) / 2.0
    low, high = middle - span_deg / 2.0, middle + span_deg / 2.0
    home = min(max(joint.home_deg, low), high)
    note = (f'the URDF range [{joint.min_deg:.6g}, {joint.max_deg:.6g}] narrowed about its middle '
            f'to the {turn - 1} counts a position-mode bus servo turns through')
    return replace(joint, min_deg=low, max_deg=high, home_deg=home), note


def _mid_turn_zero(low_deg: float, high_deg: float, turn: int) -> tuple[float, str]:
    """Return the zero count for a range [deg], and the comment saying how it was chosen.

    Mid-turn if the range fits around it, else the count that centres the range in the turn.
    """
    scale = turn / 360.0
    zero = turn / 2.0
    if 0.0 <= zero + low_deg * scale and zero + high_deg * scale <= turn - 1:
        return zero, f'position 0 at mid-turn ({turn} / 2)'
    zero = round((turn - 1) / 2.0 - (low_deg + high_deg) / 2.0 * scale, 3)
    return zero, 'the range centred in the turn (it does not fit around mid-turn)'


def _count_servo(joint: JointParameters, channel: int, bus: BusServos) -> list[str]:
    """Return a bus servo section: mid-turn zero, direction 1, to calibrate."""
    zero, why = _mid_turn_zero(joint.min_deg, joint.max_deg, bus.counts_per_turn)
    return [
        f'      {joint.name}:  # {PLACEHOLDER}: bus servo (web_view by hand, or '
        'arm_calibration_from_lerobot)',
        f'        id: {channel}  # bus id: position in the chain from the first id',
        f'        zero_count: {format_float(zero)}  # {PLACEHOLDER}: {why}',
        f'        direction: 1  # {PLACEHOLDER}: the count rising with the URDF position',
        f'        counts_per_turn: {bus.counts_per_turn}  # the encoder (--bus-servos)',
    ]


def _count_aux_servo(name: str, channel: int, bus: BusServos) -> list[str]:
    """Return a bus servo section outside the chain: positions in degrees."""
    low, high, source = bus.aux_ranges_deg.get(
        name, (*PLACEHOLDER_AUX_DEG, f'{PLACEHOLDER}: no URDF joint {name}'))
    zero, why = _mid_turn_zero(low, high, bus.counts_per_turn)
    home = min(max(0.0, low), high)
    return [
        f'      {name}:  # {PLACEHOLDER}: bus servo outside the IK chain, position in radians',
        f"        id: {channel}  # bus id: after the chain's servos",
        f'        zero_count: {format_float(zero)}  # {PLACEHOLDER}: {why}',
        f'        direction: 1  # {PLACEHOLDER}: the count rising with the position',
        f'        counts_per_turn: {bus.counts_per_turn}  # the encoder (--bus-servos)',
        f'        min_deg: {format_float(low)}  # {source}',
        f'        max_deg: {format_float(high)}  # {source}',
        f'        home_deg: {format_float(home)}  # position 0 where the range holds it',
    ]


def _aux_servo(name: str, channel: int) -> list[str]:
    """Return a placeholder auxiliary servo section."""
    low, high = PLACEHOLDER_US
    return [
        f'      {name}:  # {PLACEHOLDER}: a servo outside the IK chain',
        f"        channel: {channel}  # {PLACEHOLDER}: after the chain's servos",
        f'        min_us: {format_float(low)}  # {PLACEHOLDER}',
        f'        max_us: {format_float(high)}  # {PLACEHOLDER}',
        f'        home_us: {format_float((low + high) / 2)}  # {PLACEHOLDER}: mid-range',
    ]


def _solver() -> list[str]:
    """Return the solver section with the solver's defaults."""
    defaults = SolverOptions()
    return [
        '    solver:',
        f'      tolerance_m: {format_float(defaults.tolerance_m)}  # solver default',
        f'      max_iterations: {defaults.max_iterations}  # solver default',
        f'      min_improvement_m: {format_float(defaults.min_improvement_m)}  # solver default',
        f'      bend: {defaults.bend.value}  # solver default',
    ]
