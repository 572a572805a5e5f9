"""The keyboard jog: a key moves while held, stops after its repeats end, zero twist once."""

import pytest

from fabrik_ros.hand_input import KeyJog, KeyJogSettings, Twist
from fabrik_ros.hand_input.key_jog import KeyAction

SETTINGS = KeyJogSettings(linear_m_s=0.1, angular_rad_s=1.0, tap_hold_s=0.5,
                          repeat_hold_s=0.1)


def test_a_single_press_moves_for_the_tap_hold_then_sends_one_zero_then_nothing():
    jog = KeyJog(SETTINGS)
    assert jog.tick(0.0) is None
    assert jog.key('w', now_s=0.0) is KeyAction.MOVE
    assert [jog.tick(t) for t in (0.1, 0.45)] == [Twist((0.1, 0.0, 0.0))] * 2
    assert jog.tick(0.55) == Twist()
    assert jog.tick(0.6) is None and jog.tick(5.0) is None


def test_auto_repeats_keep_it_moving_and_it_stops_a_repeat_hold_after_the_last():
    jog = KeyJog(SETTINGS)
    jog.key('r', now_s=0.0)
    for t in (0.45, 0.48, 0.51, 0.54, 0.57, 0.60, 0.63):      # the repeats, 30 ms apart
        jog.key('r', now_s=t)
        assert jog.tick(t) == Twist((0.0, 0.0, 0.1))
    assert jog.tick(0.72) == Twist((0.0, 0.0, 0.1))           # within 0.1 s of the last
    assert jog.tick(0.74).is_zero
    assert jog.tick(0.76) is None


def test_keys_of_two_axes_add_up_and_the_opposite_key_replaces_the_direction():
    jog = KeyJog(SETTINGS)
    jog.key('w', now_s=0.0)
    jog.key('a', now_s=0.0)
    jog.key('j', now_s=0.0)
    assert jog.tick(0.1) == Twist((0.1, 0.1, 0.0), (0.0, 0.0, 1.0))
    jog.key('s', now_s=0.2)
    assert jog.tick(0.3) == Twist((-0.1, 0.1, 0.0), (0.0, 0.0, 1.0))


def test_space_stops_at_once_with_one_zero_twist():
    jog = KeyJog(SETTINGS)
    jog.key('i', now_s=0.0)
    assert jog.tick(0.05) == Twist((0.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    assert jog.key(' ', now_s=0.06) is KeyAction.STOP
    assert jog.tick(0.07) == Twist()
    assert jog.tick(0.08) is None


def test_faster_and_slower_scale_the_speed_within_bounds():
    jog = KeyJog(KeyJogSettings(speed_step=2.0, min_scale=0.25, max_scale=2.0))
    assert [jog.key(k, now_s=0.0) for k in '++'] == [KeyAction.FASTER] * 2
    assert jog.scale == 2.0
    for _ in range(5):
        jog.key('-', now_s=0.0)
    assert jog.scale == 0.25
    jog.key('d', now_s=0.0)
    assert jog.tick(0.1) == Twist((0.0, -0.05 * 0.25, 0.0))


@pytest.mark.parametrize('char,action', [('o', KeyAction.OPEN), ('c', KeyAction.CLOSE),
                                         ('q', KeyAction.QUIT), ('\x03', KeyAction.QUIT),
                                         ('x', KeyAction.NONE), ('\x1b', KeyAction.NONE)])
def test_the_other_keys_say_what_they_ask_and_move_nothing(char, action):
    jog = KeyJog(SETTINGS)
    assert jog.key(char, now_s=0.0) is action
    assert jog.tick(0.1) is None


@pytest.mark.parametrize('given,said', [({'tap_hold_s': 0.0}, 'tap_hold_s = 0.0'),
                                        ({'linear_m_s': -1.0}, 'linear_m_s = -1.0'),
                                        ({'speed_step': 1.0}, 'speed_step = 1.0')])
def test_settings_that_cannot_work_are_refused(given, said):
    with pytest.raises(ValueError) as refused:
        KeyJogSettings(**given)
    assert str(refused.value).startswith(said)
