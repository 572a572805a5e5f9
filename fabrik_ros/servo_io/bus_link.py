"""Serial transport to a bus of servos (Feetech STS, Dynamixel X): goals out, positions back.

:class:`BusLink` holds one :class:`~fabrik_ros.servo_io.connection.Connection` (the port, its
I/O thread, the back-off and reconnection, as for the PWM boards) and a pure
:class:`~fabrik_ros.servo_io.bus_scheduler.BusScheduler` that decides what goes on the line
when (its docstring has the rules; :mod:`~fabrik_ros.servo_io.bus_line` the line times).
Callers describe what they want (goals in counts, torque on or off) and read what the
servos report (present positions, limit registers, health); every method may be called from
any thread and none blocks but :meth:`BusLink.wait_ready` and :meth:`BusLink.sync`.

At every (re)connect the handshake pings every id: a bus where none answers is refused, named
with the likely causes; ids that do not answer are named silent and pinged again while the
others run. Each servo is then admitted (limits, homing offset, torque, present position read)
before any goal reaches it: an STS3215 is torqued at power-up, and a goal written before its
position was read would move the arm at once.
"""

from collections.abc import Callable, Mapping, Sequence
import time
from typing import Optional

from fabrik_ros.servo_io.bus_line import BUS_OPTIONS, DEFAULT_TELEMETRY_HZ
from fabrik_ros.servo_io.bus_reports import BusPositions, Notice, ServoCondition
from fabrik_ros.servo_io.bus_scheduler import BusScheduler
from fabrik_ros.servo_io.connected_link import ConnectedLink
from fabrik_ros.servo_io.connection import Connection
from fabrik_ros.servo_io.deadline import Clock, Deadline
from fabrik_ros.servo_io.errors import LinkTimeout
from fabrik_ros.servo_io.link_options import LinkOptions, LinkState, MOVE_MAX_S
from fabrik_ros.servo_io.link_stats import Counters, LinkStats
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec
from fabrik_ros.servo_io.protocols.control_tables import ControlTable, STS3215, XL430_W250
from fabrik_ros.servo_io.protocols.dialect import Protocol
from fabrik_ros.servo_io.protocols.dynamixel import DynamixelCodec
from fabrik_ros.servo_io.protocols.feetech import FeetechCodec
from fabrik_ros.servo_io.serial_port import open_serial, SerialFactory

# Each bus protocol's codec and the model assumed until a servo names its own.
_BUSES: dict[Protocol, tuple[Callable[[], BusCodec], ControlTable]] = {
    Protocol.FEETECH: (FeetechCodec, STS3215),
    Protocol.DYNAMIXEL: (DynamixelCodec, XL430_W250),
}
_LIKELY = ("a baud rate other than the servos' (they ship at 1,000,000 for these arms), the "
           "servo supply off, ids other than the arm file's, or a port that is not the bus "
           'adapter')


