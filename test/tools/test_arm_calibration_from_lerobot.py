"""arm_calibration_from_lerobot, run as a subprocess: LeRobot's calibration into the arm file.

A written copy holds each bus servo's zero at the middle of LeRobot's recorded range, LeRobot's
homing offset, and the joint limits narrowed to the recorded range where it is narrower; its
angles are LeRobot's degrees-mode angles. Every refusal is exit status 1, one line on stderr,
no traceback, nothing written.
"""

import json
import math
from pathlib import Path
import subprocess
import sys

import pytest

from fabrik_ros.kinematics import load_arm
from test.tools.conftest import REPO_ROOT

SO101 = REPO_ROOT / 'config' / 'so101.yaml'
PROG = 'arm_calibration_from_lerobot'
# A LeRobot SO-101 follower calibration as lerobot-calibrate saves it (numbers of a plausible
# arm: the middle pose near 2047, the wrist roll given the whole turn).
MOTORS = {
    'shoulder_pan': {'id': 1, 'drive_mode': 0, 'homing_offset': -1470, 'range_min': 758,
                     'range_max': 3292},
    'shoulder_lift': {'id': 2, 'drive_mode': 0, 'homing_offset': 153, 'range_min': 816,
                      'range_max': 3333},
    'elbow_flex': {'id': 3, 'drive_mode': 0, 'homing_offset': -1192, 'range_min': 891,
                   'range_max': 3094},
    'wrist_flex': {'id': 4, 'drive_mode': 0, 'homing_offset': 1415, 'range_min': 872,
                   'range_max': 3197},
    'wrist_roll': {'id': 5, 'drive_mode': 0, 'homing_offset': -1000, 'range_min': 0,
                   'range_max': 4095},
    'gripper': {'id': 6, 'drive_mode': 0, 'homing_offset': 1500, 'range_min': 2031,
                'range_max': 3476},
}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', f'fabrik_ros.tools.{PROG}', *args],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)


def calibrate(tmp_path: Path, content, arm: Path = SO101) -> tuple[subprocess.CompletedProcess,
                                                                     Path]:
    source = tmp_path / 'follower.json'
    if isinstance(content, bytes):
        source.write_bytes(content)
    else:
        source.write_text(content if isinstance(content, str) else json.dumps(content))
    out = tmp_path / 'so101_calibrated.yaml'
    return run(str(source), str(arm), '-o', str(out)), out


def lerobot_degrees(count: float, motor: dict) -> float:
    """LeRobot's degrees-mode angle of a count (motors_bus.py, MotorNormMode.DEGREES)."""
    middle = (motor['range_min'] + motor['range_max']) / 2
    return (count - middle) * 360 / 4095


def test_the_copy_drives_each_joint_at_lerobots_angles_and_keeps_the_servos_limits(tmp_path):
    result, out = calibrate(tmp_path, MOTORS)
    assert result.returncode == 0, result.stderr
    assert result.stderr == '' and result.stdout.count('\n') == 1
    assert result.stdout.startswith(f'wrote {out}: 6 bus servos from LeRobot (ids 1, 2, 3, 4, '
                                    '5, 6); limits narrowed to the recorded ranges: '
                                    'elbow_flex (min_deg, max_deg); gripper (max_deg)')
    arm = load_arm(out)
    shipped = load_arm(SO101)
    servos = (*arm.servo_map.calibrations, *arm.servo_map.aux)
    for servo, motor in zip(servos, MOTORS.values(), strict=True):
        assert (servo.channel, servo.direction, servo.homing_offset) == (
            motor['id'], 1, motor['homing_offset'])
        assert servo.low_units >= motor['range_min'] and servo.high_units <= motor['range_max']
        for count in range(max(motor['range_min'], round(servo.low_units)),
                           min(motor['range_max'], round(servo.high_units)), 97):
            # LeRobot scales by 4095 counts a turn, the encoder (and we) by 4096: 1 part in 4095.
            assert math.degrees(servo.angle_rad(count)) == pytest.approx(
                lerobot_degrees(count, motor), rel=1 / 4095 + 1e-9, abs=1e-9)
    for joint, before in zip(arm.joints, shipped.joints, strict=True):
        assert before.min_rad <= joint.min_rad < joint.max_rad <= before.max_rad
    elbow = arm.joints[2]
    assert math.degrees(elbow.max_rad) == pytest.approx((3094 - 1992.5) * 360 / 4096, abs=1e-6)
    assert arm.joints[4] == shipped.joints[4]     # the roll's URDF range is the narrower
    text = out.read_text()
    assert 'zero_count: 1992.5  # (range_min 891 + range_max 3094) / 2, LeRobot calibration ' \
        'follower.json' in text
    assert text.count('# SO-101 follower arm') == 1       # the file's own text is kept


