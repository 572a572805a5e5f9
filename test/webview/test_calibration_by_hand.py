"""Calibrating bus servos by hand: counts tracked across the seam, marks into the arm file.

The servo is modelled as the makers document it: the encoder's actual count moves with the
joint, and the count reported is the actual one shifted by the homing offset (Feetech:
Present = Actual - Homing_Offset; Dynamixel: Present = Actual + Homing_Offset), modulo a turn.
"""

import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from fabrik_ros.kinematics import load_arm
from fabrik_ros.webview import CalibrationError, Mark
from fabrik_ros.webview.calibration_by_hand import HandCalibrationSession
from test.kinematics.conftest import CONFIG_DIR

SO101 = CONFIG_DIR / 'so101.yaml'
TURN = 4096
SCALE = TURN / (2 * math.pi)
# Present = Actual + sign * Homing_Offset, as each maker's servo does it (LeRobot's motor bus
# code states both: feetech.py and dynamixel.py, _get_half_turn_homings); stated here, not
# taken from the code under test.
PRESENT_SIGN = {'feetech': -1, 'dynamixel': 1}


class HandHeldServo:
    """One bus servo on a joint, its torque off: where the hand puts the joint, it reports."""

    def __init__(self, actual_at_zero: float, direction: int, protocol: str,
                 homing_offset: int) -> None:
        self.actual_at_zero, self.direction = actual_at_zero, direction
        self.sign, self.homing_offset = PRESENT_SIGN[protocol], homing_offset

    def report(self, position_rad: float) -> int:
        actual = self.actual_at_zero + self.direction * position_rad * SCALE
        return round(actual + self.sign * self.homing_offset) % TURN


def sweep(session, servo: str, model: HandHeldServo, start: float, stop: float) -> None:
    """Move the joint by hand from ``start`` to ``stop`` [rad], reporting every 2 degrees."""
    steps = max(1, int(abs(stop - start) / math.radians(2.0)))
    for index in range(steps + 1):
        session.observe({servo: model.report(start + (stop - start) * index / steps)})


def arm_with_homing_offset(tmp_path: Path, offset: int) -> Path:
    path = tmp_path / 'so101.yaml'
    path.write_text(SO101.read_text().replace(
        '        counts_per_turn: 4096  # STS3215: 12-bit encoder, 4096 counts a turn\n',
        '        counts_per_turn: 4096  # STS3215: 12-bit encoder, 4096 counts a turn\n'
        f'        homing_offset: {offset}  # in the servo\n'))
    return path


def calibrate_by_hand(tmp_path: Path, servo: str, model: HandHeldServo, *, protocol: str,
                      zero: bool = True):
    arm_path = arm_with_homing_offset(tmp_path, model.homing_offset)
    arm = load_arm(arm_path)
    session = HandCalibrationSession(arm, arm_path, tmp_path / 'calibrated.yaml')
    session.set_protocol(protocol)
    index = session.servo_names.index(servo)
    limits = ([(j.min_rad, j.max_rad) for j in arm.joints]
              + [(a.min_rad, a.max_rad) for a in arm.servo_map.aux])[index]
    sweep(session, servo, model, 0.0, limits[0])
    session.mark(servo, Mark.MIN)
    sweep(session, servo, model, limits[0], limits[1])
    session.mark(servo, Mark.MAX)
    if zero:
        sweep(session, servo, model, limits[1], 0.0)
        session.mark(servo, Mark.ZERO)
    return session.save(), limits


@settings(derandomize=True, max_examples=60, deadline=None)
@given(actual_at_zero=st.floats(0.0, TURN - 1), direction=st.sampled_from([1, -1]),
       protocol=st.sampled_from(sorted(PRESENT_SIGN)), offset=st.integers(-2047, 2047),
       zero=st.booleans())
def test_the_saved_calibration_reports_every_position_as_the_servo_will(
        tmp_path_factory, actual_at_zero, direction, protocol, offset, zero):
    # The wrist roll spans 320 deg: wherever the hand finds its seam, the range must fit.
    tmp_path = tmp_path_factory.mktemp('hand')
    model = HandHeldServo(actual_at_zero, direction, protocol, offset)
    saved, (low, high) = calibrate_by_hand(tmp_path, 'wrist_roll', model, protocol=protocol,
                                           zero=zero)
    roll = load_arm(saved.path).servo_map.calibrations[4]
    assert roll.direction == direction
    assert 0 <= roll.low_units and roll.high_units <= TURN - 1
    model.homing_offset = roll.homing_offset       # the driver writes it at connect
    for step in range(41):
        position = low + (high - low) * step / 40
        # Marks at hand-placed ends are whole counts: a count and a half of slack.
        assert roll.unclamped_units(position) == pytest.approx(model.report(position), abs=1.5)