class BusLink(ConnectedLink):
    """Drive the servos on one bus from a background thread.

    Closing it (:meth:`close`, or leaving ``with``) leaves the servos' torque as it is.

    >>> link = BusLink('/dev/ttyACM0', protocol=Protocol.FEETECH, ids=[1, 2, 3])  # doctest: +SKIP
    >>> with link:                                                   # doctest: +SKIP
    ...     link.wait_ready(2.0)
    ...     where = link.positions().counts
    ...     link.torque(True)                     # holds where it stands
    ...     link.set_goals({1: where[1] + 100}, move_s=1.0)

    :param path: device path (``/dev/serial/by-id/...`` survives replugging) or pyserial URL
    :param protocol: ``Protocol.FEETECH`` or ``Protocol.DYNAMIXEL`` (Protocol 2.0)
    :param ids: the servos' bus ids
    :param options: baud, feedback rate (``poll_hz``), reply timeout, retries, back-off; the
        defaults (:data:`~fabrik_ros.servo_io.bus_line.BUS_OPTIONS`) suit 1 Mbaud
    :param homing_offsets: the homing-offset register each servo must hold, by id (the arm
        file's); written at connect where a servo holds another
    :param telemetry_hz: readings (load, voltage, temperature, errors) per second, 0 = none
    :param serial_factory: ``(path, baud, write_timeout_s) -> port``
    :param clock: monotonic clock for every deadline and stamp [s]
    :param on_state: called from the I/O thread on every state change
    """

    def __init__(self, path: str, *, protocol: Protocol, ids: Sequence[int],
                 options: LinkOptions = BUS_OPTIONS,
                 homing_offsets: Optional[Mapping[int, int]] = None,
                 telemetry_hz: float = DEFAULT_TELEMETRY_HZ,
                 serial_factory: SerialFactory = open_serial, clock: Clock = time.monotonic,
                 on_state: Optional[Callable[[LinkState], None]] = None) -> None:
        protocol = Protocol(protocol)
        if protocol not in _BUSES:
            raise ValueError(f'protocol = {protocol.value!r}, must be a bus protocol: '
                             f'{", ".join(p.value for p in _BUSES)}')
        make_codec, table = _BUSES[protocol]
        self.path = path
        self.protocol = protocol
        self.ids = tuple(int(servo_id) for servo_id in ids)
        self.options = options
        self._clock = clock
        self._count = Counters()
        self._codec = make_codec()
        self._scheduler = BusScheduler(self._codec, self.ids, table, options, self._count,
                                       homing_offsets=homing_offsets, telemetry_hz=telemetry_hz)
        self._traffic = _BusTraffic(self, self._codec, self._scheduler)
        self._connection = Connection(path, self._traffic, name=f'BusLink {path}',
                                      options=options, serial_factory=serial_factory,
                                      clock=clock, on_state=on_state)
        self._cv = self._connection.lock

    # -- commands (any thread, never block) ---------------------------------------------------

    def set_goals(self, counts_by_id: Mapping[int, int], move_s: float = 0.0) -> None:
        """Send the servos named to these goals [counts], arriving together after ``move_s``.

        ONE sync write carries every servo's goal (those not named keep theirs); latest wins:
        a command not yet written is replaced (``stats().coalesced``), so a fast producer
        never builds a queue. A servo gets goals only once its present position was read on
        this connection; goals set before its admission are dropped, so it holds where it
        stands, and one admitted after the handshake takes goals again once
        :meth:`take_admitted` has named it. While torque is off goals are not written.

        :param move_s: how long the move takes [s]: each servo's speed is its distance over
            this time; 0 = at once (the servo's fastest); at most ``MOVE_MAX_S``
        :raises ValueError: on an unknown id, a count outside the servo's range or a bad
            ``move_s``; nothing is changed then
        """
        if not 0.0 <= move_s <= MOVE_MAX_S:
            raise ValueError(f'move_s = {move_s!r}, must be within [0, {MOVE_MAX_S}]')
        with self._cv:
            pending = self._scheduler.set_goals(counts_by_id, move_s)
        if pending:
            return           # an unsent command already has the I/O thread's attention
        if not self._connection.write_now(self._scheduler.next_write):
            self._connection.wake()     # the I/O thread writes it when the line is free
            return
        with self._cv:
            answered = self._scheduler.in_flight()
        if answered:
            self._connection.nudge()    # the I/O thread times the answers of what went out

    def torque(self, on: bool) -> None:
        """Turn every servo's torque on, holding its present position, or off (limp).

        On reads each servo's position and writes it as the goal before the torque, each
        write answered, so the arm does not move; off leaves the feedback running, so a limp
        arm still reports its positions as it is moved by hand. Servos admitted later get
        the same.
        """
        with self._cv:
            self._scheduler.set_torque(on)
        self._connection.wake()

    def limp(self, servo_id: int, limp: bool) -> None:
        """Keep one servo limp whatever :meth:`torque` says (``limp``), or stop doing so.

        For a servo that must rest (overheating) while the others hold: its torque goes off,
        answered, and stays off at every re-admission; goals for it are neither written nor
        kept; its position is still reported. Released, it gets the torque :meth:`torque`
        last asked for (on: holding where it stands).

        :raises ValueError: on an unknown id; nothing changes then
        """
        with self._cv:
            self._scheduler.set_limp(servo_id, limp)
        self._connection.wake()

    def torque_limit(self, servo_id: int, fraction: Optional[float]) -> None:
        """Cap one servo's output at ``fraction`` of its full torque (None: full); latest wins.

        Written to the model's torque-limit register (STS3215 and AX-12 ``Torque_Limit``,
        Dynamixel X ``Goal_PWM``), answered and retried; given again to a servo admitted
        anew (the register is RAM).

        :raises ValueError: on an unknown id or a fraction outside [0, 1]; nothing changes then
        """
        with self._cv:
            self._scheduler.set_torque_limit(servo_id, fraction)
        self._connection.wake()

    def reboot(self, ids: Sequence[int]) -> tuple[int, ...]:
        """Reboot the servos named that answer; return those whose reboot was queued.

        The way out of a Dynamixel hardware-error shutdown (overload, overheating,
        electrical shock in its Shutdown register): the servo stays limp until rebooted.
        Each gets one answered Reboot (Protocol 2.0 answers before it restarts), then is
        treated as lost: pinged until it answers, admitted anew (its torque the one
        :meth:`torque` last asked for, else limp as at power-up), and named by
        :meth:`take_admitted`, before which it takes no goal. A servo not in error may be
        rebooted too. Nothing is queued while the link is not connected (every servo is
        admitted anew at the connect).

        :raises ValueError: on an unknown id, or on Feetech, which has no reboot (its 0x06 is
            a factory reset, never sent): the reason is :attr:`reboot_refusal`
        """
        with self._cv:
            if self._connection.state is not LinkState.READY:
                self._scheduler.check_reboot(ids)
                return ()
            queued = self._scheduler.reboot(ids)
        self._connection.wake()
        return queued

    @property
    def reboot_refusal(self) -> str:
        """Return why these servos cannot be rebooted ('' when they can)."""
        return self._codec.REBOOT_REFUSAL

    # -- observation -------------------------------------------------------------------------

    @property
    def board(self) -> Optional[str]:
        """Return what answered, true at any moment of the connection; None before any did.

        While servos are admitted (the moment the link is READY), how many answered the
        connect's ping: ``'6 of 6 feetech servos answered the ping (ids 1 2 3 4 5 6)'``; the
        models of the admitted so far would undercount the bus. Once every servo is admitted
        or named silent, the models of those answering: ``'STS3215 x6'``, or
        ``'STS3215 x5 (silent: id 4)'``.
        """
        answered = self._traffic.answered
        with self._cv:
            if not self._scheduler.admission_done():
                if not answered:
                    return None
                return (f'{len(answered)} of {len(self.ids)} {self.protocol.value} servos '
                        f'answered the ping (ids {" ".join(map(str, answered))})')
            conditions = self._scheduler.conditions()
            admitted = self._scheduler.admitted()
        models = [conditions[servo_id].model for servo_id in admitted]
        silent = [i for i, c in conditions.items() if c.silent_since_s is not None]
        named = ', '.join(f'{model} x{models.count(model)}' for model in dict.fromkeys(models))
        if silent:
            ids = ' '.join(map(str, silent))
            named = f'{named} (silent: id{"s" if len(silent) > 1 else ""} {ids})'.lstrip()
        return named or None

    def positions(self) -> Optional[BusPositions]:
        """Return the latest sync read's present positions [counts], None before the first."""
        with self._cv:
            return self._scheduler.positions

    def admitted(self) -> tuple[int, ...]:
        """Return the ids that answer and whose position was read on this connection."""
        with self._cv:
            return self._scheduler.admitted()

    def limits(self) -> dict[int, tuple[int, int]]:
        """Return each servo's (min, max) position-limit registers as read at connect."""
        with self._cv:
            return self._scheduler.limits()

    def homing_offsets(self) -> dict[int, int]:
        """Return each servo's homing-offset register as read (or written) at connect."""
        with self._cv:
            return self._scheduler.homing_offsets()

    def torques(self) -> dict[int, Optional[bool]]:
        """Return each servo's torque as last read or written (None: not known yet)."""
        with self._cv:
            return self._scheduler.torques()

    def torque_limits(self) -> dict[int, Optional[int]]:
        """Return each servo's torque-limit register as last written (None: not written)."""
        with self._cv:
            return self._scheduler.torque_limits()

    def health(self) -> dict[int, ServoCondition]:
        """Return what each servo last reported of itself (readings, error words, silence)."""
        with self._cv:
            return self._scheduler.conditions()

    def take_admitted(self) -> dict[int, int]:
        """Return the servos admitted since the last call, and the count each holds at.

        Those admitted after the connect's handshake: anew once a servo answers again after it
        stopped (a loose cable, its supply cycled, the host stalled), or late (it missed the
        handshake's pings). Each holds where it stands, its earlier goal dropped, and takes
        no goal until it was taken here: a caller that plans motion (servo_driver) moves it
        on from where it holds, never from where it was.
        """
        with self._cv:
            return self._scheduler.take_admitted()

    def take_notices(self) -> list[Notice]:
        """Return, once each, what a person should read: servos silent or back, offsets."""
        with self._cv:
            return self._scheduler.take_notices()

    def stats(self) -> LinkStats:
        """Return a snapshot of the counters (``acks``: status packets received)."""
        with self._cv:
            return self._count.snapshot()

    def codec_counts(self) -> dict[str, int]:
        """Return the receiver's counts of skipped garbage bytes and bad checksums."""
        with self._cv:
            return {'garbage bytes': self._codec.garbage_bytes,
                    'bad checksums': self._codec.bad_checksums}

    def wait_ready(self, timeout_s: float) -> tuple[int, ...]:
        """Block until connected and every servo admitted or found silent; return the admitted.

        :raises LinkTimeout: if that does not happen within ``timeout_s``
        :raises LinkLost: if the link is closed
        """
        deadline = Deadline(timeout_s, clock=self._clock)
        connection = self._connection
        with self._cv:
            while (connection.state is not LinkState.READY
                   or not self._scheduler.admission_done()):
                connection.raise_if_closed()
                if deadline.expired():
                    raise LinkTimeout(f'{self.path}: servos not ready within {timeout_s} s '
                                      f'(state {connection.state.value}, last error: '
                                      f'{connection.last_error})')
                self._cv.wait(min(deadline.time_left(), 0.05))
            return self._scheduler.admitted()

    def sync(self, timeout_s: float) -> None:
        """Block until the goals and torque set so far went out to every servo that answers.

        :raises LinkTimeout: if that does not happen within ``timeout_s``
        :raises LinkLost: if the link is closed
        """
        deadline = Deadline(timeout_s, clock=self._clock)
        with self._cv:
            while True:
                self._connection.raise_if_closed()
                if self._connection.state is LinkState.READY and self._scheduler.settled():
                    return
                if deadline.expired():
                    raise LinkTimeout(f'{self.path}: servos not in sync within {timeout_s} s '
                                      f'(state {self._connection.state.value})')
                self._cv.wait(min(deadline.time_left(), 0.05))


