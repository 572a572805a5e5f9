"""A LeRobot calibration file read into an arm file's bus servo sections.

LeRobot (huggingface/lerobot) saves one JSON object per arm: per motor name, ``id``,
``drive_mode``, ``homing_offset``, ``range_min`` and ``range_max``. Its calibration poses the
arm at the middle of every joint's range, writes each servo's homing offset so that it reads
half a turn there, records each joint's range and writes it into the servos' position-limit
registers. In its degrees mode a joint's angle is ``(count - (range_min + range_max) / 2) *
360 / 4095`` (drive_mode plays no part), and those angles are the joint positions of the
SO-101's ``so101_new_calib`` URDF. Read that way, each servo becomes:

- ``zero_count = (range_min + range_max) / 2``, ``direction = 1``, ``homing_offset`` copied
  (LeRobot has written it into the servo; the driver re-writes it where the servo differs);
- its joint limits: the arm file's, narrowed to the recorded range where that is narrower (the
  servo's limit registers hold the recorded range, so a goal beyond it would be cut by the
  servo; where the arm file's limit is narrower it is the design's, and stays); the home is
  kept inside.

Everything in the file is refused unless it is exactly that (the file comes from elsewhere):
malformed JSON, a duplicated key, a motor the arm lacks or an arm servo missing, an id that
differs from the arm file's, a range outside the encoder's turn, a file larger than any
calibration.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import json
import math
from pathlib import Path
from typing import Any, Union

from fabrik_ros.kinematics import Arm, CountAuxServo, CountCalibration

# A calibration of six motors is about 700 bytes; a file this large is not one.
MAX_FILE_BYTES = 65_536
FIELDS = ('id', 'drive_mode', 'homing_offset', 'range_min', 'range_max')
# Joint limits narrowed to a recorded range are rounded inward to this [deg], so that the
# limits written load inside the range (and inside the encoder's turn).
_LIMIT_STEP_DEG = 1e-6

Servo = Union[CountCalibration, CountAuxServo]


class LeRobotCalibrationError(ValueError):
    """A LeRobot calibration file that cannot be read into the arm file, and why (one line)."""


@dataclass(frozen=True)
class MotorCalibration:
    """One motor of a LeRobot calibration file (counts of its encoder)."""

    name: str
    id: int
    drive_mode: int
    homing_offset: int
    range_min: int
    range_max: int


@dataclass(frozen=True)
class ServoImport:
    """What one servo's section (and its limits) becomes."""

    section: str             # 'servos' or 'aux_servos'
    name: str
    zero_count: float
    homing_offset: int
    limits_deg: tuple[float, float, float]    # min, max, home
    narrowed: tuple[str, ...]                 # which of min_deg, max_deg, home_deg changed
    motor: MotorCalibration


def read_calibration_file(path: Path) -> dict[str, MotorCalibration]:
    """Return the motors of a LeRobot calibration file, by name.

    :raises LeRobotCalibrationError: the file is too large, not UTF-8 JSON, or not a mapping
        of motor names to the five integer fields
    :raises OSError: the file cannot be read
    """
    with path.open('rb') as stream:
        data = stream.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise LeRobotCalibrationError(f'{path.name}: more than {MAX_FILE_BYTES} bytes, not a '
                                      'LeRobot calibration file')
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as error:
        raise LeRobotCalibrationError(f'{path.name}: not UTF-8 text ({error.reason} at byte '
                                      f'{error.start})') from None
    return parse_calibration(text, path.name)


