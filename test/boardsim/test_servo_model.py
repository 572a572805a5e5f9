"""The simulated servo outputs: linear moves, speed cap, limits, hold."""

import pytest

from fabrik_ros.boardsim.servo_model import ServoModel


def test_unset_channel_takes_its_first_target_at_once():
    model = ServoModel(2)
    model.move_over([1500, 0], 1.0, now_s=0.0)
    assert model.positions(0.0) == [1500, 0]


def test_move_over_is_linear_and_all_channels_arrive_together():
    model = ServoModel(2)
    model.move_over([1000, 2000], 0.0, now_s=0.0)
    model.move_over([2000, 1000], 2.0, now_s=10.0)
    assert model.positions(11.0) == [1500, 1500]
    assert model.positions(12.0) == [2000, 1000]
    assert model.moving(11.0) and not model.moving(12.0)


def test_speed_cap_slows_a_move_that_asks_to_be_faster():
    model = ServoModel(1, speed_us_per_s=100.0)
    model.move_over([1000], 0.0, now_s=0.0)
    model.move_over([2000], 0.0, now_s=0.0)
    assert model.positions(5.0) == [1500]


def test_outputs_are_zero_for_detached_channels():
    model = ServoModel(2)
    model.move_over([1500, 1600], 0.0, now_s=0.0)
    model.enabled_mask = 0b10
    assert model.outputs(0.0) == [0, 1600]


def test_new_limits_clamp_position_and_target():
    model = ServoModel(1)
    model.move_over([2400], 0.0, now_s=0.0)
    model.set_limits([(600, 2000)], now_s=0.0)
    assert model.positions(0.0) == [2000] and model.target(0) == 2000
    assert model.in_limits(0, 2000) and not model.in_limits(0, 2001)


def test_hold_stops_a_move_where_it_is():
    model = ServoModel(1)
    model.move_over([1000], 0.0, now_s=0.0)
    model.move_over([2000], 1.0, now_s=0.0)
    model.hold(0.5)
    assert model.positions(3.0) == [1500]


@pytest.mark.parametrize('channel', [0, 1])
def test_stop_forgets_the_pulse_and_the_enable_bit(channel):
    model = ServoModel(2)
    model.move_over([1500, 1500], 0.0, now_s=0.0)
    model.enabled_mask = 0b11
    model.stop(channel)
    assert model.target(channel) == 0 and not model.enabled_mask >> channel & 1
