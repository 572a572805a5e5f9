"""Serial transport to a servo board: the desired state, the board's handshake and answers.

:class:`ServoLink` holds one :class:`~fabrik_ros.servo_io.connection.Connection` (the port, its
I/O thread, the back-off and reconnection). Callers only describe the state they want
(targets, limits, pulse frame, enable bits, watchdog) and the I/O thread brings the board
there, again after every reconnect or board reset. Pulse commands are latest-wins: a command
that arrives before the previous one was sent replaces it, so a fast producer never builds a
queue.

Every public method may be called from any thread; the commands never block. What goes out
when is decided by the pure :class:`~fabrik_ros.servo_io.scheduler.Scheduler` (its docstring
has the rules: a pulse command as soon as the line is free, several awaiting their ACKs on the
native protocol, retries, position reads). A pulse command that may go out at once is written
by the caller's thread itself, sparing it the hand-over to the I/O thread. After every
(re)connect the board's handshake (its READY or an answered PING/VER/Get Errors) proves the
port holds the board, and everything is sent again, the enable bits included.
"""

from collections.abc import Callable, Sequence
import time
from typing import Optional, Union

from fabrik_ros.servo_io.connected_link import ConnectedLink
from fabrik_ros.servo_io.connection import Connection
from fabrik_ros.servo_io.deadline import Clock, Deadline
from fabrik_ros.servo_io.device_bytes import shown
from fabrik_ros.servo_io.errors import (
    BoardRefused,
    LinkError,
    LinkTimeout,
    NotABoard,
)
from fabrik_ros.servo_io.link_options import LinkOptions, LinkState, MOVE_MAX_S
from fabrik_ros.servo_io.link_stats import Counters, LinkStats
from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.dialect import (
    Answer,
    Capabilities,
    Dialect,
    Positions,
    Protocol,
    Transaction,
)
from fabrik_ros.servo_io.protocols.dialects import dialect_type
from fabrik_ros.servo_io.protocols.native import BoardInfo, WatchdogAction
from fabrik_ros.servo_io.scheduler import Scheduler
from fabrik_ros.servo_io.serial_port import open_serial, SerialFactory

DEFAULT_OPTIONS = LinkOptions()
# Silence the line must keep after an unframed handshake answer: a hundred byte times even
# at 9600 baud, and many times a pty's or a USB adapter's latency.
_QUIET_S = 0.1