def test_an_existing_output_is_kept_as_a_backup(tmp_path):
    (tmp_path / 'so101_calibrated.yaml').write_text('mine\n')
    result, out = calibrate(tmp_path, MOTORS)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / 'so101_calibrated.yaml.bak').read_text() == 'mine\n'
    assert result.stdout.rstrip().endswith(f'the previous file kept as {out}.bak')


def changed(motor: str, **fields) -> dict:
    motors = json.loads(json.dumps(MOTORS))
    motors[motor].update(fields)
    return motors


def without(motor: str) -> dict:
    return {name: entry for name, entry in MOTORS.items() if name != motor}


HOSTILE = [
    ('{"shoulder_pan": {"id": 1,', 'follower.json: not JSON (Expecting'),
    (b'\xff\xfe{}', 'follower.json: not UTF-8 text'),
    ('[' * 100_000, 'follower.json: '),
    ('[1, 2]', 'follower.json: must be a JSON object of motor names'),
    ('{}', 'follower.json: must be a JSON object of motor names'),
    ('{"gripper": {"id": 6, "id": 7, "drive_mode": 0, "homing_offset": 0, "range_min": 1, '
     '"range_max": 2}}', "follower.json: key 'id' appears twice"),
    (' ' * 70_000 + '{}', 'follower.json: more than 65536 bytes'),
    (without('gripper'), "follower.json: motor 'gripper' is missing"),
    ({**MOTORS, 'elbow': dict(MOTORS['elbow_flex'], id=7)},
     "follower.json: motor 'elbow' is not a servo of the arm file"),
    (changed('elbow_flex', id=7), 'follower.json: elbow_flex.id = 7, but the arm file gives '
     'servos.elbow_flex.id = 3'),
    (changed('elbow_flex', id=2), 'follower.json: elbow_flex.id = 2, is already the id of '
     'shoulder_lift'),
    (changed('wrist_flex', range_max=4096), 'follower.json: wrist_flex.range_max = 4096, must '
     'be within [0, 4095]'),
    (changed('wrist_flex', range_min=-5), 'follower.json: wrist_flex.range_min = -5, must be '
     'within [0, 4095]'),
    (changed('wrist_flex', range_min=3197), 'follower.json: wrist_flex.range_min = 3197, must '
     'be < range_max (3197)'),
    (changed('gripper', homing_offset=5000), 'follower.json: gripper.homing_offset = 5000, '
     'must be smaller in size than a turn (4096)'),
    (changed('gripper', drive_mode=2), 'follower.json: gripper.drive_mode = 2, must be 0 or 1'),
    (changed('gripper', range_min=True), 'follower.json: gripper.range_min = True, must be an '
     'integer'),
    (changed('gripper', range_min=2031.5), 'follower.json: gripper.range_min = 2031.5, must be '
     'an integer'),
    (changed('gripper', calibrated='yes'), 'follower.json: gripper = '),
]


@pytest.mark.parametrize('content, message', HOSTILE,
                         ids=[f'hostile{index}' for index in range(len(HOSTILE))])
def test_a_calibration_that_does_not_fit_the_arm_is_refused_in_one_line(tmp_path, content,
                                                                        message):
    result, out = calibrate(tmp_path, content)
    assert result.returncode == 1
    assert result.stdout == ''
    assert result.stderr.startswith(f'{PROG}: {message}'), result.stderr
    assert result.stderr.count('\n') == 1 and 'Traceback' not in result.stderr
    assert len(result.stderr) < 400
    assert not out.exists()


def test_a_recorded_range_beside_the_arms_limits_is_refused(tmp_path):
    arm = tmp_path / 'lifted.yaml'
    arm.write_text(SO101.read_text().replace(
        'min_deg: -100.000042858', 'min_deg: 20.0', 1).replace('home_deg: 0.0', 'home_deg: 30.0'))
    result, out = calibrate(tmp_path, changed('shoulder_lift', range_min=3300, range_max=3333),
                            arm)
    assert result.returncode == 1
    assert result.stderr == (f'{PROG}: follower.json: shoulder_lift recorded range [-1.45019, '
                             "1.45019] deg does not overlap the arm file's limits [20, "
                             '100] deg\n')
    assert not out.exists()


def test_an_arm_file_with_pulse_servos_is_refused_naming_the_fix(tmp_path):
    result, out = calibrate(tmp_path, MOTORS, REPO_ROOT / 'config' / 'arm_6servo.yaml')
    assert result.returncode == 1
    assert result.stderr == (f"{PROG}: servos = 'us', are calibrated in pulse widths; bus "
                             'servos need counts (id, zero_count, direction)\n')
    assert not out.exists()


def test_a_missing_calibration_file_is_refused_in_one_line(tmp_path):
    out = tmp_path / 'out.yaml'
    result = run(str(tmp_path / 'none.json'), str(SO101), '-o', str(out))
    assert result.returncode == 1
    assert result.stderr.startswith(f'{PROG}: ') and 'No such file' in result.stderr
    assert result.stderr.count('\n') == 1