def test_marks_away_from_the_seam_keep_the_homing_offset_and_are_said_in_the_file(tmp_path):
    model = HandHeldServo(2100.0, -1, 'feetech', 0)
    saved, _ = calibrate_by_hand(tmp_path, 'elbow_flex', model, protocol='feetech')
    elbow = saved.arm.servo_map.calibrations[2]
    assert (elbow.zero_count, elbow.direction, elbow.homing_offset) == (2100.0, -1, 0)
    assert '        zero_count: 2100.0  # marked by hand in web_view\n' in saved.path.read_text()
    assert load_arm(SO101).servo_map.calibrations[2].zero_count == 2048.0, 'original untouched'


def test_the_gripper_is_calibrated_into_its_aux_servo_section(tmp_path):
    model = HandHeldServo(1500.0, 1, 'dynamixel', 0)
    saved, _ = calibrate_by_hand(tmp_path, 'gripper', model, protocol='dynamixel')
    (gripper,) = saved.arm.servo_map.aux
    assert (gripper.zero_count, gripper.direction) == (1500.0, 1)


def session_at(tmp_path: Path, offset=None) -> HandCalibrationSession:
    path = SO101 if offset is None else arm_with_homing_offset(tmp_path, offset)
    return HandCalibrationSession(load_arm(path), path, tmp_path / 'out.yaml')


def test_reports_that_are_not_counts_of_the_arms_servos_change_nothing(tmp_path):
    session = session_at(tmp_path)
    session.observe({'elbow_flex': 1000})
    for hostile in (math.nan, math.inf, -1.0, 4096.0, 1e300, 'x', None, True):
        session.observe({'elbow_flex': hostile, 'nobody': 5.0, '': 7.0})
    assert (session.raw('elbow_flex'), session.count('elbow_flex')) == (1000.0, 1000.0)
    assert session.count('nobody') is None


def test_a_mark_before_any_report_or_for_another_servo_is_refused(tmp_path):
    session = session_at(tmp_path)
    with pytest.raises(CalibrationError) as silent:
        session.mark('elbow_flex', Mark.MIN)
    assert 'elbow_flex has reported no count yet' in str(silent.value)
    with pytest.raises(CalibrationError) as unknown:
        session.mark('elbow', Mark.MIN)
    assert "servo 'elbow' is not one of" in str(unknown.value)


def test_ends_that_are_not_the_joints_limits_are_refused_naming_the_spans(tmp_path):
    session = session_at(tmp_path)
    for count, mark in ((1000, Mark.MIN), (1500, Mark.MAX)):
        session.observe({'elbow_flex': count})
        session.mark('elbow_flex', mark)
    with pytest.raises(CalibrationError) as refused:
        session.save()
    assert str(refused.value) == ('elbow_flex marks min 1000 and max 1500 span 500 counts '
                                  '(43.9 deg), but its limits span 193.7 deg: mark the joint at '
                                  'its min_deg and max_deg')


@pytest.mark.parametrize('offset, protocol, needs', [
    (None, 'feetech', 'needs homing_offset in its arm-file section'),
    (0, None, "needs the driver's protocol"),
])
def test_a_range_across_the_seam_needs_the_present_offset_and_the_maker(tmp_path, offset,
                                                                        protocol, needs):
    session = session_at(tmp_path, offset)
    if protocol:
        session.set_protocol(protocol)
    model = HandHeldServo(300.0, 1, 'feetech', offset or 0)
    sweep(session, 'wrist_roll', model, 0.0, math.radians(-157.0))
    session.mark('wrist_roll', Mark.MIN)
    sweep(session, 'wrist_roll', model, math.radians(-157.0), math.radians(162.7))
    session.mark('wrist_roll', Mark.MAX)
    assert session.count('wrist_roll') > TURN - 1 or session.marks('wrist_roll').min_count < 0
    with pytest.raises(CalibrationError) as refused:
        session.save()
    assert str(refused.value).startswith('wrist_roll range crosses the encoder seam')
    assert needs in str(refused.value)


def test_a_protocol_without_bus_servos_is_refused(tmp_path):
    with pytest.raises(CalibrationError) as refused:
        session_at(tmp_path).set_protocol('native')
    assert str(refused.value) == ("protocol = 'native', must be one of ['dynamixel', "
                                  "'feetech'] for bus servos in counts")