class ServoLink(ConnectedLink):
    """Drive one servo board over a serial port from a background thread.

    Closing it (:meth:`close`, or leaving ``with``) leaves the board to its watchdog.

    >>> link = ServoLink('/dev/serial/by-id/usb-Arduino_Uno-if00')   # doctest: +SKIP
    >>> with link:                                                     # doctest: +SKIP
    ...     link.wait_ready(5.0)
    ...     link.set_pulses([1500] * 6, move_s=1.0)
    ...     link.enable([True] * 6)
    ...     link.sync(1.0)

    :param path: device path, symlinks such as ``/dev/serial/by-id/...`` included; reopened by
        the same name after every loss, so a replugged board is found again.
    :param protocol: what the board speaks.
    :param channels: servo channels driven, from channel 0.
    :param options: timing and retry settings.
    :param serial_factory: ``(path, baud, write_timeout_s) -> port``; tests pass pty paths or
        pyserial URLs through the default.
    :param clock: monotonic clock for every deadline [s].
    :param on_state: called from the I/O thread on every state change.
    """

    def __init__(self, path: str, *, protocol: Protocol = Protocol.NATIVE, channels: int = 6,
                 options: LinkOptions = DEFAULT_OPTIONS,
                 serial_factory: SerialFactory = open_serial, clock: Clock = time.monotonic,
                 on_state: Optional[Callable[[LinkState], None]] = None) -> None:
        self.path = path
        self.protocol = Protocol(protocol)
        self.channels = channels
        self.options = options
        self._dialect: Dialect = dialect_type(self.protocol)(channels)
        self._clock = clock
        self._count = Counters()
        self._scheduler = Scheduler(self._dialect, channels, options, self._count)
        self._board_traffic = _BoardTraffic(self, self._dialect, self._scheduler)
        self._connection = Connection(path, self._board_traffic, name=f'ServoLink {path}',
                                      options=options, serial_factory=serial_factory,
                                      clock=clock, on_state=on_state)
        self._cv = self._connection.lock
        self._pulses = self._scheduler.pulses
        self._limits = self._scheduler.limits
        self._frame = self._scheduler.frame
        self._enable = self._scheduler.enable
        self._watchdog = self._scheduler.watchdog

    # -- commands (any thread, never block) ---------------------------------------------------

    def set_pulses(self, pulses_us: Sequence[int], move_s: float = 0.0) -> None:
        """Set every channel's target; the board moves there linearly over ``move_s``.

        Latest wins: if the previous command has not been written yet it is replaced (counted
        in ``stats().coalesced``). Setting a target does not enable a channel.

        :param pulses_us: one target per channel [µs]; 0 keeps that channel's target.
        :param move_s: move duration [s], 0 = at once, at most ``MOVE_MAX_S`` (65.535).
        :raises ValueError: on a wrong count, a pulse outside the channel's limits or a bad
            ``move_s``; nothing is changed then.
        """
        pulses = self._checked_pulses(pulses_us)
        if not 0.0 <= move_s <= MOVE_MAX_S:
            raise ValueError(f'move_s = {move_s!r}, must be within [0, {MOVE_MAX_S}]')
        with self._cv:
            previous = self._pulses.value[0]
            merged = tuple(new or old for new, old in zip(pulses, previous, strict=True))
            self._count.commands += 1
            pending = self._pulses.unsent()
            if pending:
                self._count.coalesced += 1
            self._pulses.set((merged, round(move_s * 1000)))
        if pending:
            return           # a pending command already has the I/O thread's attention
        sent = behind = False

        def take(now_s: float) -> Optional[bytes]:
            nonlocal sent, behind
            data = self._scheduler.next_write(now_s)
            sent = not self._pulses.unsent()   # a newer command wakes the thread itself
            behind = self._scheduler.has_work(now_s)   # a position read follows right behind
            return data

        if self._connection.write_now(take) and sent and not behind:
            self._connection.nudge()   # ends a short wait, so that the I/O thread sees the answer
        else:
            self._connection.wake()

    def set_limits(self, limits_us: Sequence[tuple[int, int]]) -> None:
        """Set each channel's ``(min_us, max_us)``; the link and the board refuse pulses outside.

        Targets already set outside the new limits are clamped into them, as the board does.

        :raises ValueError: on a wrong count or a pair outside the protocol's pulse range or
            with ``min_us >= max_us``.
        """
        low, high = self.capabilities.pulse_range_us
        if len(limits_us) != self.channels:
            raise ValueError(f'len(limits_us) = {len(limits_us)}, must be {self.channels}')
        for channel, (lo, hi) in enumerate(limits_us):
            if not low <= lo < hi <= high:
                raise ValueError(f'limits_us[{channel}] = ({lo}, {hi}), must satisfy '
                                 f'{low} <= min_us < max_us <= {high}')
        limits = tuple((int(lo), int(hi)) for lo, hi in limits_us)
        with self._cv:
            pulses, move_ms = self._pulses.value
            clamped = tuple(min(max(p, lo), hi) if p else 0
                            for p, (lo, hi) in zip(pulses, limits, strict=True))
            if clamped != pulses:
                self._pulses.set((clamped, move_ms))
            self._limits.set(limits)
        self._connection.wake()

    def enable(self, channels: Union[int, Sequence[bool]]) -> None:
        """Make exactly the given channels pulse; the others are detached (limp).

        :param channels: a bit mask (bit i = channel i) or one bool per channel.
        :raises ValueError: on bits beyond the channel count, a wrong list length, or a channel
            whose target was never set (the board would refuse it with NO_TARGET).
        """
        mask = self._checked_mask(channels)
        with self._cv:
            unset = [ch for ch in range(self.channels)
                     if mask >> ch & 1 and not self._pulses.value[0][ch]]
            if unset:
                raise ValueError(f'enable: channels {unset} have no target yet, '
                                 'must call set_pulses() for them first')
            self._enable.set(mask)
        self._connection.wake()

    def detach(self) -> None:
        """Stop the pulses on every channel."""
        self.enable(0)

    def set_watchdog(self, timeout_s: float,
                     action: WatchdogAction = WatchdogAction.HOLD) -> None:
        """Make the board hold or detach when the host is silent for ``timeout_s`` (0 = off).

        While it is on, the link talks to the board at least every third of the timeout. After
        a detach the link does not re-enable by itself (:meth:`positions` shows the channels as
        None); call :meth:`enable` again to resume.

        :raises ValueError: if the protocol has no watchdog or ``timeout_s`` is outside
            [0, 65.535].
        """
        if not self.capabilities.watchdog:
            raise ValueError(f'set_watchdog: protocol {self.protocol.name} has no board '
                             'watchdog, only NATIVE has')
        if not 0.0 <= timeout_s <= 65.535:
            raise ValueError(f'timeout_s = {timeout_s!r}, must be within [0, 65.535]')
        with self._cv:
            self._watchdog.set((round(timeout_s * 1000), WatchdogAction(action)))
        self._connection.wake()

    def set_frame(self, period_us: int) -> None:
        """Pulse every ``period_us`` with all channels rising together, or 0: slotted 50 Hz.

        For digital servos only (analog ones need the default 0). The board checks the frame
        and the limits against each other: limits go out in the slotted frame and the frame
        after them, now and again after every reconnect or board reset; :meth:`sync` waits for
        both, and names the frame if the board refuses it.

        :raises ValueError: if the protocol has no frame setting (only NATIVE has), or the
            period is neither 0 nor within [max of the limits + ``FRAME_GAP_US``,
            ``FRAME_MAX_US``].
        """
        if not self.capabilities.fast_frame:
            raise ValueError(f'set_frame: protocol {self.protocol.name} has no pulse frame '
                             'setting, only NATIVE has')
        with self._cv:
            shortest = native.min_frame_us(self._limits.value)
            if period_us and not shortest <= period_us <= native.FRAME_MAX_US:
                raise ValueError(f'period_us = {period_us!r}, must be 0 (slotted) or within '
                                 f'[{shortest}, {native.FRAME_MAX_US}] (max limit + '
                                 f'{native.FRAME_GAP_US} us gap, longest frame)')
            self._frame.set(int(period_us))
        self._connection.wake()

    # -- observation -------------------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        """What this protocol can do (acks, limits on the board, watchdog, pulse range)."""
        return self._dialect.capabilities

    @property
    def board(self) -> Optional[BoardInfo]:
        """Return what the board reported at the last handshake (or READY)."""
        return self._board_traffic.board

    def positions(self) -> Optional[Positions]:
        """Return the latest pulses the board reported, or None before the first report."""
        with self._cv:
            return self._scheduler.positions

    def stats(self) -> LinkStats:
        """Return a snapshot of the counters."""
        with self._cv:
            return self._count.snapshot()

    def wait_ready(self, timeout_s: float) -> BoardInfo:
        """Block until the link is READY and return the board's info.

        :raises LinkTimeout: if that does not happen within ``timeout_s``.
        :raises LinkLost: if the link is closed.
        """
        deadline = Deadline(timeout_s, clock=self._clock)
        connection = self._connection
        with self._cv:
            while connection.state is not LinkState.READY or self._board_traffic.board is None:
                connection.raise_if_closed()
                if deadline.expired():
                    raise LinkTimeout(f'{self.path}: board not ready within {timeout_s} s '
                                      f'(state {connection.state.value}, last error: '
                                      f'{connection.last_error})')
                self._cv.wait(min(deadline.time_left(), 0.05))
            return self._board_traffic.board

    def sync(self, timeout_s: float) -> None:
        """Block until the board has every setting and target asked for so far.

        Without acknowledgements (SSC32, MAESTRO) "has" means "was written to the port".

        :raises BoardRefused: if the board answered NACK to the latest value of a setting.
        :raises LinkTimeout: if that does not happen within ``timeout_s``.
        :raises LinkLost: if the link is closed.
        """
        deadline = Deadline(timeout_s, clock=self._clock)
        slots = self._scheduler.slots
        with self._cv:
            while True:
                self._connection.raise_if_closed()
                for slot in slots:
                    if slot.refused == slot.version and slot.error is not None:
                        raise BoardRefused(f'{self.path}: {slot.error}')
                if not any(slot.dirty() for slot in slots):
                    return
                if deadline.expired():
                    raise LinkTimeout(f'{self.path}: board not in sync within {timeout_s} s '
                                      f'(state {self._connection.state.value})')
                self._cv.wait(min(deadline.time_left(), 0.05))

    # -- argument checks -----------------------------------------------------------------------

    def _checked_pulses(self, pulses_us: Sequence[int]) -> tuple[int, ...]:
        if len(pulses_us) != self.channels:
            raise ValueError(f'len(pulses_us) = {len(pulses_us)}, must be {self.channels}')
        limits = self._limits.value
        for channel, pulse in enumerate(pulses_us):
            lo, hi = limits[channel]
            if pulse and not lo <= pulse <= hi:
                raise ValueError(f'pulses_us[{channel}] = {pulse!r}, must be 0 or within the '
                                 f'limits [{lo}, {hi}]')
        return tuple(int(pulse) for pulse in pulses_us)

    def _checked_mask(self, channels: Union[int, Sequence[bool]]) -> int:
        if isinstance(channels, int):
            if not 0 <= channels < 1 << self.channels:
                raise ValueError(f'enable mask = {channels:#x}, must only use bits 0..'
                                 f'{self.channels - 1}')
            return channels
        if len(channels) != self.channels:
            raise ValueError(f'len(channels) = {len(channels)}, must be {self.channels}')
        return sum(1 << ch for ch, on in enumerate(channels) if on)


