"""Maestro compact-protocol bytes against the examples in its user's guide (section 5.e)."""

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from fabrik_ros.servo_io.protocols import maestro
from fabrik_ros.servo_io.protocols.maestro import MaestroCommand


def test_set_target_matches_the_guides_1500us_example():
    assert maestro.encode_set_target(0, 1500) == bytes((0x84, 0x00, 0x70, 0x2E))
    assert maestro.encode_set_target(2, 1500) == bytes((0x84, 0x02, 0x70, 0x2E))


def test_set_multiple_targets_matches_the_guides_example():
    # Channel 3 off (0) and channel 4 at 6000 quarter-µs (1500 µs).
    expected = bytes((0x9F, 0x02, 0x03, 0x00, 0x00, 0x70, 0x2E))
    assert maestro.encode_set_multiple_targets(3, [0, 1500]) == expected


def test_set_speed_matches_the_guides_example():
    # Speed 140 on channel 5: 0x87, 0x05, 0x0C, 0x01.
    assert maestro.encode_set_speed(5, 140) == bytes((0x87, 0x05, 0x0C, 0x01))


def test_speed_140_covers_350us_in_100ms_as_the_guide_works_out():
    assert maestro.speed_for_move(350, 0.1) == 140


def test_other_commands_have_the_documented_codes():
    assert maestro.encode_set_acceleration(1, 4) == bytes((0x89, 0x01, 0x04, 0x00))
    assert maestro.encode_get_position(3) == bytes((0x90, 0x03))
    assert maestro.encode_get_errors() == bytes((0xA1,))
    assert maestro.encode_go_home() == bytes((0xA2,))


def test_two_byte_answers_are_low_byte_first():
    assert maestro.decode_u16(bytes((0x70, 0x17))) == 6000
    assert maestro.encode_u16(6000) == bytes((0x70, 0x17))


def test_decoder_reads_every_command_and_joins_seven_bit_halves():
    data = (maestro.encode_set_target(1, 1000) + maestro.encode_set_speed(1, 20)
            + maestro.encode_set_multiple_targets(2, [1500, 2000]) + maestro.encode_get_errors())
    assert maestro.MaestroCommandDecoder().feed(data) == [
        MaestroCommand(maestro.SET_TARGET, 1, (4000,)),
        MaestroCommand(maestro.SET_SPEED, 1, (20,)),
        MaestroCommand(maestro.SET_MULTIPLE_TARGETS, 2, (6000, 8000)),
        MaestroCommand(maestro.GET_ERRORS, None, ()),
    ]


def test_interrupted_packet_counts_a_protocol_error_and_the_new_one_still_parses():
    decoder = maestro.MaestroCommandDecoder()
    commands = decoder.feed(bytes((0x84, 0x00)) + maestro.encode_get_position(2))
    assert commands == [MaestroCommand(maestro.GET_POSITION, 2, ())]
    assert decoder.protocol_errors == 1


@settings(derandomize=True, deadline=None, max_examples=300)
@given(st.binary(max_size=300))
def test_decoder_never_raises_on_arbitrary_bytes(data):
    commands = maestro.MaestroCommandDecoder().feed(data)
    assert all(command.command & 0x80 for command in commands)


@pytest.mark.parametrize('call, fragment', [
    (lambda: maestro.encode_set_target(24, 1500), 'channel = 24, must be within [0, 23]'),
    (lambda: maestro.encode_set_target(0, 4096), 'target = 16384, must be within [0, 16383]'),
    (lambda: maestro.encode_set_acceleration(0, 256), 'acceleration = 256'),
    (lambda: maestro.encode_set_multiple_targets(23, [1500, 1500]), 'len(pulses_us) = 2'),
])
def test_encoder_refuses_values_the_maestro_cannot_take(call, fragment):
    with pytest.raises(ValueError) as raised:
        call()
    assert fragment in str(raised.value)
