"""Keep one serial port open from a background thread, whatever protocol runs over it.

pyserial keeps the port apart from the framing; so does this module. A :class:`Connection`
opens the port, lets the protocol prove the device is the expected one (its handshake), then
runs the protocol's scheduler: it writes what the scheduler hands out when it hands it out,
reads what arrives and gives it back. When the port is lost (a failed read or write, a vanished
device path, a scheduler that finds the device silent) it closes the port and reopens the same
path after a back-off that doubles up to a maximum, cut short when a vanished path reappears
(a replugged adapter is found within ``path_check_s``), and starts over with the handshake.

The protocol side is a :class:`Traffic`: ServoLink's for the PWM boards, BusLink's for the
serial bus servos. Both share this one run loop, so a board and a bus reconnect alike.
"""

from collections.abc import Callable
import os
import threading
from typing import Optional, Protocol

from fabrik_ros.servo_io.deadline import Clock, Deadline
from fabrik_ros.servo_io.errors import LinkError, LinkLost
from fabrik_ros.servo_io.link_options import LinkOptions, LinkState
from fabrik_ros.servo_io.serial_port import is_url, SerialFactory, SerialPort


class Traffic(Protocol):
    """What a protocol tells the connection: its handshake and what to write when.

    Every method but :meth:`handshake` is called with :attr:`Connection.lock` held.
    """

    def handshake(self, connection: 'Connection') -> None:
        """Prove that the device on the newly opened port is the one expected.

        Called without the lock, from the I/O thread; writes and reads through
        :meth:`Connection.write` and :meth:`Connection.read`.

        :raises LinkError: if it is not (the connection then backs off and retries)
        """

    def connected(self, now_s: float, again: bool) -> None:
        """Start over on a connection whose handshake succeeded (``again``: not the first)."""

    def expire(self, now_s: float) -> None:
        """Act on requests whose answers are late.

        :raises LinkLost: if the device has stopped answering
        """

    def next_write(self, now_s: float) -> Optional[bytes]:
        """Return the bytes to write now, or None; the connection writes what it gets."""

    def written(self, now_s: float) -> None:
        """Note that the bytes :meth:`next_write` returned last went out at ``now_s``.

        A thread can be preempted between taking bytes and writing them; deadlines for the
        answers run from here.
        """

    def wake_at(self, now_s: float) -> float:
        """Return when something falls due, so that the I/O thread may wait until then [s]."""

    def received(self, data: bytes, now_s: float) -> None:
        """Take bytes read from the port (possibly none: a wait ended)."""


