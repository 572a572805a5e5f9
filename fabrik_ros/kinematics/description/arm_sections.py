"""The arm file's sections read into the arm's parts, and the rules on the arm as a whole.

Each key's own rules (type, range, choices, default, a sibling it must stay below) are the
schema's (arm_keys.py), applied by the readers (key_readers.py). What is checked here spans
keys the schema cannot tie: the shape of the chain, a list as long as the pitch joints ask,
the pulse range a trim must fit in, a channel used twice, one servo family (pulse or count)
for the whole arm, a count range inside the encoder's turn.
"""

from collections.abc import Mapping
import math
from typing import Any

from fabrik_ros.kinematics.description.arm_keys import family_of, MISSING, TOP_KEYS
from fabrik_ros.kinematics.description.count_calibration import (
    CountAuxServo,
    CountCalibration,
    shifted_offset,
)
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
from fabrik_ros.kinematics.description.servo_map import (
    AnyAuxServo,
    AuxServo,
    Calibration,
    ServoCalibration,
)
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


def servo_family(params: Mapping[str, Any]) -> tuple[str, str]:
    """Return the arm's servo family ('pulse' or 'count') and the section that sets it.

    The first section under ``servos`` sets it: a bus servo's keys (``id``, ``zero_count``,
    ...) make it 'count', anything else 'pulse'.
    """
    table = params.get('servos')
    if not isinstance(table, Mapping) or not table:
        return 'pulse', 'servos'
    name, entry = next(iter(table.items()))
    if isinstance(entry, Mapping) and any(family_of('servos', str(k)) == 'count' for k in entry):
        return 'count', f'servos.{name}'
    return 'pulse', f'servos.{name}'


def _check_family(entry: Mapping[str, Any], path: str, family: tuple[str, str]) -> None:
    """Refuse a key of the other servo family: an arm file is all-pulse or all-count."""
    wanted, setter = family
    top = path.split('.')[0]
    for key, value in entry.items():
        found = family_of(top, str(key))
        if found and found != wanted:
            raise ArmConfigError(join(path, str(key)), value,
                                 f'is a {found} servo key, but {setter} is a {wanted} servo: '
                                 'an arm file is all-pulse (channel, min_us, max_us, ...) or '
                                 'all-count (id, zero_count, direction, ...)')


def read_servos(params: Mapping[str, Any],
                joints: tuple[Joint, ...]) -> tuple[Calibration, ...]:
    """Return one calibration per joint from ``servos.<joint>.*``, all of one family."""
    table = section(params, 'servos')
    names = [j.name for j in joints]
    reject_unknown(table, names, 'servos')
    family = servo_family(params)
    calibrations: list[Calibration] = []
    for joint in joints:
        entry = section(table, joint.name, 'servos')
        _check_family(entry, f'servos.{joint.name}', family)
        calibrations.append(_read_count_servo(entry, joint) if family[0] == 'count'
                            else _read_servo(entry, joint.name))
    return tuple(calibrations)


def _read_servo(entry: Mapping[str, Any], name: str) -> ServoCalibration:
    """Return one calibration: distinct end angles, a trim that fits in the pulse range."""
    path = f'servos.{name}'
    values = read_keys(entry, 'servos.*', path, family='pulse')
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


def _read_count_servo(entry: Mapping[str, Any], joint: Joint) -> CountCalibration:
    """Return one bus servo's calibration: its joint's range inside the encoder's turn."""
    path = f'servos.{joint.name}'
    values = read_keys(entry, 'servos.*', path, family='count')
    _check_homing_offset(values, path)
    calibration = CountCalibration(joint.name, values['id'], values['zero_count'],
                                   values['direction'], joint.min_rad, joint.max_rad,
                                   values['counts_per_turn'], values['homing_offset'])
    _check_within_turn(calibration.low_units, calibration.high_units, values, path,
                       f'joints.{joint.name}', (joint.min_rad, joint.max_rad))
    return calibration


