"""A calibration sitting: marks per servo, saved into a copy of the arm file."""

from pathlib import Path

import pytest

from fabrik_ros.kinematics import load_arm
from fabrik_ros.webview import CalibrationError, CalibrationSession, Mark

CONFIG = Path(__file__).resolve().parents[2] / 'config' / 'arm_4dof.yaml'
ARM = load_arm(CONFIG)


def test_marks_saved_into_the_copy_load_with_the_new_calibration(tmp_path):
    session = CalibrationSession(ARM, CONFIG, tmp_path / 'arm.calibrated.yaml')
    session.mark('wrist', Mark.MIN, 2400.0)
    session.mark('wrist', Mark.MAX, 600.0)
    saved = session.save()
    wrist = load_arm(saved.path).servo_map.calibrations[3]
    assert (wrist.min_us, wrist.max_us) == (600.0, 2400.0)
    assert wrist.angle_at_min_rad == pytest.approx(ARM.joints[3].max_rad)
    assert load_arm(CONFIG) == ARM, 'the original file is untouched'


def test_saving_needs_the_arm_file_and_a_mark(tmp_path):
    without_file = CalibrationSession(ARM, None, None)
    without_file.mark('elbow', Mark.ZERO, 1510.0)
    with pytest.raises(CalibrationError) as no_file:
        without_file.save()
    assert 'arm_file' in str(no_file.value)
    with pytest.raises(CalibrationError) as no_marks:
        CalibrationSession(ARM, CONFIG, tmp_path / 'out.yaml').save()
    assert 'at least one marked servo' in str(no_marks.value)


def test_a_mark_for_a_joint_the_arm_lacks_is_refused():
    with pytest.raises(CalibrationError) as refused:
        CalibrationSession(ARM, CONFIG, None).mark('gripper', Mark.MIN, 1000.0)
    assert "'gripper'" in str(refused.value)