class _BusTraffic:
    """A servo bus on a connection: the ping handshake, then the scheduler."""

    def __init__(self, link: BusLink, codec: BusCodec, scheduler: BusScheduler) -> None:
        self._link = link
        self._codec = codec
        self._scheduler = scheduler
        self.answered: tuple[int, ...] = ()    # the ids that answered the latest handshake

    def handshake(self, connection: Connection) -> None:
        """Ping every id (each up to ``max_retries`` times again) until one answers; note which.

        :raises LinkTimeout: if none answered within ``handshake_timeout_s`` (naming what
            came back instead, and the likely causes)
        """
        options = connection.options
        codec = self._codec
        codec.clear()
        garbage = codec.garbage_bytes + codec.bad_checksums
        deadline = Deadline(options.handshake_timeout_s, clock=connection.clock)
        while not deadline.expired() and not connection.closing.is_set():
            answered = [servo_id for servo_id in self._link.ids
                        if any(self._ping(connection, servo_id)
                               for _ in range(options.max_retries + 1))]
            if answered:
                self.answered = tuple(answered)
                return
            connection.closing.wait(min(options.handshake_interval_s, deadline.time_left()))
        noise = codec.garbage_bytes + codec.bad_checksums - garbage
        heard = (f'{noise} bytes that were no status packet came back'
                 if noise else 'nothing came back')
        raise LinkTimeout(f'{self._link.path}: no {self._link.protocol.value} servo answered a '
                          f'ping (ids {list(self._link.ids)}, {options.baud} baud) within '
                          f'{options.handshake_timeout_s} s; {heard}; likely {_LIKELY}')

    def _ping(self, connection: Connection, servo_id: int) -> bool:
        data = self._codec.ping(servo_id)
        connection.write(data)
        with connection.lock:
            self._scheduler.note_write(data, connection.clock())
        wait = Deadline(connection.options.reply_timeout_s + len(data) * 20.0
                        / connection.options.baud, clock=connection.clock)
        while not wait.expired() and not connection.closing.is_set():
            received = connection.read(wait.time_left(), connection.closing)
            if received:
                self._codec.feed(received)
            status = self._codec.take_status()
            while status is not None:
                if status.id == servo_id:
                    return True
                status = self._codec.take_status()
        self._codec.clear()
        return False

    def connected(self, now_s: float, again: bool) -> None:
        """Admit the servos that answered; name the others silent."""
        self._scheduler.forget_bus(now_s, self.answered)
        if again:
            self._scheduler.count.reconnects += 1

    def expire(self, now_s: float) -> None:
        """Close a request whose answers are late."""
        self._scheduler.expire(now_s)

    def next_write(self, now_s: float) -> Optional[bytes]:
        """Return what the scheduler lets out now."""
        return self._scheduler.next_write(now_s)

    def wake_at(self, now_s: float) -> float:
        """Return when the scheduler has something to do."""
        return self._scheduler.wake_at(now_s)

    def written(self, now_s: float) -> None:
        """Let the scheduler time the answers from the write."""
        self._scheduler.written(now_s)

    def received(self, data: bytes, now_s: float) -> None:
        """Feed the codec and hand the statuses to the scheduler (none new without bytes)."""
        if data:
            self._codec.feed(data)
            self._scheduler.received(now_s)
