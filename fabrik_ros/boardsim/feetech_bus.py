"""Simulated Feetech STS3215 servos on one bus (the SO-100/SO-101 arm), for SimBoard.

``SimBoard(Protocol.FEETECH, channels=6)`` runs six STS3215 with ids 1..6 on one pty at
1 Mbaud, the servos' factory baud rate. They power up with torque on, holding where they
stand, as the STS3215 does. A status packet's error byte is the servo's error bits (bit 7 is
never set: scservo_sdk reads a status with error > 0x7F as no packet at all).
"""

from fabrik_ros.boardsim.bus_firmware import BusFirmware
from fabrik_ros.boardsim.bus_servo import BusServo
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec
from fabrik_ros.servo_io.protocols.control_tables import STS3215
from fabrik_ros.servo_io.protocols.feetech import FeetechCodec

FIRMWARE_NAME = 'STS3215'


class FeetechBusFirmware(BusFirmware):
    """STS3215 servos answering Feetech's protocol; see :class:`BusFirmware`."""

    table = STS3215
    offset_sign = 1     # Present_Position = shaft - Homing_Offset (see bus_servo.py)

    def new_codec(self) -> BusCodec:
        """Return the Feetech codec."""
        return FeetechCodec()

    def status_error(self, servo: BusServo) -> int:
        """Return the servo's error bits, without bit 7."""
        return servo.error_bits & 0x7F
