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

    :raises ValueError: for a bus protocol (see :data:`.dialect.BUS_PROTOCOLS`)

    >>> dialect_type(Protocol.NATIVE).board_channels
    8
    """
    protocol = Protocol(protocol)
    if protocol.is_bus:
        raise ValueError(f'protocol = {protocol.value!r} addresses bus servos by id: it has no '
                         'PWM board dialect (BusLink drives it, not ServoLink)')
    return _DIALECTS[protocol]