def parse_calibration(text: str, source: str) -> dict[str, MotorCalibration]:
    """Return the motors of LeRobot calibration JSON ``text``, by name.

    >>> parse_calibration('{"gripper": {"id": 6, "drive_mode": 0, "homing_offset": 12, '
    ...                   '"range_min": 2010, "range_max": 3390}}', 'cal.json')['gripper'].id
    6

    :raises LeRobotCalibrationError: naming the motor, the field and the rule
    """
    try:
        document = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise LeRobotCalibrationError(f'{source}: not JSON ({error.msg} at line {error.lineno} '
                                      f'column {error.colno})') from None
    except RecursionError:
        raise LeRobotCalibrationError(f'{source}: nested too deeply to be a calibration '
                                      'file') from None
    except _DuplicateKeyError as error:
        raise LeRobotCalibrationError(f'{source}: key {error.args[0]!r} appears twice') from None
    if not isinstance(document, dict) or not document:
        raise LeRobotCalibrationError(f'{source}: must be a JSON object of motor names, each '
                                      f'with {", ".join(FIELDS)}')
    motors = {name: _motor(source, name, entry) for name, entry in document.items()}
    seen: dict[int, str] = {}
    for motor in motors.values():
        if motor.id in seen:
            raise LeRobotCalibrationError(f'{source}: {motor.name}.id = {motor.id}, is already '
                                          f'the id of {seen[motor.id]}')
        seen[motor.id] = motor.name
    return motors


class _DuplicateKeyError(Exception):
    """A JSON object holds a key twice (json keeps the last without a word)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = value
    return result


def _motor(source: str, name: str, entry: Any) -> MotorCalibration:
    """Return one motor's entry, each field an integer, drive_mode 0 or 1."""
    if not isinstance(entry, dict) or set(entry) != set(FIELDS):
        keys = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
        raise LeRobotCalibrationError(f'{source}: {name} = {_short(keys)}, must be an object '
                                      f'with exactly {", ".join(FIELDS)}')
    for field in FIELDS:
        value = entry[field]
        if isinstance(value, bool) or not isinstance(value, int):
            raise LeRobotCalibrationError(f'{source}: {name}.{field} = {_short(value)}, must be '
                                          'an integer')
    if entry['drive_mode'] not in (0, 1):
        raise LeRobotCalibrationError(f'{source}: {name}.drive_mode = {entry["drive_mode"]}, '
                                      'must be 0 or 1')
    if entry['range_min'] >= entry['range_max']:
        raise LeRobotCalibrationError(f'{source}: {name}.range_min = {entry["range_min"]}, '
                                      f'must be < range_max ({entry["range_max"]})')
    return MotorCalibration(name, *(int(entry[field]) for field in FIELDS))


def _short(value: Any) -> str:
    """Return ``repr(value)`` cut to a line's worth (the file is not ours to echo whole)."""
    text = repr(value)
    return text if len(text) <= 60 else f'{text[:57]}...'


def import_servos(arm: Arm, motors: Mapping[str, MotorCalibration],
                  source: str) -> list[ServoImport]:
    """Return each of the arm's bus servos as the LeRobot motors calibrate it.

    :raises ArmConfigError: if the arm's servos are not calibrated in counts
    :raises LeRobotCalibrationError: a servo missing from the file or the file naming one the
        arm lacks, an id that differs, a range outside the turn, limits that do not overlap
    """
    joints, aux = arm.servo_map.count_servos()
    servos: list[tuple[str, Servo, tuple[float, float, float]]] = [
        ('servos', cal, (joint.min_rad, joint.max_rad, joint.home_rad))
        for cal, joint in zip(joints, arm.joints, strict=True)]
    servos += [('aux_servos', servo, (servo.min_rad, servo.max_rad, servo.home_rad))
               for servo in aux]
    names = [_name(servo) for _, servo, _ in servos]
    for name in motors:
        if name not in names:
            raise LeRobotCalibrationError(f'{source}: motor {name!r} is not a servo of the arm '
                                          f'file (its servos: {", ".join(names)})')
    return [_import(section, servo, limits, _motor_of(motors, _name(servo), source), source)
            for section, servo, limits in servos]


def _name(servo: Servo) -> str:
    return servo.joint if isinstance(servo, CountCalibration) else servo.name


def _motor_of(motors: Mapping[str, MotorCalibration], name: str,
              source: str) -> MotorCalibration:
    if name not in motors:
        raise LeRobotCalibrationError(f'{source}: motor {name!r} is missing (the arm file has a '
                                      f'servo {name}; the file has {", ".join(motors)})')
    return motors[name]


