"""What every :class:`~fabrik_ros.driver.servo_output.ServoOutput` over a servo_io link shares.

PulseOutput (a PWM board's ServoLink) and BusOutput (a bus's BusLink) differ in what they send
and read; the link's state changes, queued for the driver's tick, and what the link says of
its line (protocol, port, state, last error) are the same for both and live here once.
"""

from collections import deque
from collections.abc import Callable, Sequence
from typing import Generic, Optional, TypeVar

from fabrik_ros.driver.servo_output import LinkEvent, RebootOrder
from fabrik_ros.servo_io.connected_link import ConnectedLink
from fabrik_ros.servo_io.errors import LinkError, LinkTimeout
from fabrik_ros.servo_io.link_options import LinkState
from fabrik_ros.servo_io.protocols.dialect import Protocol

_Link = TypeVar('_Link', bound=ConnectedLink)


class LinkOutput(Generic[_Link]):
    """The link-facing half of a servo output: state changes and the line's description.

    A subclass builds :attr:`link` in its ``__init__`` with ``on_state=self._on_state``, after
    calling this ``__init__``.

    :param clock: the monotonic clock of the link and of the subclass's reports [s]
    """

    link: _Link

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        # State changes, appended by the link's I/O thread, taken by the driver's tick.
        self._events: deque[LinkEvent] = deque()
        # When the link last became READY [s]: reports taken before are not this connection's.
        self._connected_at = 0.0

    def _on_state(self, state: LinkState) -> None:
        if state is LinkState.READY:
            self._connected_at = self._clock()
        lost = state in (LinkState.DISCONNECTED, LinkState.CLOSED)
        self._events.append(LinkEvent(state, self.link.last_error if lost else None))

    @property
    def protocol(self) -> Protocol:
        """Return the protocol spoken on the line."""
        return self.link.protocol

    @property
    def path(self) -> str:
        """Return the serial port (the board's or the bus adapter's)."""
        return self.link.path

    @property
    def state(self) -> LinkState:
        """Return the link's state."""
        return self.link.state

    @property
    def last_error(self) -> Optional[BaseException]:
        """Return why the link last went down."""
        return self.link.last_error

    def start(self) -> None:
        """Start the link's thread."""
        self.link.start()

    def take_events(self) -> list[LinkEvent]:
        """Return the link's state changes since the last call, oldest first."""
        events = []
        while self._events:
            events.append(self._events.popleft())
        return events

    def take_admitted(self) -> dict[int, float]:
        """Return the servos that rejoined since the last call: none on a PWM board."""
        return {}

    def named_silent(self, servo: int) -> Optional[bool]:
        """Return None: a PWM board does not judge each servo (see ServoOutput)."""
        return None

    @property
    def reboot_refusal(self) -> str:
        """Return why a PWM board's servos cannot be rebooted: they have no reboot."""
        return (f'a {self.protocol.value} board drives PWM servos, which have no reboot (nor a '
                'hardware-error shutdown to clear): nothing to reboot')

    def reboot(self, servos: Optional[Sequence[int]] = None) -> RebootOrder:
        """Refuse: PWM servos have no reboot, nothing is sent (see :attr:`reboot_refusal`)."""
        return RebootOrder(refusal=self.reboot_refusal)

    def synced(self) -> bool:
        """Return True once the device took or refused all that was set (waiting is over).

        Taken: acknowledged (native), written (the other boards), or gone out to the servos
        (a bus). Refused: answered NACK, which waiting longer would not change.
        """
        try:
            self.link.sync(0.0)
        except LinkTimeout:
            return False
        except LinkError:
            return True
        return True
