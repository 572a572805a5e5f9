"""Marks to calibration fields: the line through the marked ends, the trim from the zero."""

import math

import pytest

from fabrik_ros.kinematics import ServoCalibration
from fabrik_ros.kinematics.description.joint import Joint, JointKind
from fabrik_ros.webview import calibrated_fields, CalibrationError, ServoMarks

ELBOW = Joint('elbow', JointKind.PITCH, math.radians(-135.0), math.radians(135.0), 0.0)
CURRENT = ServoCalibration('elbow', 2, 500.0, 2500.0, ELBOW.min_rad, ELBOW.max_rad, 12.0)


def _line(fields):
    return ServoCalibration('elbow', 2, fields['min_us'], fields['max_us'],
                            math.radians(fields['angle_at_min_deg']),
                            math.radians(fields['angle_at_max_deg']), fields['trim_us'])


def test_marked_ends_give_the_line_through_them_and_the_range_between():
    fields = calibrated_fields(CURRENT, ELBOW, ServoMarks(min_us=700.0, max_us=2300.0))
    assert fields == {'min_us': 700.0, 'max_us': 2300.0, 'angle_at_min_deg': -135.0,
                      'angle_at_max_deg': 135.0, 'trim_us': 0.0}
    line = _line(fields)
    assert line.pulse_us(ELBOW.min_rad) == pytest.approx(700.0)
    assert line.pulse_us(ELBOW.max_rad) == pytest.approx(2300.0)


def test_a_servo_mounted_the_other_way_gets_the_angles_swapped_not_the_pulses():
    fields = calibrated_fields(CURRENT, ELBOW, ServoMarks(min_us=2200.0, max_us=800.0))
    assert (fields['min_us'], fields['max_us']) == (800.0, 2200.0)
    assert (fields['angle_at_min_deg'], fields['angle_at_max_deg']) == (135.0, -135.0)
    assert _line(fields).pulse_us(ELBOW.min_rad) == pytest.approx(2200.0)


def test_a_zero_mark_sets_the_trim_so_zero_degrees_lands_on_it():
    fields = calibrated_fields(CURRENT, ELBOW,
                               ServoMarks(min_us=700.0, max_us=2300.0, zero_us=1520.0))
    assert fields['trim_us'] == pytest.approx(20.0)
    assert _line(fields).pulse_us(0.0) == pytest.approx(1520.0)


def test_a_zero_mark_alone_keeps_the_line_and_range_and_replaces_the_trim():
    fields = calibrated_fields(CURRENT, ELBOW, ServoMarks(zero_us=1480.0))
    assert (fields['min_us'], fields['max_us'], fields['trim_us']) == (500.0, 2500.0, -20.0)


@pytest.mark.parametrize('marks, fragment', [
    (ServoMarks(min_us=700.0), 'mark max_us = None, must be marked too'),
    (ServoMarks(min_us=900.0, max_us=900.0), 'min_us = max_us = 900.0'),
    (ServoMarks(zero_us=math.nan), 'zero_us = nan, must be a finite pulse width'),
])
def test_marks_that_make_no_line_are_refused_naming_the_mark(marks, fragment):
    with pytest.raises(CalibrationError) as refused:
        calibrated_fields(CURRENT, ELBOW, marks)
    assert fragment in str(refused.value)
