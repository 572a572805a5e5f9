"""The simulated native firmware's SET_FRAME rules, fed frames directly (no pty, no clock)."""

import pytest

from fabrik_ros.boardsim.native_board import NativeFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.native import Command, Frame, FrameDecoder, NackError, Reply


@pytest.fixture
def firmware() -> NativeFirmware:
    board = NativeFirmware(ServoModel(6), 'fabrik_servo_bridge')
    board.boot(0.0)
    return board


def answer(firmware: NativeFirmware, request: bytes) -> Frame:
    (reply,) = FrameDecoder().feed(firmware.receive(request, 0.0))
    return reply


def refused(reply: Frame, cmd: Command, error: NackError) -> bool:
    return reply.cmd == Reply.NACK and reply.payload == bytes((cmd, error))


def test_board_starts_in_slotted_frames(firmware):
    assert firmware.frame_us == native.FRAME_SLOTTED


def test_set_frame_accepts_periods_that_fit_the_limits_and_refuses_others(firmware):
    shortest = native.min_frame_us([native.DEFAULT_LIMITS_US] * 6)
    reply = answer(firmware, native.encode_set_frame(1, shortest - 1))
    assert refused(reply, Command.SET_FRAME, NackError.OUT_OF_RANGE)
    assert firmware.frame_us == native.FRAME_SLOTTED
    reply = answer(firmware, native.encode_set_frame(2, native.FRAME_MAX_US + 1))
    assert refused(reply, Command.SET_FRAME, NackError.OUT_OF_RANGE)
    assert answer(firmware, native.encode_set_frame(3, shortest)).cmd == Reply.ACK
    assert firmware.frame_us == shortest
    bad_length = native.encode_frame(4, Command.SET_FRAME, b'\x88')
    assert refused(answer(firmware, bad_length), Command.SET_FRAME, NackError.BAD_LENGTH)
    assert answer(firmware, native.encode_set_frame(5, native.FRAME_SLOTTED)).cmd == Reply.ACK
    assert firmware.frame_us == native.FRAME_SLOTTED


def test_narrower_limits_allow_a_shorter_frame(firmware):
    limits = native.encode_set_limits(1, [(900, 2000)] * 6)
    assert answer(firmware, limits).cmd == Reply.ACK
    assert answer(firmware, native.encode_set_frame(2, 2300)).cmd == Reply.ACK


def test_limits_a_fast_frame_cannot_hold_are_refused_whole(firmware):
    assert answer(firmware, native.encode_set_frame(1, 2850)).cmd == Reply.ACK
    too_wide = native.encode_set_limits(2, [(500, 2550), (500, 2551)])
    assert refused(answer(firmware, too_wide), Command.SET_LIMITS, NackError.OUT_OF_RANGE)
    assert firmware.model.limits[0] == native.DEFAULT_LIMITS_US
    fits = native.encode_set_limits(3, [(500, 2550), (500, 2550)])
    assert answer(firmware, fits).cmd == Reply.ACK
    assert firmware.model.limits[1] == (500, 2550)
