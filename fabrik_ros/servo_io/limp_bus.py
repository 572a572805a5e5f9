"""A bus of servos only read, never driven: a leader arm moved by hand.

:class:`LimpBus` holds a :class:`~fabrik_ros.servo_io.bus_link.BusLink` told "torque off"
before it starts, with no homing offsets to write, and offers no way to send anything else:
no goals, no torque on, no torque limits. What reaches the bus is pings, reads and, to a
servo that reports torque on at its admission (an STS3215 powers up torqued), one answered
write of its torque-enable register to 0, so the arm can be moved by hand (what LeRobot does to
a leader at connect). A goal is never written (a limp BusLink writes none), nor a torque-enable
of 1: the link's torque-on path is the only one that writes a goal or a 1, and nothing here
reaches it.
"""

from collections.abc import Sequence
import time
from typing import Optional

from fabrik_ros.servo_io.bus_line import BUS_OPTIONS
from fabrik_ros.servo_io.bus_link import BusLink
from fabrik_ros.servo_io.bus_reports import BusPositions, Notice
from fabrik_ros.servo_io.deadline import Clock
from fabrik_ros.servo_io.link_options import LinkOptions, LinkState
from fabrik_ros.servo_io.protocols.dialect import Protocol
from fabrik_ros.servo_io.serial_port import open_serial, SerialFactory


class LimpBus:
    """Read the present positions of a bus of limp servos; never drive them.

    >>> bus = LimpBus('/dev/ttyACM1', protocol=Protocol.FEETECH, ids=[1, 2])  # doctest: +SKIP
    >>> with bus:                                                          # doctest: +SKIP
    ...     where = bus.positions()

    :param path: device path or pyserial URL
    :param protocol: ``Protocol.FEETECH`` or ``Protocol.DYNAMIXEL``
    :param ids: the servos' bus ids
    :param options: baud and feedback rate (``poll_hz``), as for a BusLink
    :param serial_factory: ``(path, baud, write_timeout_s) -> port``
    :param clock: monotonic clock [s]
    """

    def __init__(self, path: str, *, protocol: Protocol, ids: Sequence[int],
                 options: LinkOptions = BUS_OPTIONS, serial_factory: SerialFactory = open_serial,
                 clock: Clock = time.monotonic) -> None:
        self._link = BusLink(path, protocol=protocol, ids=ids, options=options,
                             homing_offsets=None, telemetry_hz=0.0,
                             serial_factory=serial_factory, clock=clock)
        self._link.torque(False)        # before the I/O thread: every admission sees it
        self.path = self._link.path
        self.protocol = self._link.protocol
        self.ids = self._link.ids

    def start(self) -> 'LimpBus':
        """Start the I/O thread (it opens the port, and reopens it after a loss)."""
        self._link.start()
        return self

    def close(self, timeout_s: float = 2.0) -> None:
        """Stop the I/O thread and close the port; the servos stay limp."""
        self._link.close(timeout_s)

    def __enter__(self) -> 'LimpBus':
        """Start the bus."""
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        """Close the bus."""
        self.close()

    @property
    def state(self) -> LinkState:
        """Return the :class:`LinkState` (READY while the port is open and answered)."""
        return self._link.state

    @property
    def last_error(self) -> Optional[BaseException]:
        """Return the error that caused the last disconnect, if any."""
        return self._link.last_error

    def positions(self) -> Optional[BusPositions]:
        """Return the latest sync read's present positions [counts], None before the first."""
        return self._link.positions()

    def admitted(self) -> tuple[int, ...]:
        """Return the ids that answer and whose position was read on this connection."""
        return self._link.admitted()

    def homing_offsets(self) -> dict[int, int]:
        """Return each servo's homing-offset register as read at connect (never written)."""
        return self._link.homing_offsets()

    def torques(self) -> dict[int, Optional[bool]]:
        """Return each servo's torque as last read or turned off (None: not known yet)."""
        return self._link.torques()

    def take_notices(self) -> list[Notice]:
        """Return, once each, what a person should read: servos silent or back."""
        return self._link.take_notices()

    def wait_ready(self, timeout_s: float) -> tuple[int, ...]:
        """Block until every servo is admitted or found silent; return the admitted.

        :raises LinkTimeout: if that does not happen within ``timeout_s``
        """
        return self._link.wait_ready(timeout_s)
