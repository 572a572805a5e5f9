"""PathFollower: a smooth curve through the waypoints, walked at constant speed."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from fabrik_ros.nodes.path_follower import MERGE_M, PathFollower

coordinate = st.floats(min_value=-0.3, max_value=0.3, allow_nan=False)
point = st.tuples(coordinate, coordinate, coordinate)


@given(st.lists(point, min_size=1, max_size=6))
@settings(max_examples=60, deadline=None)
def test_the_curve_passes_through_every_waypoint_and_ends_on_the_last(waypoints):
    follower = PathFollower.through(waypoints, speed_m_s=0.1)
    samples = follower.samples
    for waypoint in waypoints:
        assert min(math.dist(waypoint, s) for s in samples) <= MERGE_M
    assert follower.position_at(follower.duration_s + 1.0) == pytest.approx(waypoints[-1])
    assert follower.position_at(-1.0) == pytest.approx(waypoints[0])


@given(st.lists(point, min_size=2, max_size=6), st.floats(0.01, 1.0))
@settings(max_examples=60, deadline=None)
def test_the_target_never_moves_faster_than_the_speed(waypoints, speed):
    follower = PathFollower.through(waypoints, speed_m_s=speed)
    dt = 0.01
    steps = int(follower.duration_s / dt) + 2
    positions = [follower.position_at(k * dt) for k in range(steps)]
    for a, b in zip(positions, positions[1:], strict=False):
        assert math.dist(a, b) <= speed * dt + 1e-9


def test_a_straight_path_is_walked_at_exactly_the_speed():
    follower = PathFollower.through([(0.0, 0.0, 0.0), (0.1, 0.0, 0.0), (0.2, 0.0, 0.0)],
                                    speed_m_s=0.05)
    assert follower.length_m == pytest.approx(0.2)
    assert follower.position_at(3.0) == pytest.approx((0.15, 0.0, 0.0))


def test_repeated_waypoints_are_merged_and_bad_input_is_named():
    assert PathFollower.through([(0.1, 0.0, 0.0)] * 3, speed_m_s=1.0).length_m == 0.0
    with pytest.raises(ValueError) as raised:
        PathFollower.through([(0.0, 0.0, 0.0), (0.0, math.nan, 0.0)], speed_m_s=1.0)
    assert 'waypoints[1]' in str(raised.value)
    with pytest.raises(ValueError) as raised:
        PathFollower.through([(0.0, 0.0, 0.0)], speed_m_s=0.0)
    assert 'speed_m_s = 0.0' in str(raised.value)
    with pytest.raises(ValueError) as raised:
        PathFollower.through([], speed_m_s=1.0)
    assert 'empty' in str(raised.value)
    with pytest.raises(ValueError) as raised:
        PathFollower.through([(0.0, 0.0, 0.0), (0.1, 0.0)], speed_m_s=1.0)
    assert 'waypoints[1] = (0.1, 0.0), must be 3 finite numbers' in str(raised.value)


def test_a_curve_too_long_for_floats_is_refused_not_walked_as_nan():
    with pytest.raises(ValueError) as raised:
        PathFollower.through([(0.0, 0.0, 0.0), (1e154, 0.0, 0.0), (-1e308, 0.0, 0.0)],
                             speed_m_s=1.0)
    assert 'must be finite' in str(raised.value)
