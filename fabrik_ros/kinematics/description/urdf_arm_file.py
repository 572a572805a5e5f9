"""The arm file text of parameters read off a URDF, every number commented with its source.

The file has the project's arm-file form (``/**: ros__parameters:``, floats with a decimal
point). Geometry, zeros, directions and limits come from the URDF; the servo sections cannot
(a URDF knows nothing of pulse widths), so they are written as placeholders spanning each
joint's range, marked ``PLACEHOLDER: calibrate``. The solver section holds the defaults.
"""

from collections.abc import Sequence
import math

from fabrik_ros.kinematics import SolverOptions
from fabrik_ros.kinematics.description.urdf_in import ArmParameters, JointParameters

# A placeholder pulse range: the usual hobby-servo span, well inside the allowed [400, 2600].
PLACEHOLDER_US = (500.0, 2500.0)
PLACEHOLDER = 'PLACEHOLDER: calibrate'


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
                  aux_servos: Sequence[str] = ()) -> str:
    """Return the arm file of ``params`` as YAML text.

    :param source: how the header names the URDF (e.g. ``URDF so101_new_calib.urdf``)
    :param first_channel: servo channel of the first joint; the others follow in chain order
    :param aux_servos: names of servos outside the chain (a gripper), given the channels after
        the joints' and a placeholder pulse range
    """
    names = [j.name for j in params.joints]
    lines = [
        f'# Arm {params.robot_name or "(unnamed)"} from its {source}, chain {params.base_frame}'
        f' -> {params.tool_link}, written by arm_from_urdf.',
        "# Joint positions (min/max/home_deg, topics) are the URDF's: same zero, same direction;",
        '# the solver turns them into geometric angles = zero_deg + direction * position.',
        '# Lengths in metres, angles in degrees, pulses in microseconds. Every servo section is',
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
    for joint in params.joints:
        lines += _joint(joint, params.sources)
    lines.append('    servos:')
    for index, joint in enumerate(params.joints):
        lines += _servo(joint, first_channel + index)
    if aux_servos:
        lines.append('    aux_servos:')
        for index, name in enumerate(aux_servos):
            lines += _aux_servo(name, first_channel + len(params.joints) + index)
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


def _joint(joint: JointParameters, sources: dict[str, str]) -> list[str]:
    """Return one joint's section."""
    key = f'joints.{joint.name}'
    return [
        f'      {joint.name}:',
        f'        kind: {joint.kind.value}  # from the joint axes at q = 0',
        f'        zero_deg: {format_float(joint.zero_deg)}  # {sources[f"{key}.zero_deg"]}',
        f'        direction: {joint.direction}  # {sources[f"{key}.direction"]}',
        f'        min_deg: {format_float(joint.min_deg)}  # {sources[f"{key}.min_deg"]}',
        f'        max_deg: {format_float(joint.max_deg)}  # {sources[f"{key}.max_deg"]}',
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
