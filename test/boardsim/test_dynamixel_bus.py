"""The simulated Dynamixel firmware's rules, fed packets directly (no pty, no clock)."""

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from fabrik_ros.boardsim.dynamixel_bus import DynamixelBusFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io.protocols.bus_codec import StatusPacket
from fabrik_ros.servo_io.protocols.control_tables import XL430_W250
from fabrik_ros.servo_io.protocols.dynamixel import DynamixelCodec, ErrorNumber

CODEC = DynamixelCodec()


@pytest.fixture
def firmware() -> DynamixelBusFirmware:
    return DynamixelBusFirmware(ServoModel(3), 'XL430-W250')


def answers(firmware, request: bytes) -> list[StatusPacket]:
    host = DynamixelCodec()
    host.feed(firmware.receive(request, 0.0))
    found = []
    while (status := host.take_status()) is not None:
        found.append(status)
    return found


def test_values_outside_a_registers_range_are_refused(firmware):
    assert answers(firmware, CODEC.write(1, 64, b'\x02')) == [
        StatusPacket(1, ErrorNumber.DATA_RANGE, b'')]
    assert not firmware.servo(1).torque


def test_read_only_registers_and_bytes_past_the_table_are_refused(firmware):
    assert answers(firmware, CODEC.write(2, 132, bytes(4)))[0].error == ErrorNumber.ACCESS
    assert answers(firmware, CODEC.write(2, 200, bytes(2)))[0].error == ErrorNumber.ACCESS
    assert answers(firmware, CODEC.read(2, 146, 4)) == [StatusPacket(2, ErrorNumber.ACCESS,
                                                                     b'')]


def test_an_undefined_instruction_is_answered_with_an_instruction_error(firmware):
    reg_write = CODEC.packet(3, 0x04, bytes.fromhex('74 00 00 08 00 00'))
    assert answers(firmware, reg_write) == [StatusPacket(3, ErrorNumber.INSTRUCTION, b'')]


def test_a_broadcast_write_is_applied_and_never_answered(firmware):
    assert answers(firmware, CODEC.write(0xFE, 65, b'\x01')) == []
    led = XL430_W250.register('LED')
    assert [servo.register(led) for servo in firmware.servos] == [1, 1, 1]


def test_status_return_level_decides_which_instructions_are_answered(firmware):
    assert answers(firmware, CODEC.write(1, 65, b'\x01')) == [StatusPacket(1, 0, b'')]
    assert answers(firmware, CODEC.write(1, 68, b'\x01')) == []     # the new level applies
    assert answers(firmware, CODEC.write(1, 65, b'\x00')) == []
    assert answers(firmware, CODEC.read(1, 65, 1)) == [StatusPacket(1, 0, b'\x00')]
    assert answers(firmware, CODEC.write(1, 68, b'\x00')) == []
    assert answers(firmware, CODEC.read(1, 65, 1)) == []
    assert [s.id for s in answers(firmware, CODEC.ping(1))] == [1]


def test_profile_velocity_is_in_its_unit_of_0_229_rpm(firmware):
    # 64 x 0.229 rev/min x 4096 counts/rev / 60 s = 1000.5 counts/s (e-Manual, 112).
    for request in (CODEC.write(2, 112, (64).to_bytes(4, 'little')),
                    CODEC.write(2, 116, (3048).to_bytes(4, 'little')),
                    CODEC.write(2, 64, b'\x01')):
        firmware.receive(request, 0.0)
    assert round(firmware.servo(2).present(0.5)) == 2048 + 500
    host = DynamixelCodec()
    host.feed(firmware.receive(CODEC.read(2, 128, 4), 0.5))
    assert int.from_bytes(host.take_status().params, 'little') == 64


REQUESTS = st.one_of(
    st.builds(CODEC.packet, st.sampled_from([1, 2, 3, 0xFE, 0x30]),
              st.sampled_from([0x01, 0x02, 0x03, 0x04, 0x08, 0x55, 0x82, 0x83, 0x99]),
              st.binary(max_size=40)),
    st.builds(CODEC.write, st.integers(1, 3), st.integers(0, 200), st.binary(min_size=1,
                                                                              max_size=12)),
    st.builds(CODEC.read, st.integers(1, 3), st.integers(0, 200), st.integers(1, 300)),
    st.builds(CODEC.sync_read, st.integers(0, 200), st.integers(1, 60),
              st.lists(st.integers(1, 5), min_size=1, max_size=5, unique=True)),
    st.binary(max_size=30))


@settings(max_examples=300, deadline=None)
@given(st.lists(REQUESTS, max_size=10))
def test_any_bytes_from_the_host_get_whole_status_packets_or_none(chunks):
    firmware = DynamixelBusFirmware(ServoModel(3), 'XL430-W250')
    host = DynamixelCodec()
    for step, chunk in enumerate(chunks):
        host.feed(firmware.receive(chunk, step * 0.001))
    while host.take_status() is not None:
        pass
    assert (host.garbage_bytes, host.bad_checksums, host.pending) == (0, 0, 0)