def _import(section: str, servo: Servo, limits_rad: tuple[float, float, float],
            motor: MotorCalibration, source: str) -> ServoImport:
    """Return one servo's new zero, offset and limits, or refuse the motor."""
    turn, name = servo.counts_per_turn, motor.name
    if motor.id != servo.channel:
        raise LeRobotCalibrationError(f'{source}: {name}.id = {motor.id}, but the arm file '
                                      f'gives {section}.{name}.id = {servo.channel}')
    for field in ('range_min', 'range_max'):
        value = getattr(motor, field)
        if not 0 <= value <= turn - 1:
            raise LeRobotCalibrationError(f'{source}: {name}.{field} = {value}, must be within '
                                          f'[0, {turn - 1}] (counts of a {turn}-count turn)')
    if abs(motor.homing_offset) >= turn:
        raise LeRobotCalibrationError(f'{source}: {name}.homing_offset = {motor.homing_offset}, '
                                      f'must be smaller in size than a turn ({turn})')
    zero = (motor.range_min + motor.range_max) / 2.0
    recorded = (_inward((motor.range_min - zero) * 360.0 / turn, up=True),
                _inward((motor.range_max - zero) * 360.0 / turn, up=False))
    low, high, home = (math.degrees(v) for v in limits_rad)
    new_low, new_high = max(low, recorded[0]), min(high, recorded[1])
    if new_low >= new_high:
        raise LeRobotCalibrationError(
            f'{source}: {name} recorded range [{recorded[0]:g}, {recorded[1]:g}] deg does not '
            f"overlap the arm file's limits [{low:g}, {high:g}] deg")
    new_home = min(max(home, new_low), new_high)
    narrowed = tuple(key for key, old, new in (('min_deg', low, new_low),
                                               ('max_deg', high, new_high),
                                               ('home_deg', home, new_home)) if new != old)
    return ServoImport(section, name, zero, motor.homing_offset, (new_low, new_high, new_home),
                       narrowed, motor)


def _inward(value_deg: float, *, up: bool) -> float:
    """Return ``value_deg`` rounded to the limit step, toward the inside of the range."""
    steps = value_deg / _LIMIT_STEP_DEG
    return round((math.ceil(steps) if up else math.floor(steps)) * _LIMIT_STEP_DEG, 6)


def arm_edits(imports: Sequence[ServoImport], source: str) -> tuple[
        dict[str, dict[str, dict[str, Union[float, int]]]],
        dict[str, dict[str, dict[str, str]]]]:
    """Return the arm-file values and their comments that the imported servos set."""
    values: dict[str, dict[str, dict[str, Union[float, int]]]] = {}
    comments: dict[str, dict[str, dict[str, str]]] = {}
    for item in imports:
        motor = item.motor
        values.setdefault(item.section, {})[item.name] = {
            'zero_count': item.zero_count, 'direction': 1, 'homing_offset': item.homing_offset}
        comments.setdefault(item.section, {})[item.name] = {
            'zero_count': f'(range_min {motor.range_min} + range_max {motor.range_max}) / 2, '
                          f'LeRobot calibration {source}',
            'direction': f"LeRobot's degrees rise with the count (drive_mode "
                         f'{motor.drive_mode} plays no part in them)',
            'homing_offset': f"LeRobot's homing_offset, in the servo's register ({source})"}
        limits_section = 'joints' if item.section == 'servos' else item.section
        low, high, home = item.limits_deg
        new = {'min_deg': low, 'max_deg': high, 'home_deg': home}
        for key in item.narrowed:
            values.setdefault(limits_section, {}).setdefault(item.name, {})[key] = new[key]
            comments.setdefault(limits_section, {}).setdefault(item.name, {})[key] = (
                f'narrowed to the range LeRobot recorded ({source}: range_min '
                f'{motor.range_min}, range_max {motor.range_max})' if key != 'home_deg' else
                'moved inside the limits narrowed to the range LeRobot recorded')
    return values, comments
