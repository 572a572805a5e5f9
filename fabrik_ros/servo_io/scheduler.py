"""Decide what the link writes next and when: pure, clock passed in, no port and no thread.

:class:`Scheduler` holds the desired state (one :class:`~fabrik_ros.servo_io.link_slots.Slot`
per setting), the requests on their way and the modelled serial line. The link's I/O thread
asks it for the next bytes (:meth:`Scheduler.next_write`), tells it what arrived
(:meth:`Scheduler.received`) and how late it is (:meth:`Scheduler.expire`), and sleeps until
:meth:`Scheduler.wake_at`. Every decision takes ``now_s`` as an argument, so tests drive it with
a fake clock and a dialect, without ptys, threads or sleeps.

Rules, in order of priority:

- Nothing is written while the line still carries earlier bytes (``len * 10 / baud`` each):
  a newer command can still replace an unsent one (latest wins), so nothing queues up.
- Limits, pulse frame, watchdog and enable bits go out alone, one request at a time, and only
  once nothing else is on its way; enable bits only after the pulses they need are
  acknowledged. The board checks limits and a fast frame against each other: once a frame
  was ever set, limits go out in the slotted frame (SET_FRAME 0 first) and a fast frame is
  sent again after them, so limits land whatever frame the board was left in, and a frame
  they no longer fit is the one refused.
- Pulse commands go out as soon as the line is free: up to ``max_in_flight`` of them may
  await their acknowledgements (native SEQ numbers tell the answers apart), and at most
  ``max_rate_hz`` per second when that option is set (a board slower than its line).
- A pulse command leaves out the channels whose target the board surely has: the one last
  acknowledged (raw protocols: written), unless a command still on its way sets another.
  Without acknowledgements, every channel is carried at least every ``REFRESH_EVERY_S``, one
  channel at a time, so a write the line lost unnoticed is made good without a command that
  carries them all at once (31 bytes, 2.7 ms on an SSC-32U) holding up the next target.
- One position read may be on its way beside them. A read never holds a pulse command back:
  a command waiting for the line goes first, and while commands stream (one went out within
  a poll period) a read that falls due waits for the next one and follows right behind it,
  in the gap before the command after. A read that has waited a whole poll period goes
  first, so that a line saturated with commands still carries reads; the watchdog's
  keep-alive never waits.
- An unanswered request is re-sent up to ``max_retries`` times (so is one refused with
  NACK BAD_CRC), unless a newer value of the same setting has gone out since; after
  ``lost_after`` requests in a row are given up, :class:`~fabrik_ros.servo_io.errors.LinkLost`.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
import enum
import math
from typing import Optional

from fabrik_ros.servo_io.errors import BoardRefused, LinkLost
from fabrik_ros.servo_io.link_options import LinkOptions
from fabrik_ros.servo_io.link_slots import Slot
from fabrik_ros.servo_io.link_stats import Counters
from fabrik_ros.servo_io.protocols.dialect import (
    Answer,
    AnswerKind,
    Dialect,
    Positions,
    Transaction,
)
from fabrik_ros.servo_io.protocols.native import (
    DEFAULT_LIMITS_US,
    FRAME_SLOTTED,
    NackError,
    WatchdogAction,
)

PulseValue = tuple[tuple[int, ...], int]        # (pulses per channel [µs], move time [ms])
# Longest time a channel goes without a pulse command carrying it, where nothing is
# acknowledged [s].
REFRESH_EVERY_S = 1.0


class Sharing(enum.Enum):
    """Whether a job may be on its way together with others."""

    ALONE = 'alone'      # limits, watchdog, enable: nothing else in flight
    PULSES = 'pulses'    # pulse commands: several at once, beside one position read
    READ = 'read'        # a position read: one at a time, beside pulse commands


@dataclass(eq=False)
class Job:
    """The requests for one slot value (or a position read) and what to do when all succeed."""

    name: str
    transactions: list[Transaction]
    done: Callable[[list[Answer], float], None]     # (answers, now [s])
    sharing: Sharing
    slot: Optional[Slot] = None
    version: int = 0
    answers: list[Answer] = field(default_factory=list)
    written: int = 0                # transactions written so far (each after the previous one)
    pulses: tuple[int, ...] = ()    # the targets a pulse command sets [µs]

    def waiting(self) -> bool:
        """Return True while the last written request has not been answered."""
        return len(self.answers) < self.written

    def complete(self) -> bool:
        """Return True once every request has been answered."""
        return len(self.answers) == len(self.transactions)


@dataclass(eq=False)
class Flight:
    """A request written and not answered yet."""

    job: Job
    transaction: Transaction
    sent_s: float
    deadline_s: float
    attempt: int = 0


class Scheduler:
    """Bring the board to the desired state over one serial line; see the module docstring.

    Not thread-safe: the link calls every method under its own lock.

    :param dialect: the protocol's requests and answers
    :param channels: servo channels driven
    :param options: timing and retry settings
    :param counters: statistics, updated in place
    """

    def __init__(self, dialect: Dialect, channels: int, options: LinkOptions,
                 counters: Counters) -> None:
        self._dialect = dialect
        self.channels = channels
        self.options = options
        self.count = counters
        self.pulses = Slot(((0,) * channels, 0))
        self.limits = Slot((DEFAULT_LIMITS_US,) * channels)
        self.frame = Slot(FRAME_SLOTTED)     # the pulse frame [µs]; never set: the board's own
        self.enable = Slot(0)
        self.watchdog = Slot((0, WatchdogAction.HOLD))
        self.slots = (self.limits, self.frame, self.watchdog, self.pulses, self.enable)
        self.board_mask = 0
        self.failures = 0
        self._jobs: list[Job] = []
        self._flights: list[Flight] = []
        self._resend: list[Flight] = []
        self._line_free_s = 0.0
        self._next_pulse_s = 0.0
        self._next_poll_s = 0.0
        self._last_write_s = 0.0
        self._last_pulses_s = -math.inf    # when the last pulse command was written
        self.positions: Optional[Positions] = None
        self._applied_pulses: Optional[tuple[int, ...]] = None     # on the board
        self._applied_version = 0
        self._refresh_s = 0.0           # when the next channel is due to be carried again
        self._refresh_channel = 0       # which one (unacknowledged protocols)

    # -- connection ----------------------------------------------------------------------------

    def forget_board(self, now_s: float) -> None:
        """Drop everything on its way and mark every setting as missing on the board.

        Called after a (re)connect and a board reset. Which channels pulse is unknown then
        (a board that was not reset keeps them), so enable bits once set are sent again, as if
        every other channel pulsed. Before the first enable the bits are left alone: a new
        host (a restarted driver) must not detach servos that hold the arm up.
        """
        self._jobs.clear()
        self._flights.clear()
        self._resend.clear()
        for slot in self.slots:
            slot.forget_board()
        everything = (1 << self.channels) - 1
        self.board_mask = ~self.enable.value & everything if self.enable.version else 0
        self.failures = 0
        self._line_free_s = self._next_pulse_s = self._next_poll_s = 0.0
        self._last_write_s = now_s
        self._last_pulses_s = -math.inf
        self._applied_pulses, self._applied_version = None, 0

    def note_write(self, data: bytes, now_s: float) -> None:
        """Account for bytes the link wrote itself (the handshake) on the line."""
        self._line_free_s = max(self._line_free_s, now_s) + len(data) * 10.0 / self.options.baud
        self._last_write_s = now_s
        self.count.frames_sent += 1
        self.count.bytes_sent += len(data)

    # -- what to write -------------------------------------------------------------------------

    def next_write(self, now_s: float) -> Optional[bytes]:
        """Return the bytes to write now, or None if nothing may go out yet.

        The caller must write them before it asks again: the line model counts them as sent.
        """
        if now_s < self._line_free_s:
            return None
        flight = self._take_resend()
        if flight is not None:
            self.count.retries += 1
            return self._write(flight.job, flight.transaction, now_s, flight.attempt + 1)
        job = self._next_job(now_s)
        if job is None:
            return None
        return self._write(job, job.transactions[job.written], now_s, 0)

    def _take_resend(self) -> Optional[Flight]:
        while self._resend:
            flight = self._resend.pop(0)
            if not self._superseded(flight.job):
                return flight
            self._drop(flight.job)
        return None

    def _superseded(self, job: Job) -> bool:
        """Return True for a pulse command a newer one has followed: re-sending it is no use."""
        slot = job.slot
        return job.sharing is Sharing.PULSES and slot is not None and slot.taken > job.version

    def _write(self, job: Job, transaction: Transaction, now_s: float, attempt: int) -> bytes:
        if attempt == 0:
            job.written += 1
        if job.sharing is Sharing.PULSES:
            self._last_pulses_s = now_s
        self.note_write(transaction.data, now_s)
        if transaction.answer is AnswerKind.NONE:
            self._answered(job, Answer(b''), now_s)
        else:
            self._flights.append(Flight(job, transaction, now_s,
                                        now_s + self.options.reply_timeout_s, attempt))
        return transaction.data

    def _next_job(self, now_s: float) -> Optional[Job]:
        """Return the job whose next request goes out now: a started one first, else a new one."""
        for job in self._jobs:
            if not job.waiting() and not job.complete() and not self._in_resend(job):
                return job
        while True:
            choice = self._choice(now_s)
            if choice is None:
                return None
            job = self._new_job(choice, now_s)
            if job.transactions:
                self._jobs.append(job)
                return job
            # nothing to say to this board (no limits on an SSC-32U, say): done already

    def _in_resend(self, job: Job) -> bool:
        return any(flight.job is job for flight in self._resend)

    def _choice(self, now_s: float) -> Optional[str]:
        """Return which new job may start now, without changing anything."""
        if any(job.sharing is Sharing.ALONE for job in self._jobs):
            return None
        alone = self._alone_due()
        if alone is not None:
            return alone if not self._jobs else None
        reading = any(job.sharing is Sharing.READ for job in self._jobs)
        pulses = self._pulses_may_go(now_s)
        if not reading and self._poll_due(now_s, pulses_waiting=pulses):
            return 'positions'
        return 'pulses' if pulses else None

    def _alone_due(self) -> Optional[str]:
        if self.limits.unsent():
            return 'limits'
        if self.frame.unsent():
            return 'frame'
        if self.watchdog.unsent():
            return 'watchdog'
        if self.enable.unsent() and self._targets_for_enable():
            return 'enable'
        return None

    def _targets_for_enable(self) -> bool:
        """Return True once the board has a target for every channel the enable bits start.

        Waiting for the latest pulses instead would starve the enable bits under a steady
        stream of commands, which keeps the pulses forever on their way.
        """
        if not self.pulses.dirty():
            return True
        applied = self._applied_pulses
        starting = self.enable.value & ~self.board_mask
        return applied is not None and all(applied[ch] for ch in range(self.channels)
                                           if starting >> ch & 1)

    def _new_job(self, choice: str, now_s: float) -> Job:
        if choice == 'limits':
            return self._slot_job('limits', self.limits, Sharing.ALONE, self._limit_requests())
        if choice == 'frame':
            return self._slot_job('frame', self.frame, Sharing.ALONE,
                                  self._dialect.frame(self.frame.value))
        if choice == 'watchdog':
            timeout_ms, action = self.watchdog.value
            return self._slot_job('watchdog', self.watchdog, Sharing.ALONE,
                                  self._dialect.watchdog(timeout_ms, action))
        if choice == 'enable':
            mask = self.enable.value
            return self._slot_job('enable', self.enable, Sharing.ALONE,
                                  self._dialect.enable(mask, self.board_mask,
                                                       self.pulses.value[0]),
                                  board_mask=mask)
        if choice == 'positions':
            period_s = 1.0 / self.options.poll_hz if self.options.poll_hz else 0.0
            # On a fixed grid, so that a read waiting for a command does not slow the reads.
            on_grid = now_s - self._next_poll_s < period_s
            self._next_poll_s = (self._next_poll_s if on_grid else now_s) + period_s
            return Job('positions', self._dialect.poll(), self._store_positions, Sharing.READ)
        pulses, move_ms = self.pulses.value
        if self.options.max_rate_hz:
            self._next_pulse_s = now_s + 1.0 / self.options.max_rate_hz
        pulsing = self.board_mask & self.enable.value     # never start a channel here
        job = self._slot_job('pulses', self.pulses, Sharing.PULSES,
                             self._dialect.pulses(pulses, move_ms, pulsing,
                                                  self._board_pulses(now_s)))
        job.pulses = pulses
        # The version, not the job: a job whose done held it would be a reference cycle, and
        # one per frame made the garbage collector pause the driver every second or so.
        slot_done, version = job.done, job.version

        def done(answers: list[Answer], now_s: float) -> None:
            slot_done(answers, now_s)
            if self._applied_version <= version:
                self._applied_version, self._applied_pulses = version, pulses

        job.done = done
        if not job.transactions:
            done([], now_s)
        return job

    def _limit_requests(self) -> list[Transaction]:
        """Return the limits' requests, in the slotted frame once a pulse frame was ever set.

        A fast frame is then marked as missing on the board, so that it follows the limits.
        Before any frame setting none goes out (the board's reset default holds).
        """
        requests = self._dialect.limits(self.limits.value)
        if not self.frame.version or not requests:
            return requests
        if self.frame.value != FRAME_SLOTTED:
            self.frame.forget_board()
        return self._dialect.frame(FRAME_SLOTTED) + requests

    def _board_pulses(self, now_s: float) -> tuple[Optional[int], ...]:
        """Return the target each channel surely has on the board [µs], None where in doubt.

        Nothing is sure before the first acknowledged command or after a (re)connect. On an
        unacknowledged protocol one channel in turn counts as in doubt every
        ``REFRESH_EVERY_S / channels``, so each is carried again at least every
        ``REFRESH_EVERY_S``.
        """
        applied = self._applied_pulses
        interval_s = REFRESH_EVERY_S / self.channels
        if applied is None:
            self._refresh_s = now_s + interval_s
            return (None,) * self.channels
        on_the_way = [job.pulses for job in self._jobs if job.sharing is Sharing.PULSES]
        board = [pulse if all(other[ch] == pulse for other in on_the_way) else None
                 for ch, pulse in enumerate(applied)]
        if not self._dialect.capabilities.acknowledged and now_s >= self._refresh_s:
            board[self._refresh_channel] = None
            self._refresh_channel = (self._refresh_channel + 1) % self.channels
            # On a fixed grid while commands flow, so lateness does not add up over a round.
            on_grid = now_s - self._refresh_s < interval_s
            self._refresh_s = (self._refresh_s if on_grid else now_s) + interval_s
        return tuple(board)

    def _pulses_may_go(self, now_s: float) -> bool:
        if not self.pulses.unsent() or now_s < self._next_pulse_s:
            return False
        on_the_way = sum(1 for job in self._jobs if job.sharing is Sharing.PULSES)
        return on_the_way < self.options.max_in_flight

    def _poll_due(self, now_s: float, pulses_waiting: bool) -> bool:
        """Return True when positions are to be read now, or the board's watchdog fed.

        A read that falls due while commands stream waits for the next command and goes
        right behind it (the module docstring says why), at most a poll period.
        """
        keepalive_s = self._keepalive_at()
        if keepalive_s is not None and now_s >= keepalive_s:
            return True
        poll_hz = self.options.poll_hz
        if not poll_hz or now_s < self._next_poll_s:
            return False
        if now_s >= self._next_poll_s + 1.0 / poll_hz:
            return True                 # waited a whole period: commands saturate the line
        if pulses_waiting:
            return False                # the command first, the read right behind it
        streaming = now_s - self._last_pulses_s < 1.0 / poll_hz
        return not streaming or self._last_pulses_s >= self._next_poll_s

    def _keepalive_at(self) -> Optional[float]:
        """Return when the board's watchdog must hear from the link again, if it is on."""
        timeout_ms = self.watchdog.value[0]
        return self._last_write_s + timeout_ms / 3000.0 if timeout_ms else None

    def _slot_job(self, name: str, slot: Slot, sharing: Sharing,
                  transactions: list[Transaction], board_mask: Optional[int] = None) -> Job:
        version = slot.version
        slot.taken = version

        def done(answers: list[Answer], now_s: float) -> None:
            slot.applied = max(slot.applied, version)
            if board_mask is not None:
                self.board_mask = board_mask

        if not transactions:
            done([], 0.0)
        return Job(name, transactions, done, sharing, slot, version)

    def _store_positions(self, answers: list[Answer], now_s: float) -> None:
        positions = self._dialect.positions(answers, now_s)
        if positions is not None:
            self.positions = positions

    # -- what came back ------------------------------------------------------------------------

    def received(self, now_s: float) -> None:
        """Take the answers the dialect has recognised for requests on their way."""
        for flight in list(self._flights):
            answer = self._dialect.take_answer(flight.transaction)
            if answer is None:
                continue
            self._flights.remove(flight)
            if answer.nack is None:
                self.count.acks += 1
                self.count.rtts.append(now_s - flight.sent_s)
                self.failures = 0
                self._answered(flight.job, answer, now_s)
            elif answer.nack is NackError.BAD_CRC:
                self.count.nacks += 1
                self._retry_or_give_up(flight)
            else:
                self.count.nacks += 1
                self._refused(flight.job, answer.nack)

    def _answered(self, job: Job, answer: Answer, now_s: float) -> None:
        job.answers.append(answer)
        if job.complete():
            self._drop(job)
            job.done(job.answers, now_s)

    def _refused(self, job: Job, nack: NackError) -> None:
        self.failures = 0
        self._drop(job)
        if job.slot is not None:
            job.slot.refused = max(job.slot.refused, job.version)
            job.slot.error = BoardRefused(f'board refused {job.name}: NACK {nack.name}')

    def _drop(self, job: Job) -> None:
        if job in self._jobs:
            self._jobs.remove(job)

    def expire(self, now_s: float) -> None:
        """Re-send or give up on requests whose answer is late.

        :raises LinkLost: once ``lost_after`` requests in a row went unanswered
        """
        late = [flight for flight in self._flights if now_s >= flight.deadline_s]
        for flight in late:
            self._flights.remove(flight)
            self.count.timeouts += 1
            if not self._flights:
                self._dialect.discard_input()      # a late answer must not pass for the next
            self._retry_or_give_up(flight)

    def _retry_or_give_up(self, flight: Flight) -> None:
        job = flight.job
        if flight.attempt < self.options.max_retries and not self._superseded(job):
            self._resend.append(flight)
            return
        self._drop(job)
        if job.slot is not None and job.slot.taken == job.version:
            job.slot.taken = -1      # send the latest value again on the next round
        self.failures += 1
        if self.failures >= self.options.lost_after:
            raise LinkLost(f'board silent, {self.failures} requests in a row unanswered '
                           f'(last: {job.name})')

    # -- when to look again --------------------------------------------------------------------

    def wake_at(self, now_s: float) -> float:
        """Return when something falls due: a reply deadline, a free line, a poll [s].

        The link may wait for input until then; answers and new commands wake it earlier.
        A time already past counts only if a request could go out now: one waiting for the
        answers on their way must not make the link spin.
        """
        due = [flight.deadline_s for flight in self._flights]
        if self.has_work(now_s):
            due.append(max(self._line_free_s, now_s))
        timers = [self._keepalive_at()]
        if self.options.poll_hz:
            # a read waiting for the next command goes anyway a period after it fell due
            timers += [self._next_poll_s, self._next_poll_s + 1.0 / self.options.poll_hz]
        if self.pulses.unsent() and self.options.max_rate_hz:
            timers.append(self._next_pulse_s)
        due += [at for at in timers if at is not None and at > now_s]
        return min(due, default=now_s + 1.0)

    def has_work(self, now_s: float) -> bool:
        """Return True if a request could go out as soon as the line is free."""
        if self._resend:
            return True
        if any(not job.waiting() and not job.complete() for job in self._jobs):
            return True
        return self._choice(now_s) is not None

    def in_flight(self) -> int:
        """Return how many requests await their answers."""
        return len(self._flights)
