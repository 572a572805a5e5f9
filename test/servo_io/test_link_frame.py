"""ServoLink's pulse frame setting (SET_FRAME) against the simulated native board on a pty."""

import pytest

from fabrik_ros.servo_io import BoardRefused, Protocol, ServoLink
from fabrik_ros.servo_io.protocols import native

PULSES = (1000, 1200, 1400, 1600, 1800, 2000)


@pytest.mark.timeout(15)
def test_frame_reaches_the_board_and_again_after_a_reset(sim_board, servo_link):
    board = sim_board()
    link = servo_link(board)
    link.set_pulses(PULSES)
    link.set_frame(5000)
    link.sync(3.0)
    assert board.firmware.frame_us == 5000
    board.reset()                      # the board forgets its frame; the link sends it again
    assert board.wait_until(
        lambda b: link.stats().board_resets == 1 and b.firmware.frame_us == 5000, 3.0)
    link.set_frame(native.FRAME_SLOTTED)
    link.sync(3.0)
    assert board.firmware.frame_us == native.FRAME_SLOTTED


@pytest.mark.timeout(15)
def test_limits_and_a_short_frame_go_out_in_an_order_the_board_accepts(sim_board, servo_link):
    board = sim_board()
    link = servo_link(board)
    link.set_limits([(900, 2000)] * 6)
    link.set_frame(2300)               # fits only once the narrower limits are on the board
    link.sync(3.0)
    assert board.firmware.frame_us == 2300
    # Wider limits the board would refuse in a 2300 us frame: sent in a slotted frame first,
    # so they land, and the frame that no longer fits is refused and named.
    link.set_limits([(900, 2100)] * 6)
    with pytest.raises(BoardRefused) as raised:
        link.sync(3.0)
    assert 'board refused frame: NACK OUT_OF_RANGE' in str(raised.value)
    assert board.limits == ((900, 2100),) * 6
    assert board.firmware.frame_us == native.FRAME_SLOTTED


@pytest.mark.parametrize('period_us, fragment', [
    (2799, 'period_us = 2799, must be 0 (slotted) or within [2800, 20000]'),
    (20001, 'period_us = 20001'),
])
def test_frame_that_cannot_hold_the_limits_is_refused_before_sending(period_us, fragment):
    link = ServoLink('/dev/null/never-opened')
    with pytest.raises(ValueError) as raised:
        link.set_frame(period_us)
    assert fragment in str(raised.value)


@pytest.mark.parametrize('protocol', [Protocol.SSC32, Protocol.MAESTRO])
def test_frame_is_refused_where_the_protocol_has_none(protocol):
    link = ServoLink('/dev/null/never-opened', protocol=protocol)
    with pytest.raises(ValueError) as raised:
        link.set_frame(5000)
    assert f'protocol {protocol.name} has no pulse frame setting' in str(raised.value)
