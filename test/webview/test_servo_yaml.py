"""The calibrated copy of an arm file: comments kept, validated before writing, backups."""

import math
from pathlib import Path

import pytest

from fabrik_ros.kinematics import ArmConfigError, load_arm
from fabrik_ros.webview import save_calibrated_copy, with_servo_values
from fabrik_ros.webview.servo_yaml import save_arm_copy

CONFIG = Path(__file__).resolve().parents[2] / 'config' / 'arm_4dof.yaml'
NEW_ELBOW = {'min_us': 700.0, 'max_us': 2300.0, 'trim_us': 20.0}


def test_only_the_servo_values_change_and_every_comment_stays():
    text = CONFIG.read_text()
    commented = text.replace('        min_us: 500.0\n        max_us: 2500.0\n        '
                             'angle_at_min_deg: -135.0',
                             '        min_us: 500.0  # hits the stop below\n        max_us: '
                             '2500.0\n        angle_at_min_deg: -135.0', 1)
    assert commented != text
    edited = with_servo_values(commented, {'elbow': NEW_ELBOW})
    changed = [(a, b) for a, b in zip(commented.splitlines(), edited.splitlines(),
                                      strict=True) if a != b]
    assert changed == [('        min_us: 500.0  # hits the stop below',
                        '        min_us: 700.0  # hits the stop below'),
                       ('        max_us: 2500.0', '        max_us: 2300.0'),
                       ('        trim_us: 0.0', '        trim_us: 20.0')]


def test_a_key_the_entry_lacks_is_added_to_that_entry(tmp_path):
    source = tmp_path / 'arm.yaml'
    source.write_text(CONFIG.read_text().replace('        trim_us: 0.0\n', '', 1))
    saved = save_calibrated_copy(source, tmp_path / 'out.yaml', {'base_yaw': {'trim_us': -8.0}})
    assert saved.arm.servo_map.calibrations[0].trim_us == -8.0
    assert load_arm(saved.path).servo_map.calibrations[0].trim_us == -8.0


def test_the_copy_loads_and_an_existing_file_is_kept_as_a_backup(tmp_path):
    target = tmp_path / 'calibrated.yaml'
    target.write_text('previous\n')
    saved = save_calibrated_copy(CONFIG, target, {'elbow': NEW_ELBOW})
    assert saved.backup == tmp_path / 'calibrated.yaml.bak'
    assert saved.backup.read_text() == 'previous\n'
    elbow = load_arm(target).servo_map.calibrations[2]
    assert (elbow.min_us, elbow.max_us, elbow.trim_us) == (700.0, 2300.0, 20.0)
    again = save_calibrated_copy(CONFIG, target, {'elbow': NEW_ELBOW})
    assert again.backup == tmp_path / 'calibrated.yaml.bak1'


def test_values_the_loader_refuses_are_never_written(tmp_path):
    target = tmp_path / 'calibrated.yaml'
    with pytest.raises(ArmConfigError) as refused:
        save_calibrated_copy(CONFIG, target, {'elbow': {'min_us': 2600.0, 'max_us': 2300.0}})
    assert 'servos.elbow' in str(refused.value)
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_file_without_a_block_servos_section_is_refused_by_name():
    with pytest.raises(ArmConfigError) as refused:
        with_servo_values('servos: {elbow: {min_us: 500.0}}\n', {'elbow': {'min_us': 600.0}})
    assert 'servos' in str(refused.value) and 'block mapping' in str(refused.value)


def test_a_bus_calibration_sets_ints_as_ints_limits_and_new_comments(tmp_path):
    so101 = CONFIG.parent / 'so101.yaml'
    values = {'servos': {'elbow_flex': {'zero_count': 1992.5, 'direction': -1,
                                        'homing_offset': -12}},
              'joints': {'elbow_flex': {'max_deg': 80.25}}}
    comments = {'servos': {'elbow_flex': {'zero_count': 'marked\nby hand'}}}
    saved = save_arm_copy(so101, tmp_path / 'out.yaml', values, comments)
    text = saved.path.read_text()
    assert '        zero_count: 1992.5  # marked by hand\n' in text
    assert '        direction: -1  # the count rises' in text       # its comment kept
    assert '        homing_offset: -12\n' in text                   # added, an int
    elbow = saved.arm.servo_map.calibrations[2]
    assert (elbow.zero_count, elbow.direction, elbow.homing_offset) == (1992.5, -1, -12)
    assert saved.arm.joints[2].max_rad == pytest.approx(math.radians(80.25))
