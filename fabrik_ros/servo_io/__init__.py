"""Serial bridge to servo boards: protocol codecs, the link the driver holds, a simulated board.

Pure Python on pyserial; nothing here imports rclpy.
"""

from fabrik_ros.servo_io.deadline import Deadline
from fabrik_ros.servo_io.dialect import Capabilities, Positions, Protocol
from fabrik_ros.servo_io.errors import BoardRefused, LinkError, LinkLost, LinkTimeout
from fabrik_ros.servo_io.link import ServoLink
from fabrik_ros.servo_io.link_options import LinkOptions, LinkState, LinkStats
from fabrik_ros.servo_io.protocol import (
    BoardInfo,
    Command,
    Frame,
    FrameDecoder,
    NackError,
    Reply,
    WatchdogAction,
)
from fabrik_ros.servo_io.serial_port import open_serial
from fabrik_ros.servo_io.servo_model import ServoModel
from fabrik_ros.servo_io.sim_board import SimBoard

__all__ = [
    'BoardInfo', 'BoardRefused', 'Capabilities', 'Command', 'Deadline', 'Frame',
    'FrameDecoder', 'LinkError', 'LinkLost', 'LinkOptions', 'LinkState', 'LinkStats',
    'LinkTimeout', 'NackError', 'Positions', 'Protocol', 'Reply', 'ServoLink', 'ServoModel',
    'SimBoard', 'WatchdogAction', 'open_serial',
]
