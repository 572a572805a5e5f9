"""Raw-pulse calibration jogs: the guard, the speed limit as a pulse rate, the board limits."""

import math

import pytest

from fabrik_ros.driver.pulse_jog import JogError, JogGuard, PulseJog
from fabrik_ros.kinematics import ServoCalibration

DEFAULT = JogGuard()
ELBOW = ServoCalibration('elbow', 2, 1000.0, 2000.0, -math.pi / 2, math.pi / 2)


def _jog(guard: JogGuard = DEFAULT) -> PulseJog:
    return PulseJog({'elbow': ELBOW}, guard, min_move_s=0.02)


def test_a_jog_takes_as_long_as_the_speed_limit_needs_on_the_calibration_line():
    jog = _jog()
    first = jog.move('elbow', 1800.0, speed_rad_s=0.5, start_us=1500.0)
    rate_us_s = 0.5 * 1000.0 / math.pi
    assert first.move_s == pytest.approx(300.0 / rate_us_s)
    assert first.angle_rad == pytest.approx(ELBOW.angle_rad(1800.0))
    again = jog.move('elbow', 1800.0, speed_rad_s=0.5, start_us=0.0)
    assert again.move_s == 0.02, 'from the jogged pulse, and never shorter than a period'


def test_the_guard_not_the_calibration_bounds_a_jog_and_opens_only_jogged_channels():
    jog = _jog()
    assert jog.move('elbow', 2400.0, speed_rad_s=1.0, start_us=1500.0).pulse_us == 2400
    limits = [(1000, 2000)] * 4
    assert jog.widened_limits(limits) == ((1000, 2000), (1000, 2000), (500, 2500),
                                          (1000, 2000))
    assert jog.finish() == ('elbow',) and not jog.active


@pytest.mark.parametrize('joint, pulse, fragment', [
    ('elbow', 2501.0, 'jog_us.elbow = 2501.0, must be within the jog guard [500.0, 2500.0]'),
    ('elbow', math.nan, 'jog_us.elbow = nan'),
    ('gripper', 1500.0, "jog_us joint 'gripper' is not one of the arm joints ['elbow']"),
])
def test_a_request_outside_the_rules_is_refused_by_name(joint, pulse, fragment):
    jog = _jog()
    with pytest.raises(JogError) as refused:
        jog.move(joint, pulse, speed_rad_s=1.0, start_us=1500.0)
    assert fragment in str(refused.value)
    assert not jog.active


def test_a_widened_guard_reaches_further_but_not_past_the_protocol():
    wide = JogGuard.of([450.0, 2550.0]).within(400, 2600)
    assert _jog(wide).move('elbow', 2550.0, speed_rad_s=1.0, start_us=1500.0).pulse_us == 2550
    with pytest.raises(JogError) as refused:
        JogGuard.of([450.0, 2550.0]).within(500, 2500)
    assert 'must lie within the protocol pulse range [500, 2500]' in str(refused.value)
    with pytest.raises(JogError):
        JogGuard.of([2500.0, 500.0])
