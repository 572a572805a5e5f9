"""Tests of the board protocol codec: CRC, encoders, and the streaming frame decoder."""

import binascii

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.native import (
    BoardInfo,
    CorruptFrame,
    Frame,
    FrameDecoder,
    NackError,
    PositionReport,
    Reply,
    WatchdogAction,
)

DETERMINISTIC = settings(derandomize=True, deadline=None, max_examples=300)
payloads = st.binary(max_size=native.MAX_PAYLOAD)
frames = st.builds(Frame, seq=st.integers(0, 255), cmd=st.integers(0, 255), payload=payloads)


def _encode(frame: Frame) -> bytes:
    return native.encode_frame(frame.seq, frame.cmd, frame.payload)


def test_crc_matches_the_ccitt_false_check_value():
    assert native.crc16_ccitt_false(b'123456789') == 0x29B1


def _crc_bit_by_bit(data: bytes) -> int:
    """CRC-16/CCITT-FALSE as its definition reads: poly 0x1021, init 0xFFFF, MSB first."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


@DETERMINISTIC
@given(st.binary(max_size=200))
def test_crc_agrees_with_the_definition_bit_by_bit(data):
    assert native.crc16_ccitt_false(data) == _crc_bit_by_bit(data)


def test_frame_layout_is_sync_len_seq_cmd_payload_crc_little_endian():
    frame = native.encode_frame(0x12, 0x34, b'\x01\x02')
    crc = binascii.crc_hqx(bytes((2, 0x12, 0x34, 1, 2)), 0xFFFF)
    assert frame == bytes((0xA5, 0x5A, 2, 0x12, 0x34, 1, 2, crc & 0xFF, crc >> 8))


@DETERMINISTIC
@given(frames)
def test_every_encoded_frame_decodes_to_itself(frame):
    assert FrameDecoder().feed(_encode(frame)) == [frame]


@DETERMINISTIC
@given(st.lists(frames, max_size=5), st.data())
def test_decoding_does_not_depend_on_how_the_stream_is_split(items, data):
    stream = b''.join(_encode(frame) for frame in items)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    decoder = FrameDecoder()
    decoded = []
    for start, end in zip([0] + cuts, cuts + [len(stream)], strict=True):
        decoded += decoder.feed(stream[start:end])
    assert decoded == items


@DETERMINISTIC
@given(st.binary(max_size=600))
def test_random_bytes_never_raise_and_buffer_stays_below_one_frame(data):
    decoder = FrameDecoder()
    items = decoder.feed(data)
    assert all(isinstance(item, (Frame, CorruptFrame)) for item in items)
    assert len(decoder._buffer) < native.MAX_FRAME


@DETERMINISTIC
@given(frames, st.binary(max_size=100))
def test_frame_after_garbage_is_found(frame, garbage):
    decoded = FrameDecoder().feed(garbage + _encode(frame))
    assert decoded[-1] == frame


@DETERMINISTIC
@given(frames, st.data())
def test_truncated_frame_is_dropped_and_the_next_frame_decodes_once_bytes_follow(frame, data):
    encoded = _encode(frame)
    cut = data.draw(st.integers(0, len(encoded) - 1))
    follow = Frame(seq=1, cmd=2, payload=b'ok')
    padding = bytes(native.MAX_FRAME)    # a swallowed header waits for at most this many
    decoded = FrameDecoder().feed(encoded[:cut] + _encode(follow) + padding)
    assert [item for item in decoded if isinstance(item, Frame)] == [follow]


@DETERMINISTIC
@given(frames, st.data())
def test_a_bit_flip_is_never_decoded_as_the_original_frame(frame, data):
    """A flipped bit is never the original frame, and the decoder finds the frames after it.

    A flip in LEN can make the decoder wait for a longer body, which then swallows what
    follows; enough follow-up frames to outlast the longest body must still end decoded.
    """
    encoded = bytearray(_encode(frame))
    index = data.draw(st.integers(0, len(encoded) - 1))
    encoded[index] ^= 1 << data.draw(st.integers(0, 7))
    follow = Frame(seq=9, cmd=9, payload=b'')
    copies = native.MAX_FRAME // len(_encode(follow)) + 2
    decoded = FrameDecoder().feed(bytes(encoded) + _encode(follow) * copies)
    assert frame not in decoded[:-1] or frame == follow
    assert decoded[-1] == follow


def test_bad_crc_is_reported_with_the_received_seq_and_cmd():
    encoded = bytearray(native.encode_ping(7))
    encoded[-1] ^= 0x01
    decoder = FrameDecoder()
    assert decoder.feed(bytes(encoded)) == [CorruptFrame(seq=7, cmd=native.Command.PING)]
    assert decoder.corrupt_frames == 1


def test_oversize_len_drops_only_the_first_sync_byte():
    frame = Frame(seq=3, cmd=4, payload=b'')
    decoder = FrameDecoder()
    assert decoder.feed(b'\xa5\x5a\x41' + _encode(frame)) == [frame]
    assert decoder.discarded_bytes == 3


def test_frame_hidden_inside_a_bad_crc_frame_is_still_found():
    inner = native.encode_ping(5)
    outer = b'\xa5\x5a' + bytes((len(inner), 1, 2)) + inner + b'\x00\x00'
    assert Frame(seq=5, cmd=1, payload=b'') in FrameDecoder().feed(outer)


def test_set_pulses_payload_is_move_time_then_pulses_little_endian():
    frame = native.encode_set_pulses(1, [1500, 0], 250)
    assert frame[2:5] == bytes((6, 1, native.Command.SET_PULSES))
    assert frame[5:11] == bytes((0xFA, 0x00, 0xDC, 0x05, 0x00, 0x00))


def test_reply_helpers_echo_the_command():
    ack = FrameDecoder().feed(native.encode_ack(4, native.Command.ENABLE))
    nack = FrameDecoder().feed(native.encode_nack(5, 3, NackError.OUT_OF_RANGE))
    assert ack == [Frame(4, Reply.ACK, b'\x05')]
    assert nack == [Frame(5, Reply.NACK, b'\x03\x04')]


def test_board_info_and_positions_round_trip():
    info = BoardInfo(1, 6, 'fabrik')
    report = PositionReport(0x05, (1500, 0, 2400))
    ready = FrameDecoder().feed(native.encode_ready(info))[0]
    assert (ready.seq, ready.cmd) == (0, Reply.READY)
    assert native.parse_board_info(ready.payload) == info
    assert native.parse_positions(native.position_bytes(report)) == report


@pytest.mark.parametrize('data, report', [
    (b'', None), (b'\x01', PositionReport(1, ())), (b'\x01\x02\x03\x04', None),
    (b'\x03\xdc\x05', PositionReport(3, (1500,)))])
def test_positions_parse_only_a_mask_plus_whole_pulses(data, report):
    assert native.parse_positions(data) == report


def test_set_timeout_encodes_ms_and_action():
    frame = native.encode_set_timeout(2, 500, WatchdogAction.DETACH)
    assert frame[5:8] == bytes((0xF4, 0x01, 0x01))


def test_set_frame_carries_the_period_little_endian_and_parses_back():
    frame = native.encode_set_frame(3, 5000)
    assert frame[3:7] == bytes((3, native.Command.SET_FRAME, 0x88, 0x13))
    (decoded,) = native.FrameDecoder().feed(frame)
    assert native.parse_set_frame(decoded.payload) == 5000
    assert native.parse_set_frame(native.encode_set_frame(4, native.FRAME_SLOTTED)[5:7]) == 0


@pytest.mark.parametrize('payload', [b'', b'\x88', b'\x88\x13\x00'])
def test_set_frame_payload_of_another_length_does_not_parse(payload):
    assert native.parse_set_frame(payload) is None


def test_shortest_fast_frame_leaves_the_gap_after_the_widest_limit():
    assert native.min_frame_us([(500, 2000), (900, 2500), (400, 1000)]) == 2500 + 300
    assert native.min_frame_us([native.DEFAULT_LIMITS_US] * 6) == 2800


@pytest.mark.parametrize('call, fragment', [
    (lambda: native.encode_frame(256, 1), 'seq = 256, must be within [0, 255]'),
    (lambda: native.encode_frame(0, 1, bytes(65)), 'payload length = 65'),
    (lambda: native.encode_set_pulses(0, [], 0), 'len(pulses_us) = 0'),
    (lambda: native.encode_set_pulses(0, [70000], 0), 'pulses_us[0] = 70000'),
    (lambda: native.encode_set_limits(0, [(500, 2500)] * 17), 'len(limits_us) = 17'),
    (lambda: native.encode_enable(0, 256), 'mask = 256'),
    (lambda: native.encode_set_frame(0, 65536), 'period_us = 65536'),
])
def test_encoders_refuse_values_the_frame_cannot_carry(call, fragment):
    with pytest.raises(ValueError) as raised:
        call()
    assert fragment in str(raised.value)
