"""The simulated servo's heat: it rises under load, cools unloaded, goes on from a set value."""

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from fabrik_ros.boardsim.bus_servo import BusServo
from fabrik_ros.boardsim.servo_heat import AMBIENT_C, ServoHeat
from fabrik_ros.driver.heat_guard import TEMPERATURE_ERROR_C, TEMPERATURE_WARN_C
from fabrik_ros.servo_io.protocols.control_tables import STS3215


def write(unit, register, value, now_s):
    unit.write(register.address, register.encode(value), now_s)


def pushing_servo():
    """Return an STS3215 closing at full torque on an object, pushing from about 0.1 s."""
    unit = BusServo(STS3215, 1, shaft=2000)
    unit.place_object(2300, 0.0)
    write(unit, STS3215.goal_position, 2500, 0.0)
    return unit


def reported_temperature(unit, now_s):
    return STS3215.present_temperature.decode(
        unit.read(STS3215.present_temperature.address, 1, now_s))


def test_a_servo_pushing_at_full_torque_passes_the_error_limit_within_tens_of_seconds():
    unit = pushing_servo()
    assert unit.pushing(1.0)
    assert unit.temperature(1.0) < 27.0
    assert unit.temperature(15.0) < TEMPERATURE_WARN_C
    assert unit.temperature(30.0) >= TEMPERATURE_WARN_C
    assert unit.temperature(40.0) >= TEMPERATURE_ERROR_C
    assert reported_temperature(unit, 40.0) >= TEMPERATURE_ERROR_C


def test_the_temperature_does_not_depend_on_how_often_it_is_read():
    often, once = pushing_servo(), pushing_servo()
    for tenth in range(1, 401):
        often.temperature(tenth / 10)
    assert often.temperature(40.0) == pytest.approx(once.temperature(40.0))


def test_an_idle_servo_stays_at_ambient_and_a_released_one_cools_back_toward_it():
    idle = BusServo(STS3215, 1, shaft=2000)
    assert idle.temperature(100.0) == AMBIENT_C
    unit = pushing_servo()
    hot = unit.temperature(40.0)
    write(unit, STS3215.goal_position, 2000, 40.0)       # moves away: no load
    assert unit.temperature(60.0) < hot
    assert unit.temperature(400.0) == pytest.approx(AMBIENT_C, abs=0.5)


def test_a_limp_servo_does_not_heat_even_against_the_object():
    unit = pushing_servo()
    write(unit, STS3215.torque_enable, 0, 0.0)
    assert unit.temperature(100.0) == AMBIENT_C


def test_a_lower_torque_limit_heats_less():
    full, capped = pushing_servo(), pushing_servo()
    write(capped, STS3215.torque_limit, 300, 0.0)
    assert AMBIENT_C < capped.temperature(60.0) < full.temperature(60.0)


def test_a_set_temperature_is_where_the_model_goes_on_from():
    unit = pushing_servo()
    unit.temperature(10.0)
    unit.temperature_c = 64.0
    assert unit.temperature_c == 64.0
    assert unit.temperature(10.0) == 64.0
    assert 64.0 < unit.temperature(12.0) < 66.0
    idle = BusServo(STS3215, 1, shaft=2000)
    idle.temperature_c = 60.0
    idle.temperature(0.0)
    assert AMBIENT_C < idle.temperature(10.0) < 60.0


@settings(max_examples=50, deadline=None)
@given(start_c=st.floats(0.0, 100.0), share=st.floats(0.0, 1.0),
       steps=st.lists(st.floats(0.0, 30.0), min_size=1, max_size=20))
def test_the_model_moves_monotonically_toward_its_steady_temperature(start_c, share, steps):
    heat = ServoHeat()
    heat.set(start_c)
    steady = heat.steady_c(share)
    now, last = 0.0, heat.advance(0.0, share)
    for step in steps:
        now += step
        here = heat.advance(now, share)
        assert abs(here - steady) <= abs(last - steady) + 1e-9
        assert min(start_c, steady) - 1e-9 <= here <= max(start_c, steady) + 1e-9
        last = here


def test_a_time_constant_that_is_not_positive_is_refused():
    with pytest.raises(ValueError) as raised:
        ServoHeat(tau_s=0.0)
    assert 'tau_s = 0.0' in str(raised.value)
