"""Read and check the arm description held in a (nested) ROS parameter mapping.

Only :meth:`Arm.from_params` calls these; they turn degrees into radians and raise an
ArmConfigError naming the first key that breaks a rule.
"""

from collections.abc import Mapping
import math
from typing import Any

from fabrik_ros.kinematics.errors import ArmConfigError, SolverOptionsError
from fabrik_ros.kinematics.joint import Joint, JointKind, Link
from fabrik_ros.kinematics.options import Bend, SolverOptions
from fabrik_ros.kinematics.params_reader import (
    join,
    MISSING,
    read_float,
    read_int,
    read_list,
    read_str,
    reject_unknown,
    section,
)
from fabrik_ros.kinematics.servo_map import AuxServo, ServoCalibration

PULSE_RANGE_US = (400.0, 2600.0)
TOP_KEYS = ('base_frame', 'joint_names', 'geometry', 'joints', 'servos', 'aux_servos',
            'solver')
JOINT_KEYS = ('kind', 'min_deg', 'max_deg', 'home_deg')
GEOMETRY_KEYS = ('shoulder_height_m', 'link_lengths_m', 'tool_length_m')
SERVO_KEYS = ('channel', 'min_us', 'max_us', 'angle_at_min_deg', 'angle_at_max_deg', 'trim_us')
AUX_KEYS = ('channel', 'min_us', 'max_us', 'home_us')
SOLVER_KEYS = ('tolerance_m', 'max_iterations', 'min_improvement_m', 'bend')


def read_joint_names(params: Mapping[str, Any]) -> list[str]:
    """Return the joint names: a non-empty list of unique strings."""
    names = read_list(params, 'joint_names', '', str)
    if not names:
        raise ArmConfigError('joint_names', names, 'must name at least one joint')
    for index, name in enumerate(names):
        if name in names[:index]:
            raise ArmConfigError(f'joint_names[{index}]', name, 'must be unique')
    return names


def read_joints(params: Mapping[str, Any], names: list[str]) -> tuple[Joint, ...]:
    """Return one Joint per name from ``joints.<name>.*`` and check the chain's shape."""
    table = section(params, 'joints')
    reject_unknown(table, names, 'joints')
    joints = tuple(_read_joint(section(table, name, 'joints'), name) for name in names)
    _check_order(joints)
    return joints


def _read_joint(entry: Mapping[str, Any], name: str) -> Joint:
    """Return one joint, limits within [-180, 180] deg, min < max, home inside."""
    path = f'joints.{name}'
    reject_unknown(entry, JOINT_KEYS, path)
    kind_text = read_str(entry, 'kind', path)
    kinds = [k.value for k in JointKind]
    if kind_text not in kinds:
        raise ArmConfigError(join(path, 'kind'), kind_text, f'must be one of {kinds}')
    low, high = read_float(entry, 'min_deg', path), read_float(entry, 'max_deg', path)
    for key, value in (('min_deg', low), ('max_deg', high)):
        if not -180.0 <= value <= 180.0:
            raise ArmConfigError(join(path, key), value, 'must be within [-180.0, 180.0]')
    if low >= high:
        raise ArmConfigError(join(path, 'min_deg'), low, f'must be < max_deg ({high!r})')
    home = read_float(entry, 'home_deg', path)
    if not low <= home <= high:
        raise ArmConfigError(join(path, 'home_deg'), home, f'must be within [{low}, {high}]')
    return Joint(name, JointKind(kind_text), math.radians(low), math.radians(high),
                 math.radians(home))


def _check_order(joints: tuple[Joint, ...]) -> None:
    """Require: an optional yaw first, then pitch joints, then only roll joints."""
    kinds = [j.kind for j in joints]
    if JointKind.PITCH not in kinds:
        raise ArmConfigError('joint_names', [j.name for j in joints],
                             'must include at least one pitch joint')
    last_pitch = max(i for i, k in enumerate(kinds) if k is JointKind.PITCH)
    for index, joint in enumerate(joints):
        if joint.kind is JointKind.YAW and index != 0:
            raise ArmConfigError(f'joints.{joint.name}.kind', 'yaw',
                                 'only the first joint may be a yaw joint')
        if joint.kind is JointKind.ROLL and index < last_pitch:
            raise ArmConfigError(f'joints.{joint.name}.kind', 'roll',
                                 'roll joints must come after the last pitch joint')


def read_geometry(params: Mapping[str, Any],
                  joints: tuple[Joint, ...]) -> tuple[float, tuple[Link, ...]]:
    """Return the shoulder height and one Link per pitch joint (the last one is the tool)."""
    geometry = section(params, 'geometry')
    reject_unknown(geometry, GEOMETRY_KEYS, 'geometry')
    height = read_float(geometry, 'shoulder_height_m', 'geometry')
    if height < 0.0:
        raise ArmConfigError('geometry.shoulder_height_m', height, 'must be >= 0.0')
    pitch = [j.name for j in joints if j.kind is JointKind.PITCH]
    lengths = read_list(geometry, 'link_lengths_m', 'geometry', float,
                        [] if len(pitch) == 1 else MISSING)
    if len(lengths) != len(pitch) - 1:
        raise ArmConfigError('geometry.link_lengths_m', lengths,
                             f'must have {len(pitch) - 1} entries, one between each pair of '
                             f'consecutive pitch joints {pitch}')
    lengths.append(read_float(geometry, 'tool_length_m', 'geometry'))
    for index, length in enumerate(lengths):
        if length <= 0.0:
            key = ('geometry.tool_length_m' if index == len(lengths) - 1
                   else f'geometry.link_lengths_m[{index}]')
            raise ArmConfigError(key, length, 'must be > 0.0')
    return height, tuple(Link(name, length) for name, length in zip(pitch, lengths, strict=True))


