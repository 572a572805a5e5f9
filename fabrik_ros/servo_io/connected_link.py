"""What every link over a :class:`~fabrik_ros.servo_io.connection.Connection` shares.

ServoLink (PWM boards) and BusLink (serial bus servos) each describe their own protocol's
commands and reports; starting, closing and the link's state are the connection's, the same
for both, and live here once.
"""

import abc
from typing import Optional, TypeVar

from fabrik_ros.servo_io.connection import Connection
from fabrik_ros.servo_io.link_options import LinkState
from fabrik_ros.servo_io.protocols.dialect import Protocol

_Link = TypeVar('_Link', bound='ConnectedLink')


class ConnectedLink(abc.ABC):
    """A link whose port, I/O thread and reconnection are one :class:`Connection`.

    A subclass sets :attr:`path`, :attr:`protocol` and ``_connection`` in its ``__init__``
    (the connection takes the subclass's traffic, which holds the link, so the base cannot
    build it). Closing leaves the devices as they were last told; each link's docstring says
    what that means for its devices.
    """

    path: str               # device path or pyserial URL, reopened by this name after a loss
    protocol: Protocol      # what the device on the line speaks
    _connection: Connection

    def start(self: _Link) -> _Link:
        """Start the I/O thread; it opens the port and keeps it open until :meth:`close`."""
        self._connection.start()
        return self

    def close(self, timeout_s: float = 2.0) -> None:
        """Stop the I/O thread and close the port; the devices keep what they were told."""
        self._connection.close(timeout_s)

    def __enter__(self: _Link) -> _Link:
        """Start the link."""
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        """Close the link."""
        self.close()

    @property
    def state(self) -> LinkState:
        """Return the current :class:`LinkState`."""
        return self._connection.state

    @property
    def last_error(self) -> Optional[BaseException]:
        """Return the error that caused the last disconnect, if any."""
        return self._connection.last_error

    @abc.abstractmethod
    def sync(self, timeout_s: float) -> None:
        """Wait until the device took everything set so far.

        :raises LinkTimeout: if it has not within ``timeout_s``
        :raises LinkError: if it refused something, or the link is down
        """
