"""The simulated bus servo on a clock of our own: motion, limits, the seam, the hand, EEPROM."""

import pytest

from fabrik_ros.boardsim.bus_servo import BusServo
from fabrik_ros.servo_io.protocols.control_tables import AX12, STS3215, XL430_W250


def servo(shaft=2048, **options):
    return BusServo(STS3215, 1, shaft=shaft, **options)


def write(unit, register, value, now_s):
    unit.write(register.address, register.encode(value), now_s)


def test_it_moves_toward_the_goal_at_the_goal_speed_and_stops_there():
    unit = servo(shaft=1000)
    write(unit, STS3215.goal_speed, 500, 0.0)
    write(unit, STS3215.goal_position, 2000, 0.0)
    assert unit.present(1.0) == 1500
    assert unit.moving(1.0)
    assert STS3215.present_speed.decode(unit.read(58, 2, 1.0)) == 500
    assert unit.present(3.0) == 2000 and not unit.moving(3.0)


def test_a_goal_speed_of_zero_is_the_fastest_the_servo_goes():
    unit = servo(shaft=0, max_speed_counts_per_s=1000.0)
    write(unit, STS3215.goal_position, 3000, 0.0)
    assert unit.present(1.0) == 1000


def test_a_goal_past_the_seam_runs_the_long_way_round():
    unit = servo(shaft=4000, max_speed_counts_per_s=1000.0)
    write(unit, STS3215.goal_position, 100, 0.0)
    assert unit.present(1.0) == 3000          # down through the range, not up over 4095


def test_goals_are_clamped_into_the_limit_registers_that_are_kept_as_written():
    unit = servo()
    write(unit, STS3215.max_position_limit, 3000, 0.0)
    write(unit, STS3215.goal_position, 3900, 0.0)
    assert unit.goal_target() == 3000
    assert unit.present(10.0) == 3000
    assert STS3215.goal_position.decode(unit.read(42, 2, 10.0)) == 3900


def test_a_limp_servo_follows_the_hand_and_reports_no_load():
    unit = servo()
    unit.load = 300
    write(unit, STS3215.torque_enable, 0, 0.0)
    unit.move_by_hand(123, 1.0)
    assert unit.present(5.0) == 123
    assert STS3215.present_load.decode(unit.read(60, 2, 5.0)) == 0


def test_the_homing_offset_shifts_the_frame_and_not_the_shaft():
    unit = servo(shaft=100)
    write(unit, STS3215.torque_enable, 0, 0.0)
    write(unit, STS3215.homing_offset, 300, 0.0)
    assert unit.present(0.0) == 4096 - 200          # Present = shaft - offset, modulo a turn
    assert unit.shaft(0.0) == 100
    write(unit, STS3215.homing_offset, -300, 0.0)
    assert unit.present(0.0) == 400


def test_eeprom_survives_a_power_cycle_only_when_written_unlocked():
    unit = servo()
    write(unit, STS3215.max_position_limit, 3000, 0.0)      # lock flag is 1 at power-up
    unit.power_cycle(1.0)
    assert unit.limits == (0, 4095)
    write(unit, STS3215.lock, 0, 1.0)
    write(unit, STS3215.max_position_limit, 3000, 1.0)
    write(unit, STS3215.torque_enable, 0, 1.0)
    unit.power_cycle(2.0)
    assert unit.limits == (0, 3000)
    assert unit.torque                                       # the STS3215 powers up stiff


def test_readings_are_read_only_and_error_bits_show_in_the_status_register():
    unit = servo(shaft=1000)
    unit.write(56, b'\x00\x00', 0.0)
    assert unit.present(0.0) == 1000
    unit.error_bits = 0x08
    assert unit.read(65, 1, 0.0) == b'\x08'
    assert unit.read(86, 4, 0.0) == b'\x00' * 4              # past the memory: zeros


@pytest.mark.parametrize('volts', [7.4, 12.0])
def test_voltage_reads_in_tenths_of_a_volt(volts):
    unit = servo()
    unit.voltage_v = volts
    assert STS3215.present_voltage.decode(unit.read(62, 1, 0.0)) == round(volts * 10)


def test_an_ax12_powers_up_limp_and_does_not_wrap():
    unit = BusServo(AX12, 7)
    assert not unit.torque and unit.servo_id == 7
    unit.move_by_hand(1500, 0.0)
    assert unit.present(0.0) == 1023
    assert AX12.model_number_register.decode(unit.read(0, 2, 0.0)) == 12


def test_a_shaft_closing_on_an_object_stops_there_and_pushes_at_its_torque_limit():
    unit = servo(shaft=2000, max_speed_counts_per_s=1000.0)
    unit.place_object(2300, 0.0)
    write(unit, STS3215.goal_position, 2600, 0.0)
    assert unit.present(0.2) == 2200 and not unit.pushing(0.2)
    assert STS3215.present_load.decode(unit.read(60, 2, 0.2)) == 0
    assert unit.present(1.0) == 2300 and unit.pushing(1.0)
    assert STS3215.present_load.decode(unit.read(60, 2, 1.0)) == 1000     # 100 %: full torque
    write(unit, STS3215.torque_limit, 300, 1.0)
    assert STS3215.present_load.decode(unit.read(60, 2, 1.1)) == 300      # the limit, 30 %


def test_moving_away_from_the_object_is_free_and_removing_it_lets_the_shaft_go_on():
    unit = servo(shaft=2000, max_speed_counts_per_s=1000.0)
    unit.place_object(2300, 0.0)
    write(unit, STS3215.goal_position, 2600, 0.0)
    write(unit, STS3215.goal_position, 1900, 1.0)
    assert unit.present(1.2) == 2100 and not unit.pushing(1.2)
    assert unit.present(2.0) == 1900
    write(unit, STS3215.goal_position, 2600, 2.0)
    assert unit.present(3.0) == 2300
    unit.remove_object(3.0)
    assert unit.present(3.3) == 2600


def test_an_object_below_the_shaft_pushes_with_a_negative_load():
    unit = servo(shaft=2000, max_speed_counts_per_s=1000.0)
    unit.place_object(1800, 0.0)
    write(unit, STS3215.goal_position, 1000, 0.0)
    assert unit.present(1.0) == 1800
    assert STS3215.present_load.decode(unit.read(60, 2, 1.0)) == -1000


def test_an_object_where_the_shaft_stands_is_refused():
    unit = servo(shaft=2000)
    with pytest.raises(ValueError) as error:
        unit.place_object(2000, 0.0)
    assert 'put it on a side' in str(error.value)


def test_the_x_series_goal_pwm_is_its_torque_limit():
    unit = BusServo(XL430_W250, 1, shaft=2000, max_speed_counts_per_s=1000.0, offset_sign=-1)
    write(unit, XL430_W250.torque_enable, 1, 0.0)
    unit.place_object(2100, 0.0)
    write(unit, XL430_W250.goal_position, 2500, 0.0)
    write(unit, XL430_W250.torque_limit, 442, 0.0)            # half of 885
    assert unit.present(1.0) == 2100
    assert XL430_W250.present_load.decode(unit.read(126, 2, 1.0)) == 499