def _check_homing_offset(values: Mapping[str, Any], path: str) -> None:
    """Require a homing offset smaller in size than a turn (a turn more shifts nothing)."""
    offset, turn = values['homing_offset'], values['counts_per_turn']
    if offset is not None and abs(offset) >= turn:
        raise ArmConfigError(join(path, 'homing_offset'), offset,
                             f'must be smaller in size than counts_per_turn ({turn})')


def _check_within_turn(low: float, high: float, values: Mapping[str, Any], path: str,
                       range_key: str, range_rad: tuple[float, float]) -> None:
    """Refuse counts outside the encoder's 0 .. counts_per_turn - 1, naming the fix.

    A position-mode bus servo cannot be driven across the seam where its count wraps from
    counts_per_turn - 1 to 0 (a goal past it runs the long way round). The homing-offset
    register shifts the counts the servo reports and takes: the fix is the shift that centres
    the range in the turn, written per maker (:func:`shifted_offset`).
    """
    turn, zero = values['counts_per_turn'], values['zero_count']
    if 0.0 <= low and high <= turn - 1:
        return
    shown = (f"puts {range_key}'s range [{math.degrees(range_rad[0]):g}, "
             f'{math.degrees(range_rad[1]):g}] deg at counts {low:.1f} .. {high:.1f}, outside '
             f"the encoder's 0 .. {turn - 1}")
    if high - low > turn - 1:
        raise ArmConfigError(join(path, 'zero_count'), zero,
                             f'{shown}: the range spans more than one turn of the encoder')
    shift = round((turn - 1) / 2.0 - (low + high) / 2.0)
    offset = values['homing_offset'] or 0
    raise ArmConfigError(
        join(path, 'zero_count'), zero,
        f'{shown}: the range crosses the seam where the count wraps. Shift the counts by '
        f"{shift:+d} with the servo's homing offset (Feetech: homing_offset: "
        f'{shifted_offset(offset, shift, -1, turn)}; Dynamixel: homing_offset: '
        f'{shifted_offset(offset, shift, 1, turn)}) and set zero_count: {zero + shift:g}')


def read_aux_servos(params: Mapping[str, Any]) -> tuple[AnyAuxServo, ...]:
    """Return the servos outside the IK chain from the optional ``aux_servos.<name>.*``.

    They are of the family the joints' servos are (see :func:`servo_family`).
    """
    table = section(params, 'aux_servos', required=False)
    family = servo_family(params)
    servos: list[AnyAuxServo] = []
    for name in table:
        path = f'aux_servos.{name}'
        entry = section(table, name, 'aux_servos')
        _check_family(entry, path, family)
        values = read_keys(entry, 'aux_servos.*', path, family=family[0])
        if family[0] == 'pulse':
            servos.append(AuxServo(str(name), values['channel'], values['min_us'],
                                   values['max_us'], values['home_us']))
            continue
        _check_homing_offset(values, path)
        low, high, home = (math.radians(values[k]) for k in ('min_deg', 'max_deg', 'home_deg'))
        servo = CountAuxServo(str(name), values['id'], values['zero_count'],
                              values['direction'], low, high, home,
                              values['counts_per_turn'], values['homing_offset'])
        _check_within_turn(servo.low_units, servo.high_units, values, path, path, (low, high))
        servos.append(servo)
    return tuple(servos)


def check_channels(calibrations: tuple[Calibration, ...],
                   aux: tuple[AnyAuxServo, ...]) -> None:
    """Require every servo, joint or auxiliary, to have a channel (bus id) of its own."""
    seen: dict[int, str] = {}
    for path, servo in ([(f'servos.{c.joint}', c) for c in calibrations]
                        + [(f'aux_servos.{a.name}', a) for a in aux]):
        key = 'id' if servo.unit == 'count' else 'channel'
        if servo.channel in seen:
            raise ArmConfigError(f'{path}.{key}', servo.channel,
                                 f'is already used by {seen[servo.channel]}')
        seen[servo.channel] = path


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
