"""Which dialect speaks each protocol: for the link, and for checks made before one opens."""

from fabrik_ros.servo_io.protocols.dialect import Dialect, Protocol
from fabrik_ros.servo_io.protocols.maestro_dialect import MaestroDialect
from fabrik_ros.servo_io.protocols.native_dialect import NativeDialect
from fabrik_ros.servo_io.protocols.ssc32_dialect import Ssc32Dialect

_DIALECTS: dict[Protocol, type[Dialect]] = {
    Protocol.NATIVE: NativeDialect, Protocol.SSC32: Ssc32Dialect,
    Protocol.MAESTRO: MaestroDialect}


def dialect_type(protocol: Protocol) -> type[Dialect]:
    """Return the dialect class of ``protocol``; its class attributes describe the board.

    >>> dialect_type(Protocol.NATIVE).board_channels
    8
    """
    return _DIALECTS[Protocol(protocol)]
