"""servo_driver's frame_period_s: a fast pulse frame reaches a native board, others refuse it."""

import pytest

from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.ros_parameters import ParameterConfigError
from fabrik_ros.servo_io import Protocol
from fabrik_ros.servo_io.protocols import native
from test.nodes.test_driver_node import LAYOUT, make_rig  # noqa: F401  (the rig fixture)

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]


def test_a_fast_frame_reaches_the_native_board_and_survives_its_reset(make_rig):  # noqa: F811
    rig = make_rig(Protocol.NATIVE, extra=['-p', 'frame_period_s:=0.005'])
    rig.ros.spin_until(lambda: rig.board.firmware.frame_us == 5000, timeout_s=10.0,
                       what='the board to pulse in a 5 ms frame')
    before = rig.board.firmware
    rig.board.reset()                   # a fresh firmware, back in slotted frames
    rig.ros.spin_until(lambda: rig.board.firmware is not before and
                       rig.board.firmware.frame_us == 5000, timeout_s=10.0,
                       what='the frame to be sent again after the board reset')


def test_the_default_frame_sends_no_frame_request_so_older_firmware_gets_its_limits(
        make_rig):  # noqa: F811
    """A board that predates SET_FRAME refuses it; at the default the driver never asks.

    The board model here has SET_FRAME, so a frame a previous host set (without the reset
    that opening an Uno's port causes) staying in place shows that nothing was sent.
    """
    def left_fast(board):
        board.firmware.frame_us = 5000
        board.firmware.model.limits = [(1000, 2000)] * board.channels

    rig = make_rig(Protocol.NATIVE, before_driver=left_fast)
    rig.ros.spin_until(lambda: all(rig.board.enabled[ch] for ch in LAYOUT.joint_channels),
                       timeout_s=10.0, what='the driver to set limits and attach the servos')
    assert rig.board.firmware.frame_us == 5000
    assert rig.board.limits[LAYOUT.joint_channels[0]] == native.DEFAULT_LIMITS_US, \
        "the arm file's limits (500-2500 us) replaced the ones the board was left with"


@pytest.mark.parametrize('protocol', [Protocol.SSC32, Protocol.MAESTRO], ids=lambda p: p.value)
def test_a_fast_frame_is_refused_with_its_reason_where_the_protocol_has_none(
        ros, arm_args, tmp_path, protocol):
    args = [*arm_args, '-p', f'port:={tmp_path / "ttyNONE"}', '-p',
            f'protocol:={protocol.value}', '-p', 'frame_period_s:=0.005']
    with pytest.raises(ParameterConfigError) as raised:
        ServoDriverNode(context=ros.context, cli_args=args)
    assert f'frame_period_s = 0.005, must be 0.02 with protocol {protocol.value}' in str(
        raised.value)


def test_a_frame_too_short_for_the_limits_is_refused(ros, arm_args, tmp_path):
    shortest = native.min_frame_us(LAYOUT.limits_us)
    args = [*arm_args, '-p', f'port:={tmp_path / "ttyNONE"}', '-p', 'frame_period_s:=0.001']
    with pytest.raises(ParameterConfigError) as raised:
        ServoDriverNode(context=ros.context, cli_args=args)
    assert 'frame_period_s = 0.001, must fit the servo limits' in str(raised.value)
    assert f'within [{shortest}, {native.FRAME_MAX_US}]' in str(raised.value)
