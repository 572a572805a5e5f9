"""SSC-32U byte strings against the formats and examples of its user guide."""

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from fabrik_ros.servo_io.protocols import ssc32
from fabrik_ros.servo_io.protocols.ssc32 import (
    ChannelMove,
    GroupMove,
    QueryMovement,
    QueryPulseWidths,
    Unparsed,
    Version,
)


def test_group_move_matches_the_guides_command_group_example():
    # User guide, "Multiple servo command": #5 P1600 #10 P750 T2500 <cr>
    assert ssc32.encode_group_move({10: 750, 5: 1600}, time_ms=2500) == b'#5P1600#10P750T2500\r'


def test_single_servo_with_speed_matches_the_guides_example():
    # User guide, "Single Servo Commands", example 1: #5P1500S750<cr>
    assert ssc32.encode_group_move({5: 1500}, speeds_us_per_s={5: 750}) == b'#5P1500S750\r'


def test_first_move_without_time_has_neither_s_nor_t():
    assert ssc32.encode_group_move({0: 1500, 1: 1500}) == b'#0P1500#1P1500\r'


def test_queries_and_version_are_terminated_by_carriage_return():
    assert ssc32.encode_query_movement() == b'Q\r'
    assert ssc32.encode_query_pulse_widths([0, 5]) == b'QP0 QP5\r'
    assert ssc32.encode_version() == b'VER\r'
    assert ssc32.encode_stop_pulses([3, 1]) == b'#1P0#3P0\r'


def test_query_pulse_width_answer_is_one_byte_of_pulse_over_ten():
    # User guide, "Query Pulse Width": 1500 µs is answered as the byte 150.
    assert ssc32.encode_pulse_width_answer([1500, 2500]) == bytes((150, 250))
    assert ssc32.decode_pulse_widths(bytes((150, 250))) == (1500, 2500)


def test_query_movement_answer_dot_is_done_and_plus_is_moving():
    assert ssc32.decode_movement(ord('.')) is False
    assert ssc32.decode_movement(ord('+')) is True
    assert ssc32.decode_movement(ord('x')) is None


def test_decoder_parses_the_guides_mixed_speed_example_with_spaces():
    # User guide, example 2 of the command group: #5 P1600 #17 P750 S500 #2 P2250 T2000 <cr>
    (command,) = ssc32.Ssc32CommandDecoder().feed(b'#5 P1600 #17 P750 S500 #2 P2250 T2000\r')
    assert command == GroupMove((ChannelMove(5, 1600, None), ChannelMove(17, 750, 500),
                                 ChannelMove(2, 2250, None)), 2000)


@pytest.mark.parametrize('line, command', [
    (b'ver\r', Version()),
    (b'Q\r', QueryMovement()),
    (b'QP0 QP5 QP31\r', QueryPulseWidths((0, 5, 31))),
    (b'QP32\r', Unparsed('QP32')),
    (b'#5\r', Unparsed('#5')),
    (b'P1500\r', Unparsed('P1500')),
])
def test_decoder_recognises_queries_and_refuses_malformed_lines(line, command):
    assert ssc32.Ssc32CommandDecoder().feed(line) == [command]


@settings(derandomize=True, deadline=None, max_examples=300)
@given(st.binary(max_size=300))
def test_decoder_never_raises_on_arbitrary_bytes(data):
    commands = ssc32.Ssc32CommandDecoder().feed(data)
    assert len(commands) == data.count(b'\r')


@settings(derandomize=True, deadline=None, max_examples=200)
@given(st.dictionaries(st.integers(0, 31), st.integers(500, 2500), min_size=1, max_size=8),
       st.none() | st.integers(0, 65535))
def test_encoded_group_moves_decode_to_the_same_targets(pulses, time_ms):
    (command,) = ssc32.Ssc32CommandDecoder().feed(
        ssc32.encode_group_move(pulses, time_ms=time_ms))
    assert {move.channel: move.pulse_us for move in command.moves} == pulses
    assert command.time_ms == time_ms


@pytest.mark.parametrize('call, fragment', [
    (lambda: ssc32.encode_group_move({32: 1500}), 'channel = 32, must be within [0, 31]'),
    (lambda: ssc32.encode_group_move({0: 499}), 'pulses_us[0] = 499, must be within [500, 2500]'),
    (lambda: ssc32.encode_group_move({0: 1500}, time_ms=70000), 'time_ms = 70000'),
    (lambda: ssc32.encode_group_move({}), 'pulses_us is empty'),
])
def test_encoder_refuses_what_the_board_cannot_take(call, fragment):
    with pytest.raises(ValueError) as raised:
        call()
    assert fragment in str(raised.value)