class Connection:
    """One port kept open by one background thread; see the module docstring.

    :param path: device path, symlinks such as ``/dev/serial/by-id/...`` included, or a
        pyserial URL; reopened by the same name after every loss.
    :param traffic: the protocol on top.
    :param name: the I/O thread's name.
    :param options: baud, write timeout, back-off and path check settings.
    :param serial_factory: ``(path, baud, write_timeout_s) -> port``.
    :param clock: monotonic clock for every deadline [s].
    :param on_state: called from the I/O thread on every state change.
    """

    def __init__(self, path: str, traffic: Traffic, *, name: str, options: LinkOptions,
                 serial_factory: SerialFactory, clock: Clock,
                 on_state: Optional[Callable[[LinkState], None]] = None) -> None:
        self.path = path
        self.options = options
        self.clock = clock
        # Guards the traffic's state and this connection's; waited on for state changes.
        self.lock = threading.Condition()
        # Set by close(): ends every wait of the I/O thread.
        self.closing = threading.Event()
        self._traffic = traffic
        self._name = name
        self._factory = serial_factory
        self._on_state = on_state
        # Set by a new command (and by close): ends the I/O thread's short waits early.
        self._nudged = threading.Event()
        self._thread: Optional[threading.Thread] = None
        # One writer at a time, so the bytes go out in the order the traffic handed them out;
        # also held while the port is dropped, so no caller writes to a closing port.
        self._write_lock = threading.Lock()
        self._write_error: Optional[LinkError] = None     # a caller's write failed
        self._port: Optional[SerialPort] = None
        self._state = LinkState.DISCONNECTED
        self._last_error: Optional[BaseException] = None
        self._next_path_check = 0.0
        self._ever_ready = False
        # When the I/O thread's wait for input ends at the latest [s, clock()].
        self._waits_until = 0.0

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the I/O thread; it opens the port and keeps it open until :meth:`close`."""
        if self._thread is not None:
            raise RuntimeError(f'{self._name} already started')
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def close(self, timeout_s: float) -> None:
        """Stop the I/O thread and close the port."""
        self.closing.set()
        self.wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)
        self._set_state(LinkState.CLOSED)

    @property
    def state(self) -> LinkState:
        """Return the current :class:`LinkState`."""
        return self._state

    @property
    def last_error(self) -> Optional[BaseException]:
        """Return the error that caused the last disconnect, if any."""
        return self._last_error

    def raise_if_closed(self) -> None:
        """Raise :class:`LinkLost` once the connection is closed (call with the lock held)."""
        if self._state is LinkState.CLOSED:
            raise LinkLost(f'{self.path}: link closed') from self._last_error

    # -- for the traffic and its link ------------------------------------------------------------

    def wake(self) -> None:
        """Make the I/O thread look at the traffic again now (a new command, or close)."""
        self._nudged.set()
        port = self._port
        if port is not None:
            port.wake()

    def nudge(self) -> None:
        """End the I/O thread's wait, so that it times the answers to a caller's write."""
        self.wake()

    def write(self, data: bytes) -> None:
        """Write a handshake request (the traffic's scheduler hands out everything else)."""
        self._port_or_lost().write(data)

    def read(self, max_wait_s: float, idle: Optional[threading.Event] = None) -> bytes:
        """Return what has arrived, waiting at most ``max_wait_s`` for it.

        :param idle: ends a short wait early when set; by default a new command does
        """
        return self._port_or_lost().read(max_wait_s, idle or self._nudged)

    def write_now(self, take: Callable[[float], Optional[bytes]]) -> bool:
        """Write what ``take(now)`` returns from the calling thread, if the port is idle.

        Left to the I/O thread, a command waits for that thread to wake and to get Python's GIL
        from the caller: on a busy machine that alone made commands up to 2 ms late. ``take``
        is called (under the lock) only while the connection is READY, the port's output queue
        is empty, so the write does not block, and the I/O thread is not writing itself (then
        that thread sends the command). A failed write is left to the I/O thread to act on, as
        if it had failed there. If the write makes something fall due (its answer's deadline)
        before the I/O thread means to wake, the thread is woken to wait for that instead.

        :returns: True if bytes went out
        """
        if not self._write_lock.acquire(blocking=False):
            return False
        try:
            port = self._port
            if port is None or self._state is not LinkState.READY or port.output_queued():
                return False
            with self.lock:
                data = take(self.clock())
                self.lock.notify_all()
            if data is None:
                return False
            port.write(data)
            with self.lock:
                now = self.clock()
                self._traffic.written(now)
                sooner = self._traffic.wake_at(now) < self._waits_until
            if sooner:
                port.wake()
            return True
        except LinkError as error:
            self._write_error = error
            return False
        finally:
            self._write_lock.release()

    # -- I/O thread ------------------------------------------------------------------------------

    def _set_state(self, state: LinkState) -> None:
        with self.lock:
            if self._state is state or self._state is LinkState.CLOSED:
                return
            self._state = state
            self.lock.notify_all()
        if self._on_state is not None:
            self._on_state(state)

    def _run(self) -> None:
        backoff = self.options.backoff_min_s
        try:
            while not self.closing.is_set():
                try:
                    self._connect()
                    backoff = self.options.backoff_min_s
                    self._serve()
                except LinkError as error:
                    self._last_error = error
                finally:
                    self._drop_port()
                if self.closing.is_set():
                    break
                self._set_state(LinkState.DISCONNECTED)
                self._back_off(backoff)
                backoff = min(2 * backoff, self.options.backoff_max_s)
        except BaseException as error:
            self._last_error = error
            raise
        finally:
            self._set_state(LinkState.CLOSED)

    def _back_off(self, backoff_s: float) -> None:
        """Wait ``backoff_s`` before reopening, or less if the missing device path appears.

        The back-off spares a device that fails to open or to answer. A path that was missing
        and appears is a device plugged in again: it is reopened within ``path_check_s``,
        however long the back-off has grown while the cable was out.
        """
        if is_url(self.path) or os.path.exists(self.path):
            self.closing.wait(backoff_s)
            return
        deadline = Deadline(backoff_s, clock=self.clock)
        while not deadline.expired():
            if self.closing.wait(min(deadline.time_left(), self.options.path_check_s)):
                return
            if os.path.exists(self.path):
                return

    def _connect(self) -> None:
        self._set_state(LinkState.CONNECTING)
        self._port = SerialPort.open(self.path, self._factory, self.options.baud,
                                     self.options.write_timeout_s)
        self._traffic.handshake(self)
        with self.lock:
            self._traffic.connected(self.clock(), self._ever_ready)
            self._ever_ready = True
        self._set_state(LinkState.READY)

    def _serve(self) -> None:
        """Write what the traffic says, when it says, and give it what comes back."""
        traffic = self._traffic
        received = b''
        while not self.closing.is_set():
            self._check_path()
            with self._write_lock:
                if self._write_error is not None:
                    raise self._write_error
                # Answers that came while this thread was away (preempted on a busy host)
                # count before a deadline is judged: they were on time. What the wait below
                # brought is handed over here too, in the same pass under the lock.
                received += self.read(0.0)
                with self.lock:
                    if self._nudged.is_set():
                        self._nudged.clear()  # a command from now on ends the wait below
                    now = self.clock()
                    traffic.received(received, now)
                    try:
                        traffic.expire(now)
                    except LinkLost as error:
                        raise LinkLost(f'{self.path}: {error}') from None
                    data = traffic.next_write(now)
                    wait_s = traffic.wake_at(now) - now if data is None else 0.0
                    self._waits_until = now + max(0.0, wait_s)
                    self.lock.notify_all()
                if data is not None:
                    self._port_or_lost().write(data)
                    with self.lock:       # the wait for its answers starts at once
                        now = self.clock()
                        traffic.written(now)
                        wait_s = traffic.wake_at(now) - now
                        self._waits_until = now + max(0.0, wait_s)
            if not is_url(self.path):     # and look for a vanished device in time
                wait_s = min(wait_s, self._next_path_check - self.clock())
            received = self.read(max(0.0, wait_s))

    def _check_path(self) -> None:
        now = self.clock()
        if is_url(self.path) or now < self._next_path_check:
            return
        self._next_path_check = now + self.options.path_check_s
        if not os.path.exists(self.path):
            raise LinkLost(f'{self.path}: device path vanished (unplugged?)')

    def _port_or_lost(self) -> SerialPort:
        port = self._port
        if port is None:
            raise LinkLost(f'{self.path}: port closed')
        return port

    def _drop_port(self) -> None:
        with self._write_lock:
            port, self._port = self._port, None
            self._write_error = None
        if port is not None:
            port.close()