class _BoardTraffic:
    """A PWM board on a connection: its handshake, and the scheduler that paces the rest.

    :param link: the link, for its path, protocol, channel count and counters in messages
    """

    def __init__(self, link: ServoLink, dialect: Dialect, scheduler: Scheduler) -> None:
        self._link = link
        self._dialect = dialect
        self._scheduler = scheduler
        self._count = scheduler.count
        self.board: Optional[BoardInfo] = None

    # -- the connection's Traffic ---------------------------------------------------------------

    def handshake(self, connection: Connection) -> None:
        """Ask the board who it is until it answers as it can, or refuse the port.

        Once per connection, before the handshake, the dialect forgets what it holds of the
        last one (bytes, positioned channels, targets): it must not pass for this one's.

        :raises NotABoard: if what answered cannot be the board (the last such answer is
            named, with the likely causes)
        :raises LinkTimeout: if nothing answered
        """
        self._dialect.reset()
        options = connection.options
        deadline = Deadline(options.handshake_timeout_s, clock=connection.clock)
        refusal: Optional[NotABoard] = None
        while not deadline.expired():
            request = self._dialect.handshake()
            self._write(connection, request.data)
            wait = Deadline(min(options.handshake_interval_s, deadline.time_left()),
                            clock=connection.clock)
            try:
                board = self._identify(connection, self._await(connection, request, wait))
            except NotABoard as error:
                refusal, board = error, None
            if board is not None:
                self._check_board(board)
                self.board = board
                return
            self._dialect.discard_input()
        dialect = self._dialect
        path = self._link.path
        causes = f'; likely {dialect.likely_causes}' if dialect.likely_causes else ''
        if refusal is not None:
            raise NotABoard(f'{path}: refused, no {dialect.board_name}: {refusal}{causes}')
        raise LinkTimeout(f'{path}: no {self._link.protocol.name} board answered within '
                          f'{options.handshake_timeout_s} s{causes}')

    def connected(self, now_s: float, again: bool) -> None:
        """Mark every setting as missing on the board, to be sent again."""
        self._scheduler.forget_board(now_s)
        if again:
            self._count.reconnects += 1

    def expire(self, now_s: float) -> None:
        """Re-send late requests, or find the board silent."""
        self._scheduler.expire(now_s)

    def next_write(self, now_s: float) -> Optional[bytes]:
        """Return what the scheduler lets out now."""
        return self._scheduler.next_write(now_s)

    def wake_at(self, now_s: float) -> float:
        """Return when the scheduler has something to do."""
        return self._scheduler.wake_at(now_s)

    def written(self, now_s: float) -> None:
        """Nothing to do: the board's scheduler times a request from when it handed it out."""

    def received(self, data: bytes, now_s: float) -> None:
        """Feed the dialect, hand the answers to the scheduler, and notice a board reset."""
        if data:
            self._dialect.feed(data)
        self._scheduler.received(now_s)
        board = self._dialect.take_board_reset()
        if board is not None:
            self._count.board_resets += 1
            self.board = board
            self._dialect.reset()
            self._scheduler.forget_board(now_s)

    # -- the handshake's steps ------------------------------------------------------------------

    def _identify(self, connection: Connection,
                  answer: Optional[Answer]) -> Optional[BoardInfo]:
        """Return the board in a READY or in ``answer``; None if neither says.

        Where answers are unframed, the line must then stay quiet for ``_QUIET_S``: a board
        sends nothing it was not asked for, a wrong baud rate or another device does.

        :raises NotABoard: on an answer the board cannot give, or bytes after it
        """
        board = self._dialect.take_board_reset()
        if board is None and answer is not None and answer.nack is None:
            board = self._dialect.board_info(answer)
        if board is None or not self._dialect.unframed:
            return board
        quiet = Deadline(_QUIET_S, clock=connection.clock)
        unrequested = self._dialect.take_unrequested()
        while not unrequested and not quiet.expired() and not connection.closing.is_set():
            self._receive(connection, quiet.time_left())
            unrequested = self._dialect.take_unrequested()
        if unrequested:
            raise NotABoard(f'after its answer it sent {shown(unrequested)} that no request '
                            'asked for')
        return board

    def _check_board(self, board: BoardInfo) -> None:
        channels = self._link.channels
        if board.channels < channels:
            raise LinkError(f'{self._link.path}: board {board.firmware!r} has {board.channels} '
                            f'channels, link configured for {channels}')

    def _await(self, connection: Connection, transaction: Transaction,
               deadline: Deadline) -> Optional[Answer]:
        while True:
            answer = self._dialect.take_answer(transaction)
            if answer is not None or deadline.expired() or connection.closing.is_set():
                return answer
            self._receive(connection, deadline.time_left())

    def _receive(self, connection: Connection, max_wait_s: float) -> None:
        data = connection.read(max_wait_s, connection.closing)
        if data:
            self._dialect.feed(data)

    def _write(self, connection: Connection, data: bytes) -> None:
        connection.write(data)
        with connection.lock:
            self._scheduler.note_write(data, connection.clock())
