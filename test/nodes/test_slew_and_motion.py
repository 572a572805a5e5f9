"""SlewLimiter and MotionPlanner: speed-limited steps after a slow, safe move home."""

import math

import pytest

from fabrik_ros.nodes.motion import MotionPlanner, Send
from fabrik_ros.nodes.slew import SlewLimiter

HOME = (0.0, 1.0)


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


def test_nothing_is_sent_before_the_start_and_the_start_goes_home_slowly():
    planner = MotionPlanner(SlewLimiter((1.0, 1.0)), HOME, home_move_s=2.0)
    planner.command((0.5, 0.5))
    assert planner.step(10.0) is None
    assert planner.start(10.0, None) == Send(HOME, 2.0)
    assert planner.target == (0.5, 0.5), 'a command from before the start is kept'
    assert planner.step(11.0) is None, 'still homing'
    assert planner.step(12.5).angles_rad == pytest.approx((0.5, 0.5))


def test_go_home_replaces_the_latest_command():
    planner = MotionPlanner(SlewLimiter((1.0, 1.0)), HOME, home_move_s=0.5)
    planner.start(0.0, None)
    planner.command((1.5, -0.5))
    assert planner.step(2.0).angles_rad == pytest.approx((1.5, -0.5))
    assert planner.go_home(2.0) == Send(HOME, 1.5), 'as long as the speed limit needs'
    assert planner.target == HOME


def test_a_known_start_pose_far_from_home_stretches_the_home_move_to_the_speed_limit():
    planner = MotionPlanner(SlewLimiter((0.5, 0.5)), HOME, home_move_s=1.0)
    assert planner.start(0.0, (-2.0, 1.0)) == Send(HOME, 4.0)


def test_commands_during_the_home_move_are_followed_after_it_at_the_speed_limit():
    planner = MotionPlanner(SlewLimiter((1.0, 1.0)), HOME, home_move_s=1.0)
    planner.start(0.0, None)
    planner.command((0.5, 1.0))
    assert planner.step(0.5) is None, 'still homing'
    assert planner.step(1.0) is None, 'no time has passed since homing ended'
    first = planner.step(1.2)
    assert first.angles_rad == pytest.approx((0.2, 1.0))
    assert first.move_s == pytest.approx(0.2)
    assert planner.step(2.0).angles_rad == pytest.approx((0.5, 1.0))
    assert planner.step(3.0) is None, 'latched: it holds the last command'


def test_a_pause_does_not_make_the_planner_catch_up_with_a_jump():
    planner = MotionPlanner(SlewLimiter((1.0, 1.0)), HOME, home_move_s=0.0)
    planner.start(0.0, None)
    planner.command((math.pi, 1.0))
    planner.pause(5.0)
    assert planner.step(5.1).angles_rad == pytest.approx((0.1, 1.0))
