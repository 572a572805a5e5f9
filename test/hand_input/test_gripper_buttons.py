"""The gripper buttons send a command on a press edge only, and refuse malformed Joy input."""

import math

import pytest

from fabrik_ros.driver.aux_axis import aux_axes
from fabrik_ros.hand_input import GripperButtons, Jaw, JawPositions
from fabrik_ros.kinematics import load_arm
from test.package_layout import REPO_ROOT

OPEN, CLOSE = 1, 0


def _feed(buttons, messages):
    return [buttons.feed(pressed, [0.0, 0.0]).jaw for pressed in messages]


def test_a_press_sends_once_a_hold_sends_nothing_more_and_a_release_rearms():
    buttons = GripperButtons(open_button=OPEN, close_button=CLOSE)
    assert _feed(buttons, [[0, 0], [0, 1], [0, 1], [0, 1], [0, 0], [0, 1]]) == [
        None, Jaw.OPEN, None, None, None, Jaw.OPEN]


def test_the_other_button_sends_the_other_command():
    buttons = GripperButtons(open_button=OPEN, close_button=CLOSE)
    assert _feed(buttons, [[0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 0, 0], [0, 1, 0]]) == [
        None, Jaw.OPEN, Jaw.CLOSE, None, Jaw.OPEN]


def test_a_button_held_in_the_first_message_sends_nothing():
    buttons = GripperButtons(open_button=OPEN, close_button=CLOSE)
    assert _feed(buttons, [[0, 1], [0, 1], [0, 0]]) == [None, None, None]


def test_both_pressed_at_once_send_neither():
    buttons = GripperButtons(open_button=OPEN, close_button=CLOSE)
    assert _feed(buttons, [[0, 0], [1, 1], [1, 1], [0, 0]]) == [None, None, None, None]


@pytest.mark.parametrize('buttons,axes,cause,said', [
    ([0], [0.0], 'few', 'has 1 buttons, needs at least 2 (open_button 1, close_button 0)'),
    ([0, 0], [0.0, math.nan], 'axis', 'axes[1] = nan, must be finite'),
    ([0, 0], [math.inf], 'axis', 'axes[0] = inf, must be finite'),
    ([0, 2], [], 'button', 'buttons[1] = 2, must be 0 or 1'),
    ([0] * 65, [], 'size', 'has 65 buttons and 0 axes, at most 64 of each are taken'),
])
def test_a_malformed_message_is_refused_and_changes_nothing(buttons, axes, cause, said):
    core = GripperButtons(open_button=OPEN, close_button=CLOSE)
    core.feed([0, 0], [])
    event = core.feed(buttons, axes)
    assert (event.jaw, event.cause, event.refusal) == (None, cause, said)
    assert core.feed([0, 1], []).jaw is Jaw.OPEN      # the refused one left the state as it was


@pytest.mark.parametrize('open_button,close_button', [(1, 1), (-1, 0), (0, -2)])
def test_the_same_or_a_negative_button_is_refused(open_button, close_button):
    with pytest.raises(ValueError) as refused:
        GripperButtons(open_button=open_button, close_button=close_button)
    assert 'must be two different button indices' in str(refused.value)


def test_the_jaw_positions_lie_in_the_gripper_range_in_its_unit():
    so101 = aux_axes(load_arm(REPO_ROOT / 'config' / 'so101.yaml').servo_map)[0]
    jaws = JawPositions.of(so101, open_fraction=1.0, closed_fraction=0.0)
    assert jaws.positions == (so101.high, so101.low)
    assert jaws.unit == 'rad' and math.isclose(jaws.open_position, math.radians(100.0),
                                                rel_tol=1e-6)
    pwm = aux_axes(load_arm(REPO_ROOT / 'config' / 'arm_6servo.yaml').servo_map)[0]
    jaws = JawPositions.of(pwm, open_fraction=0.75, closed_fraction=0.25)
    assert jaws.positions == (0.75, 0.25) and jaws.position(Jaw.CLOSE) == 0.25


@pytest.mark.parametrize('fraction', [1.5, -0.1, math.nan])
def test_a_fraction_outside_the_range_is_refused(fraction):
    pwm = aux_axes(load_arm(REPO_ROOT / 'config' / 'arm_6servo.yaml').servo_map)[0]
    with pytest.raises(ValueError) as refused:
        JawPositions.of(pwm, open_fraction=fraction, closed_fraction=0.0)
    assert str(refused.value).startswith(f'open_fraction = {fraction}, must be within')
