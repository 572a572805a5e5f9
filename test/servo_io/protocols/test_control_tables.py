"""Control-table registers: the STS3215 numbers as the sources give them, and value encodings."""

from hypothesis import given
from hypothesis import strategies as st
import pytest
import scservo_sdk as scs

from fabrik_ros.servo_io.protocols.control_tables import (
    AX12,
    Encoding,
    Register,
    span,
    Storage,
    STS3215,
    TABLES,
)

# (address, size, sign bit or 0) as LeRobot's src/lerobot/motors/feetech/tables.py has them
# (STS_SMS_SERIES_CONTROL_TABLE, STS_SMS_SERIES_ENCODINGS_TABLE), typed here by hand.
LEROBOT_STS = {
    'Model_Number': (3, 2, 0), 'ID': (5, 1, 0), 'Min_Position_Limit': (9, 2, 0),
    'Max_Position_Limit': (11, 2, 0), 'Max_Temperature_Limit': (13, 1, 0),
    'Max_Torque_Limit': (16, 2, 0), 'Homing_Offset': (31, 2, 11), 'Torque_Enable': (40, 1, 0),
    'Acceleration': (41, 1, 0), 'Goal_Position': (42, 2, 15), 'Goal_Time': (44, 2, 0),
    'Goal_Velocity': (46, 2, 15), 'Torque_Limit': (48, 2, 0), 'Lock': (55, 1, 0),
    'Present_Position': (56, 2, 15), 'Present_Velocity': (58, 2, 15),
    'Present_Load': (60, 2, 10), 'Present_Voltage': (62, 1, 0), 'Present_Temperature': (63, 1, 0),
    'Status': (65, 1, 0), 'Moving': (66, 1, 0),
}


def test_every_sts3215_register_is_where_lerobot_has_it():
    ours = {register.name: (register.address, register.size, register.sign_bit)
            for register in STS3215.registers()}
    assert ours == LEROBOT_STS
    assert STS3215.model_number == 777           # LeRobot MODEL_NUMBER_TABLE['sts3215']


def test_the_sdk_reads_the_model_number_where_the_table_has_it():
    # scservo_sdk's ping reads 2 bytes at address 3 for the model number.
    assert (STS3215.model_number_register.address, STS3215.model_number_register.size) == (3, 2)


@given(st.sampled_from([r for r in STS3215.registers() if r.encoding is Encoding.SIGN_MAGNITUDE]),
       st.data())
def test_sign_magnitude_is_what_scservo_sdk_encodes_and_decodes(register, data):
    low, high = register.value_range
    value = data.draw(st.integers(low, high))
    assert int.from_bytes(register.encode(value), 'little') == scs.SCS_TOSCS(value,
                                                                             register.sign_bit)
    raw = data.draw(st.integers(0, (1 << register.sign_bit + 1) - 1))
    assert register.decode(raw.to_bytes(register.size, 'little')) == scs.SCS_TOHOST(
        raw, register.sign_bit)


@given(st.integers(-(1 << 31), (1 << 31) - 1))
def test_twos_complement_round_trips(value):
    register = Register('Homing_Offset', 20, 4, Storage.EEPROM, Encoding.TWOS_COMPLEMENT)
    assert register.decode(register.encode(value)) == value


def test_a_value_the_register_cannot_hold_is_refused_with_name_value_and_range():
    with pytest.raises(ValueError) as raised:
        STS3215.homing_offset.encode(2048)
    assert str(raised.value) == 'Homing_Offset = 2048, must be within [-2047, 2047]'


def test_one_read_covers_the_telemetry_block_and_each_value_comes_out_of_it():
    address, size = span(STS3215.present_position, STS3215.present_load,
                         STS3215.present_voltage, STS3215.present_temperature)
    assert (address, size) == (56, 8)
    block = bytes.fromhex('e803 0000 1404 78 2d')
    assert STS3215.present_position.value_in(block, address) == 1000
    assert STS3215.present_load.value_in(block, address) == -20
    assert STS3215.present_voltage.value_in(block, address) * STS3215.voltage_unit_v == 12.0
    assert STS3215.present_temperature.value_in(block, address) == 45
    with pytest.raises(ValueError) as raised:
        STS3215.present_temperature.value_in(block[:7], address)
    assert 'Present_Temperature (63..63) is not inside the 7 bytes read from 56' in str(
        raised.value)


def test_an_unknown_register_name_lists_the_known_ones():
    with pytest.raises(KeyError) as raised:
        STS3215.register('Goal_Pos')
    assert "STS3215 has no register 'Goal_Pos'; known: Model_Number, ID," in str(raised.value)


def test_every_table_fits_its_memory_and_its_power_up_values_name_real_registers():
    for table in TABLES.values():
        for register in table.registers():
            assert register.end <= table.memory_size, register
        for name, value in table.power_up.items():
            low, high = table.register(name).value_range
            assert low <= value <= high
    assert STS3215.torque_on_at_power_up and not AX12.torque_on_at_power_up
    assert AX12.homing_offset is None and AX12.lock is None