def read_servos(params: Mapping[str, Any],
                joints: tuple[Joint, ...]) -> tuple[ServoCalibration, ...]:
    """Return one calibration per joint from ``servos.<joint>.*``."""
    table = section(params, 'servos')
    names = [j.name for j in joints]
    reject_unknown(table, names, 'servos')
    return tuple(_read_servo(section(table, name, 'servos'), name) for name in names)


def _read_servo(entry: Mapping[str, Any], name: str) -> ServoCalibration:
    """Return one calibration: channel >= 0, pulse range, distinct end angles."""
    path = f'servos.{name}'
    reject_unknown(entry, SERVO_KEYS, path)
    channel = _read_channel(entry, path)
    low, high = _read_pulse_range(entry, path)
    at_low = read_float(entry, 'angle_at_min_deg', path)
    at_high = read_float(entry, 'angle_at_max_deg', path)
    if at_low == at_high:
        raise ArmConfigError(join(path, 'angle_at_max_deg'), at_high,
                             'must differ from angle_at_min_deg')
    trim = read_float(entry, 'trim_us', path, 0.0)
    if abs(trim) >= high - low:
        raise ArmConfigError(join(path, 'trim_us'), trim,
                             f'must be smaller in size than the pulse range ({high - low})')
    return ServoCalibration(name, channel, low, high, math.radians(at_low),
                            math.radians(at_high), trim)


def read_aux_servos(params: Mapping[str, Any]) -> tuple[AuxServo, ...]:
    """Return the channels outside the IK chain from the optional ``aux_servos.<name>.*``."""
    table = section(params, 'aux_servos', required=False)
    servos = []
    for name in table:
        path = f'aux_servos.{name}'
        entry = section(table, name, 'aux_servos')
        reject_unknown(entry, AUX_KEYS, path)
        low, high = _read_pulse_range(entry, path)
        home = read_float(entry, 'home_us', path)
        if not low <= home <= high:
            raise ArmConfigError(join(path, 'home_us'), home, f'must be within [{low}, {high}]')
        servos.append(AuxServo(str(name), _read_channel(entry, path), low, high, home))
    return tuple(servos)


def check_channels(calibrations: tuple[ServoCalibration, ...],
                   aux: tuple[AuxServo, ...]) -> None:
    """Require every servo, joint or auxiliary, to have a channel of its own."""
    seen: dict[int, str] = {}
    for path, channel in ([(f'servos.{c.joint}', c.channel) for c in calibrations]
                          + [(f'aux_servos.{a.name}', a.channel) for a in aux]):
        if channel in seen:
            raise ArmConfigError(f'{path}.channel', channel, f'is already used by {seen[channel]}')
        seen[channel] = path


def _read_channel(entry: Mapping[str, Any], path: str) -> int:
    channel = read_int(entry, 'channel', path)
    if channel < 0:
        raise ArmConfigError(join(path, 'channel'), channel, 'must be >= 0')
    return channel


def _read_pulse_range(entry: Mapping[str, Any], path: str) -> tuple[float, float]:
    low, high = read_float(entry, 'min_us', path), read_float(entry, 'max_us', path)
    for key, value in (('min_us', low), ('max_us', high)):
        if not PULSE_RANGE_US[0] <= value <= PULSE_RANGE_US[1]:
            raise ArmConfigError(join(path, key), value,
                                 f'must be within [{PULSE_RANGE_US[0]}, {PULSE_RANGE_US[1]}]')
    if low >= high:
        raise ArmConfigError(join(path, 'min_us'), low, f'must be < max_us ({high!r})')
    return low, high


def read_solver(params: Mapping[str, Any]) -> SolverOptions:
    """Return the solver options from the optional ``solver.*`` (defaults where absent)."""
    entry = section(params, 'solver', required=False)
    reject_unknown(entry, SOLVER_KEYS, 'solver')
    defaults = SolverOptions()
    bend_text = read_str(entry, 'bend', 'solver', defaults.bend.value)
    bends = [b.value for b in Bend]
    if bend_text not in bends:
        raise ArmConfigError('solver.bend', bend_text, f'must be one of {bends}')
    try:
        return SolverOptions(
            tolerance_m=read_float(entry, 'tolerance_m', 'solver', defaults.tolerance_m),
            max_iterations=read_int(entry, 'max_iterations', 'solver', defaults.max_iterations),
            min_improvement_m=read_float(entry, 'min_improvement_m', 'solver',
                                         defaults.min_improvement_m),
            bend=Bend(bend_text))
    except SolverOptionsError as error:
        raise ArmConfigError(f'solver.{error.name}', error.value, error.rule) from error
