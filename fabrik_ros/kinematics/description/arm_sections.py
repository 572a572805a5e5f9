"""The arm file's sections read into the arm's parts, and the rules on the arm as a whole.

Each key's own rules (type, range, choices, default, a sibling it must stay below) are the
schema's (arm_keys.py), applied by the readers (key_readers.py). What is checked here spans
keys the schema cannot tie: the shape of the chain, a list as long as the pitch joints ask,
the pulse range a trim must fit in, a channel used twice.
"""

from collections.abc import Mapping
import math
from typing import Any

from fabrik_ros.kinematics.description.arm_keys import MISSING, TOP_KEYS
from fabrik_ros.kinematics.description.joint import Joint, JointKind, Link
from fabrik_ros.kinematics.description.key_readers import (
    join,
    read_keys,
    read_str,
    read_strs,
    reject_unknown,
    section,
)
from fabrik_ros.kinematics.description.offsets import Offsets
from fabrik_ros.kinematics.description.servo_map import AuxServo, ServoCalibration
from fabrik_ros.kinematics.errors import ArmConfigError, SolverOptionsError
from fabrik_ros.kinematics.options import Bend, SolverOptions


def check_top_keys(params: Mapping[str, Any]) -> None:
    """Refuse a mapping that is not one, or holds a top-level key the arm file does not know."""
    if not isinstance(params, Mapping):
        raise ArmConfigError('ros__parameters', params, 'must be a mapping of keys')
    reject_unknown(params, TOP_KEYS, '')


def read_base_frame(params: Mapping[str, Any]) -> str:
    """Return the frame targets and joint positions are expressed in."""
    return read_str(params, 'base_frame', '')


def read_joint_names(params: Mapping[str, Any]) -> list[str]:
    """Return the joint names: a non-empty list of unique strings."""
    names = read_strs(params, 'joint_names', '')
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
    """Return one joint from its keys (limits, home) in radians."""
    values = read_keys(entry, 'joints.*', f'joints.{name}')
    if values['max_deg'] - values['min_deg'] > 360.0:
        raise ArmConfigError(f'joints.{name}.max_deg', values['max_deg'],
                             f'must be at most a turn above min_deg ({values["min_deg"]!r})')
    return Joint(name, JointKind(values['kind']), math.radians(values['min_deg']),
                 math.radians(values['max_deg']), math.radians(values['home_deg']),
                 math.radians(values['zero_deg']), values['direction'])


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
                  joints: tuple[Joint, ...]) -> tuple[float, tuple[Link, ...], Offsets]:
    """Return the shoulder height, one Link per pitch joint (the last: the tool), offsets."""
    pitch = [j.name for j in joints if j.kind is JointKind.PITCH]
    values = read_keys(section(params, 'geometry'), 'geometry', 'geometry',
                       {'link_lengths_m': [] if len(pitch) == 1 else MISSING})
    lengths = list(values['link_lengths_m'])
    if len(lengths) != len(pitch) - 1:
        raise ArmConfigError('geometry.link_lengths_m', lengths,
                             f'must have {len(pitch) - 1} entries, one between each pair of '
                             f'consecutive pitch joints {pitch}')
    lengths.append(values['tool_length_m'])
    links = tuple(Link(name, length) for name, length in zip(pitch, lengths, strict=True))
    return values['shoulder_height_m'], links, _offsets(values, joints)


def _offsets(values: Mapping[str, Any], joints: tuple[Joint, ...]) -> Offsets:
    """Return the offsets; a tool off the roll axis needs exactly one roll joint to turn it."""
    rolls = sum(j.kind is JointKind.ROLL for j in joints)
    if values['tool_offset_m'] != 0.0 and rolls != 1:
        raise ArmConfigError('geometry.tool_offset_m', values['tool_offset_m'],
                             f'needs exactly one roll joint to turn it (the arm has {rolls}); '
                             'without one, fold it into tool_length_m and the last pitch '
                             "joint's zero_deg")
    x, y, z = values['base_xyz_m']
    return Offsets((x, y, z), values['shoulder_offset_m'], values['lateral_offset_m'],
                   values['roll_axis_offset_m'], values['tool_offset_m'])


def read_servos(params: Mapping[str, Any],
                joints: tuple[Joint, ...]) -> tuple[ServoCalibration, ...]:
    """Return one calibration per joint from ``servos.<joint>.*``."""
    table = section(params, 'servos')
    names = [j.name for j in joints]
    reject_unknown(table, names, 'servos')
    return tuple(_read_servo(section(table, name, 'servos'), name) for name in names)


def _read_servo(entry: Mapping[str, Any], name: str) -> ServoCalibration:
    """Return one calibration: distinct end angles, a trim that fits in the pulse range."""
    path = f'servos.{name}'
    values = read_keys(entry, 'servos.*', path)
    low, high = values['min_us'], values['max_us']
    if values['angle_at_min_deg'] == values['angle_at_max_deg']:
        raise ArmConfigError(join(path, 'angle_at_max_deg'), values['angle_at_max_deg'],
                             'must differ from angle_at_min_deg')
    if abs(values['trim_us']) >= high - low:
        raise ArmConfigError(join(path, 'trim_us'), values['trim_us'],
                             f'must be smaller in size than the pulse range ({high - low})')
    return ServoCalibration(name, values['channel'], low, high,
                            math.radians(values['angle_at_min_deg']),
                            math.radians(values['angle_at_max_deg']), values['trim_us'])


def read_aux_servos(params: Mapping[str, Any]) -> tuple[AuxServo, ...]:
    """Return the channels outside the IK chain from the optional ``aux_servos.<name>.*``."""
    table = section(params, 'aux_servos', required=False)
    servos = []
    for name in table:
        values = read_keys(section(table, name, 'aux_servos'), 'aux_servos.*',
                           f'aux_servos.{name}')
        servos.append(AuxServo(str(name), values['channel'], values['min_us'], values['max_us'],
                               values['home_us']))
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


def read_solver(params: Mapping[str, Any]) -> SolverOptions:
    """Return the solver options from the optional ``solver.*`` (defaults where absent).

    Their numeric rules are SolverOptions' own (a node applies them to run-time changes too).
    """
    values = read_keys(section(params, 'solver', required=False), 'solver', 'solver')
    try:
        return SolverOptions(tolerance_m=values['tolerance_m'],
                             max_iterations=values['max_iterations'],
                             min_improvement_m=values['min_improvement_m'],
                             bend=Bend(values['bend']))
    except SolverOptionsError as error:
        raise ArmConfigError(f'solver.{error.name}', error.value, error.rule) from error
