"""SlewLimiter and MotionPlanner: speed-limited steps after a slow, safe move home."""

import math
import random

import pytest

from fabrik_ros.driver.motion import MotionPlanner, Send
from fabrik_ros.driver.slew import SlewLimiter

HOME = (0.0, 1.0)
STEP_S = 0.1


def test_slew_limits_each_joint_to_its_own_speed():
    slew = SlewLimiter((1.0, 0.5))
    assert slew.step((0.0, 0.0), (1.0, -1.0), 0.2) == pytest.approx((0.2, -0.1))
    assert slew.step((0.0, 0.0), (0.05, 0.0), 0.2) == (0.05, 0.0), 'no overshoot'
    assert slew.duration_s((0.0, 0.0), (1.0, 1.0)) == pytest.approx(2.0)


def test_slew_refuses_a_non_positive_speed_and_a_wrong_length():
    with pytest.raises(ValueError) as raised:
        SlewLimiter((1.0, 0.0))
    assert 'speeds_rad_s[1] = 0.0' in str(raised.value)
    with pytest.raises(ValueError) as raised:
        SlewLimiter((1.0,)).step((0.0, 0.0), (0.0, 0.0), 0.1)
    assert 'must both have 1' in str(raised.value)


def _planner(speed: float, home_move_s: float) -> MotionPlanner:
    return MotionPlanner(SlewLimiter((speed, speed)), HOME, home_move_s=home_move_s,
                         step_s=STEP_S)


def test_nothing_is_sent_before_the_start_and_the_start_goes_home_slowly():
    planner = _planner(1.0, 2.0)
    planner.command((0.5, 0.5))
    assert planner.step(10.0) is None
    assert planner.start(10.0, None) == Send(HOME, 2.0)
    assert planner.target == (0.5, 0.5), 'a command from before the start is kept'
    assert planner.step(11.0) is None, 'still homing'
    assert planner.step(12.5).angles_rad == pytest.approx((0.1, 0.9)), 'one step ahead'


def test_go_home_replaces_the_latest_command():
    planner = _planner(10.0, 0.05)
    planner.start(0.0, None)
    planner.command((1.5, -0.5))
    assert planner.step(2.0).angles_rad == pytest.approx((1.0, 0.0))
    assert planner.go_home(2.1) == Send(HOME, pytest.approx(0.1)), 'as the speed limit needs'
    assert planner.target == HOME


def test_go_home_during_a_move_adds_the_rest_of_that_move_to_the_way_home():
    planner = _planner(10.0, 0.05)
    planner.start(0.0, None)
    planner.command((1.5, -0.5))
    planner.step(2.0)     # to (1.0, 0.0), arriving at 2.1
    assert planner.go_home(2.0) == Send(HOME, pytest.approx(0.1 + 0.1)), 'never faster'


def test_a_known_start_pose_far_from_home_stretches_the_home_move_to_the_speed_limit():
    planner = _planner(0.5, 1.0)
    assert planner.start(0.0, (-2.0, 1.0)) == Send(HOME, 4.0)


def test_commands_during_the_home_move_are_followed_after_it_at_the_speed_limit():
    planner = _planner(1.0, 1.0)
    planner.start(0.0, None)
    planner.command((0.15, 1.0))
    assert planner.step(0.5) is None, 'still homing'
    first = planner.step(1.0)
    assert first == Send(pytest.approx((0.1, 1.0)), pytest.approx(STEP_S))
    assert planner.step(1.05) == Send(pytest.approx((0.15, 1.0)), pytest.approx(STEP_S))
    assert planner.step(3.0) is None, 'latched: it holds the last command'


def test_a_pause_does_not_make_the_planner_catch_up_with_a_jump():
    planner = _planner(1.0, 0.0)
    planner.start(0.0, None)
    planner.command((math.pi, 1.0))
    planner.pause(5.0)
    assert planner.step(5.01).angles_rad == pytest.approx((0.1, 1.0))


def test_a_command_after_an_idle_spell_moves_a_full_step_at_once():
    planner = _planner(1.0, 0.0)
    planner.start(0.0, None)
    for tick in range(1, 50):
        assert planner.step(tick * STEP_S) is None, 'idle ticks send nothing'
    planner.command((1.0, 1.0))
    assert planner.step(4.9001) == Send(pytest.approx((0.1, 1.0)), pytest.approx(STEP_S))


def test_steps_however_spaced_never_ask_the_board_for_more_than_the_speed_limit():
    rng = random.Random(7)
    planner = _planner(1.0, 0.0)
    planner.start(0.0, None)
    now_s, arrive_s, sent = 0.0, 0.0, HOME
    for _ in range(500):
        now_s += rng.choice((0.0005, 0.002, 0.02, 0.3))
        if rng.random() < 0.3:
            planner.command((rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0)))
        send = planner.step(now_s)
        if send is None:
            continue
        # The board, somewhere between where it was and ``sent``, must cover the rest too.
        slack_s = max(arrive_s - now_s, 0.0)
        for old, new in zip(sent, send.angles_rad, strict=True):
            assert abs(new - old) <= (send.move_s - slack_s) + 1e-9
        assert send.move_s <= STEP_S + 1e-9
        arrive_s, sent = now_s + send.move_s, send.angles_rad


def test_a_non_positive_step_is_refused():
    with pytest.raises(ValueError) as raised:
        MotionPlanner(SlewLimiter((1.0,)), (0.0,), home_move_s=1.0, step_s=0.0)
    assert 'step_s = 0.0' in str(raised.value)
