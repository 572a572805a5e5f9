"""Decide what BusLink writes next on a half-duplex servo bus, and when: pure, clock passed in.

On a serial servo bus the host and the servos share one wire: while servos answer, the host
must not write. So one request is on its way at a time, and a request that expects answers
keeps the line until they are in (or late). :class:`BusScheduler` holds what the caller wants
(goals, torque) and what is known of every servo; the link's I/O thread asks it for the next
bytes (:meth:`BusScheduler.next_write`), hands it the statuses that arrived
(:meth:`BusScheduler.received`), tells it the time (:meth:`BusScheduler.expire`) and sleeps
until :meth:`BusScheduler.wake_at`. Every decision takes ``now_s``, so tests drive it with a
fake clock and a simulated bus, without ptys or threads.

Rules, in order of priority, whenever the line is free:

1. **Admission.** A servo gets no goal on a connection before its present position was read on
   it: admission pings it (unless the handshake did), reads its model number, position-limit
   registers and torque state, writes the arm file's homing offset where the servo holds
   another (torque off first; Feetech EEPROM unlocked and locked again), then reads its
   present position; then it holds the torque the caller wants (on: goal = present position,
   then torque on, each write answered), or where the caller has not said, the torque it had
   (an STS3215 torqued at power-up holds the arm again after its offset was written).
2. **Torque.** ``torque(on)`` goes to every admitted servo by unicast writes, each answered:
   on = read its present position, write it as the goal, then torque on (the arm holds where
   it stands); off = torque off. Goals set before are dropped then.
3. **Feedback.** A round of sync reads of every admitted servo's present position when due
   (every ``1 / poll_hz``): one read where no commands stream. A read never holds a command
   back: while commands stream (at least every ``STREAM_GAP_MAX_S``; the next one expected
   on the beat of the shortest recent gap, held targets skipped, bus_stream) the round's
   servos are read where the read ends a guard (the host's work on the next command) before
   that command, as many at a time as fit; where none fits, one servo right
   behind a command, in the gap before the one after; at most a poll period late (so a
   saturated line still carries reads), then one servo goes first; before that, a command
   waiting goes first (the link's thread may wake a little late for a read). The round's
   last answers are its positions.
4. **Goals.** ONE sync write carries every admitted servo's goal (position and speed), as
   soon as the line is free after :meth:`BusScheduler.set_goals`; a newer command replaces an
   unsent one (latest wins). Nothing acknowledges a sync write, so while torque is on the
   latest goals are written again every ``GOAL_REFRESH_S``.
5. **Telemetry.** A read of one servo's load, voltage, temperature and error register, round
   robin, at most ``telemetry_hz`` a second, only when nothing above is due and, while
   commands stream, only where it ends before the next command is expected.

A servo that misses ``lost_after`` requests in a row is left out of reads and writes and
pinged until it answers, then admitted anew; when it is named *silent*:
:mod:`fabrik_ros.servo_io.bus_silence`. The others keep going; losing the port is the
connection's business, not the scheduler's.

Status packets carry no sequence number, so a late answer could pass for the next request's:
after a timeout the line stays quiet for ``DRAIN_S`` and what arrives meanwhile is dropped (as
the makers' SDKs clear the port before each packet), and an answer whose length is not the
request's is dropped. A request's deadline runs from its write (:meth:`BusScheduler.written`),
not from when the I/O thread took it: a thread preempted in between does not lose answers.

The line time of each request, and the feedback rate chosen from it:
:mod:`fabrik_ros.servo_io.bus_line`. The steps of admission and of a torque change:
:mod:`fabrik_ros.servo_io.bus_admission`. The command stream that reads keep out of:
:mod:`fabrik_ros.servo_io.bus_stream`.
"""

from collections import deque
from collections.abc import Mapping, Sequence
import math
import statistics
from typing import Optional

from fabrik_ros.servo_io.bus_admission import ServoSteps
from fabrik_ros.servo_io.bus_line import (
    DEFAULT_TELEMETRY_HZ,
    goal_block,
    goal_span,
    telemetry_blocks,
)
from fabrik_ros.servo_io.bus_reports import BusPositions, Notice, ServoCondition
from fabrik_ros.servo_io.bus_requests import Request, ServoRecord, Task
from fabrik_ros.servo_io.bus_silence import missed, missed_at_connect, ping_interval
from fabrik_ros.servo_io.bus_stream import CommandStream
from fabrik_ros.servo_io.link_options import LinkOptions
from fabrik_ros.servo_io.link_stats import Counters
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec, StatusPacket
from fabrik_ros.servo_io.protocols.control_tables import ControlTable, Register, span

# After a timeout the line stays quiet this long, and whatever arrives meanwhile (a late
# answer) is dropped: two 1 ms USB frames, for bytes already in the adapter.
DRAIN_S = 0.002
GOAL_REFRESH_S = 1.0            # latest goals written again this often while torque is on
# How many answered requests the answer turnaround is the median of (see _fits).
TURNAROUND_KEPT = 16


class BusScheduler:
    """Bring a bus of servos to what the caller wants over one line; see the module docstring.

    Not thread-safe: the link calls every method under its own lock.

    :param codec: the protocol's packets (its receive buffer is fed by the link)
    :param ids: the servos' bus ids
    :param table: the model assumed until a servo's model number names another of the same
        maker (STS3215 for Feetech, XL430-W250 for Dynamixel: the X series share addresses)
    :param options: baud, poll rate (feedback), reply timeout, retries, lost_after
    :param counters: statistics, updated in place
    :param homing_offsets: the homing-offset register value each servo must hold, by id (from
        the arm file; servos not named are left as they are)
    :param telemetry_hz: telemetry reads per second, 0 = none
    """

    def __init__(self, codec: BusCodec, ids: Sequence[int], table: ControlTable,
                 options: LinkOptions, counters: Counters, *,
                 homing_offsets: Optional[Mapping[int, int]] = None,
                 telemetry_hz: float = DEFAULT_TELEMETRY_HZ) -> None:
        if not ids or len(set(ids)) != len(ids):
            raise ValueError(f'ids = {list(ids)!r}, must name at least one servo, each once')
        offsets = dict(homing_offsets or {})
        unknown = sorted(set(offsets) - set(ids))
        if unknown:
            raise ValueError(f'homing_offsets names ids {unknown} not in ids {list(ids)}')
        if offsets and table.homing_offset is None:
            raise ValueError(f'homing_offsets given, but the {table.model} has no homing '
                             'offset register')
        for servo_id, offset in offsets.items():
            assert table.homing_offset is not None
            low, high = table.homing_offset.value_range
            if not low <= offset <= high:
                raise ValueError(f'homing_offsets[{servo_id}] = {offset!r}, must be within '
                                 f'[{low}, {high}] (the {table.model} register)')
        self.codec = codec
        self.ids = tuple(ids)
        self.table = table
        self.options = options
        self.count = counters
        self.telemetry_hz = telemetry_hz
        self._offsets = offsets
        self._byte_s = 10.0 / options.baud
        self._servos = {servo_id: ServoRecord(servo_id, table) for servo_id in self.ids}
        self._notices: list[Notice] = []
        self._steps = ServoSteps(codec, table, options, counters, offsets, self._notices)
        self._tasks: deque[tuple[ServoRecord, Task]] = deque()
        self._task: Optional[tuple[ServoRecord, Task]] = None
        self._next: Optional[Request] = None      # the running task's next request
        self._flight: Optional[Request] = None
        self._unwritten: Optional[Request] = None  # handed out, its write not yet reported
        self._drain = False                        # quiet after a timeout (``DRAIN_S``)
        self._answered_s = -math.inf               # the latest request any servo answered
        self._line_free_s = 0.0
        # Beyond their line time, how long the latest answered requests waited for answers,
        # and the median of those (see _fits).
        self._turnarounds: deque[float] = deque(maxlen=TURNAROUND_KEPT)
        self._turnaround_s = 0.0
        self._next_poll_s = 0.0
        # The feedback round under way: its due time, the servos not read yet, the counts read.
        self._round_due_s = 0.0
        self._unread: list[int] = []
        self._round_counts: dict[int, int] = {}
        self._feedback_bytes: dict[int, int] = {}   # a read of n servos, with answers [bytes]
        self._next_telemetry_s = 0.0
        self._telemetry_turn = 0
        self.positions: Optional[BusPositions] = None
        # What the caller wants: goals by id [counts], the move time [s], torque.
        self._goals: dict[int, int] = {}
        self._goal_set: dict[int, int] = {}       # the command (version) that set each goal
        self._move_s = 0.0
        self._command_s: Optional[float] = None     # when the latest command came
        self._goal_version = 0
        self._goal_written = 0
        self._next_refresh_s = math.inf
        self._torque_want: Optional[bool] = None
        self._stream = CommandStream()             # reads keep out of its way

    # -- connection ----------------------------------------------------------------------------

    def forget_bus(self, now_s: float, answered: Sequence[int] = ()) -> None:
        """Start over on a new connection: every servo is admitted anew before its goals.

        :param answered: the ids that answered the handshake's ping (not pinged again); the
            others (pinged ``max_retries`` + 1 times already) are named silent since now
        """
        self._tasks.clear()
        self._task = None
        self._next = None
        self._flight = None
        self._unwritten = None
        self._drain = False
        self._answered_s = -math.inf
        self._turnarounds.clear()       # another adapter, perhaps, or servos set otherwise
        self._turnaround_s = 0.0
        self.codec.clear()
        self.positions = None
        self._unread = []
        self._line_free_s = self._next_poll_s = self._next_telemetry_s = now_s
        self._goals.clear()             # stale: a servo holds where it stands until the next
        self._goal_written = self._goal_version
        self._next_refresh_s = math.inf
        for servo in self._servos.values():
            servo.admitted = servo.busy = servo.rewish = False
            servo.goal = servo.present = None
            servo.misses = 0
            if servo.id in answered:
                servo.lost_since = servo.silent_since = None
                self._start(servo, self._admit(servo, pinged=True))
            elif (notice := missed_at_connect(servo, now_s)) is not None:
                self._notices.append(notice)

    def note_write(self, data: bytes, now_s: float) -> None:
        """Account for bytes on the line (the handshake's pings, written by the link)."""
        self._line_free_s = max(self._line_free_s, now_s) + len(data) * self._byte_s
        self.count.frames_sent += 1
        self.count.bytes_sent += len(data)

    # -- what the caller wants -------------------------------------------------------------------

    def set_goals(self, goals: Mapping[int, int], move_s: float,
                  now_s: Optional[float] = None) -> bool:
        """Store goals [counts] by id, merged into the earlier ones; latest wins.

        :param now_s: when the command came (the link's clock); the command stream that reads
            keep out of is timed by the commands' arrivals, not by their writes, which a read
            still out may delay (None: by the write)
        :returns: True if an earlier command was still unsent (it is replaced)
        :raises ValueError: on an unknown id or a count the goal register cannot hold
        """
        for servo_id, count in goals.items():
            servo = self._servos.get(servo_id)
            if servo is None:
                raise ValueError(f'goal for servo id {servo_id!r}, not one of the ids '
                                 f'{list(self.ids)}')
            if not 0 <= count <= servo.table.position_max:
                raise ValueError(f'goal for servo id {servo_id} = {count!r}, must be within '
                                 f'[0, {servo.table.position_max}] counts')
        pending = self.goals_unsent() and bool(self._writable())
        self._goals.update({servo_id: int(count) for servo_id, count in goals.items()})
        self._goal_set.update({servo_id: self._goal_version + 1 for servo_id in goals})
        self._move_s = move_s
        self._command_s = now_s
        self._goal_version += 1
        self.count.commands += 1
        if pending:
            self.count.coalesced += 1
        return pending

    def set_torque(self, on: bool) -> None:
        """Turn every servo's torque on (holding its present position) or off (limp).

        Goals set before are dropped: the servos hold where they stand until the next. A
        servo whose own task is under way (a torque change, its admission) gets this wish
        when that task ends, if the task left it otherwise: the latest wish wins.
        """
        self._torque_want = bool(on)
        self._goals.clear()
        self._goal_written = self._goal_version
        for servo in self._servos.values():
            if servo.admitted and servo.lost_since is None:
                if servo.busy:
                    servo.rewish = True         # seen to when its task ends (_step)
                else:
                    self._start(servo, self._hold_torque(servo))

    def admission_done(self) -> bool:
        """Return True once every servo is admitted or found silent (none mid-admission)."""
        return all(s.lost_since is not None or (s.admitted and not s.busy)
                   for s in self._servos.values())

    def goals_unsent(self) -> bool:
        """Return True while the latest goals have not gone out."""
        return self._goal_written < self._goal_version

    def settled(self) -> bool:
        """Return True once goals and torque have gone out to every servo that answers."""
        if self.goals_unsent() and self._writable():
            return False
        return self._task is None and not self._tasks and self._flight is None

    # -- what is known ---------------------------------------------------------------------------

    def admitted(self) -> tuple[int, ...]:
        """Return the ids whose present position was read on this connection, still answering."""
        return tuple(s.id for s in self._servos.values()
                     if s.admitted and s.lost_since is None)

    def limits(self) -> dict[int, tuple[int, int]]:
        """Return each servo's (min, max) position-limit registers, as read at admission."""
        return {s.id: s.limits for s in self._servos.values() if s.limits is not None}

    def homing_offsets(self) -> dict[int, int]:
        """Return each servo's homing-offset register, as read (and written) at admission."""
        return {s.id: s.homing_offset for s in self._servos.values()
                if s.homing_offset is not None}

    def torques(self) -> dict[int, Optional[bool]]:
        """Return each servo's torque as last read or written (None: not known)."""
        return {s.id: s.torque for s in self._servos.values()}

    def conditions(self) -> dict[int, ServoCondition]:
        """Return what each servo last reported of itself."""
        return {s.id: ServoCondition(s.temperature_c, s.voltage_v, s.load_percent,
                                     self._error_words(s), s.silent_since, s.model,
                                     s.readings_s)
                for s in self._servos.values()}

    def take_notices(self) -> list['Notice']:
        """Return what happened that a person should read (a servo silent or back, an offset)."""
        notices = list(self._notices)
        self._notices.clear()           # the list is shared with the servo steps
        return notices

    # -- what to write -------------------------------------------------------------------------

    def next_write(self, now_s: float) -> Optional[bytes]:
        """Return the bytes to write now, or None; the caller must write what it gets."""
        if self._flight is not None or now_s < self._line_free_s:
            return None
        if self._drain:
            self._drain = False
            self.codec.clear()          # a late answer's first bytes, the rest to come
        request = self._next_request(now_s)
        if request is None:
            return None
        self.note_write(request.data, now_s)
        self._stream.goals_end_s = self._line_free_s if request.name == 'goals' else -math.inf
        request.sent_s = now_s
        if request.expect:
            answers_s = request.answer_bytes * self._byte_s
            request.deadline_s = self._line_free_s + answers_s + self.options.reply_timeout_s
            self._flight = request
        elif request.done is not None:
            request.done({}, now_s)
        self._unwritten = request
        return request.data

    def written(self, now_s: float) -> None:
        """Note that the bytes :meth:`next_write` handed out last went out at ``now_s``.

        The line, and the answers' deadline, run from then: a thread preempted between
        taking a request and writing it would otherwise judge on-time answers late.
        """
        request, self._unwritten = self._unwritten, None
        if request is None or now_s <= request.sent_s:
            return
        if request.expect and request is not self._flight:
            return                      # answered already: the line is free
        delay = now_s - request.sent_s
        self._line_free_s += delay
        if request.name == 'goals':
            self._stream.goals_end_s += delay
        if request is self._flight:
            request.sent_s = now_s
            request.deadline_s += delay

    def _next_request(self, now_s: float) -> Optional[Request]:
        request = self._task_request(now_s)
        if request is not None:
            return request
        if self.options.poll_hz and self.admitted():
            at_s, size = self._feedback_plan(now_s)
            # a command waiting goes first (the link's thread woke late for the read)
            waiting = self.goals_unsent() and bool(self._writable())
            if now_s >= at_s and (not waiting or now_s >= self._round_late_s()):
                return self._feedback_request(now_s, size)
        if self._goals_due(now_s):
            return self._goal_request(now_s)
        if self._telemetry_due(now_s):
            request = self._telemetry_request(now_s)
            if self._fits(now_s, request):
                self._take_telemetry_turn(now_s)
                return request
        return None

    # -- tasks: one servo's steps, each answered -------------------------------------------------

    def _start(self, servo: ServoRecord, task: Task) -> None:
        servo.busy = True
        self._tasks.append((servo, task))

    def _task_request(self, now_s: float) -> Optional[Request]:
        """Return the running task's next request, starting queued tasks (and re-pings)."""
        if self._task is None:
            self._queue_repings(now_s)
        while self._next is None:
            if self._task is None:
                if not self._tasks:
                    return None
                self._task = self._tasks.popleft()
                self._step(None, first=True)
            elif self._next is None:
                return None          # waiting for an answer (not reached: the flight blocks)
        request, self._next = self._next, None
        return request

    def _step(self, status: Optional[StatusPacket], first: bool = False) -> None:
        """Give the running task an answer (None: none came) and keep its next request."""
        assert self._task is not None
        servo, task = self._task
        try:
            self._next = next(task) if first else task.send(status)
        except StopIteration:
            servo.busy = False
            self._task = None
            self._next = None
            if servo.rewish:
                servo.rewish = False
                if (servo.admitted and servo.lost_since is None
                        and self._torque_want is not None
                        and servo.torque is not self._torque_want):
                    self._start(servo, self._hold_torque(servo))

    def _queue_repings(self, now_s: float) -> None:
        for servo in self._servos.values():
            if servo.lost_since is not None and not servo.busy and now_s >= servo.next_ping_s:
                servo.next_ping_s = now_s + ping_interval(servo)
                self._start(servo, self._admit(servo, pinged=False))

    def _admit(self, servo: ServoRecord, *, pinged: bool) -> Task:
        """Admit ``servo``: see rule 1 of the module docstring."""
        if not pinged and not (yield from self._steps.ping(servo)):
            return
        servo.misses = 0
        begun = self._goal_version
        held = yield from self._steps.admit(servo)
        if held is None:
            return
        if self._goal_set.get(servo.id, 0) <= begun:
            self._goals.pop(servo.id, None)     # set before the servo (re)appeared: stale
        servo.admitted = True
        # A servo that held the arm before its offset was written holds it again, where the
        # arm now stands (an STS3215 is torqued at power-up: the arm must not drop).
        yield from self._hold_torque(servo, held)

    def _hold_torque(self, servo: ServoRecord, held: Optional[bool] = None) -> Task:
        """Bring the servo's torque to what the caller wants; on: hold where it stands.

        :param held: the torque to restore where the caller has not said (None: leave it)
        """
        want = self._torque_want if self._torque_want is not None else held
        yield from self._steps.hold_torque(servo, want)

    # -- feedback, goals, telemetry ---------------------------------------------------------------

    def _feedback_plan(self, now_s: float) -> tuple[float, int]:
        """Return when the next feedback read may go and how many servos of its round it reads.

        See rule 3 of the module docstring. A round (every admitted servo) starts on the
        feedback grid. Its servos are read all at once where no commands stream; else as
        many as end before the next command is expected; else, right behind a command or
        once the round is a poll period late, one servo: a read of six Dynamixel servos
        (1.1 ms on the line) right behind a sync write (0.68 ms) still held the next
        command of a 500 Hz stream. Else it waits for the stream to stop, a command to
        come first (it wakes the link), or the round to be a period late.
        """
        unread = self._unread or self.admitted()
        if not self._unread and now_s < self._next_poll_s:
            return self._next_poll_s, len(unread)
        stream = self._stream
        if not stream.streaming(now_s):
            return now_s, len(unread)
        fitting = next((size for size in range(len(unread), 0, -1)
                        if self._read_fits(now_s, size)), 0)
        if fitting:
            return now_s, fitting
        late_s = self._round_late_s()
        if stream.right_behind(now_s) or now_s >= late_s:
            return now_s, 1
        return min(late_s, stream.reconsider_s(now_s)), 1

    def _round_late_s(self) -> float:
        """Return when the feedback round under way (or due next) is a poll period late."""
        due_s = self._round_due_s if self._unread else self._next_poll_s
        return due_s + 1.0 / self.options.poll_hz

    def _read_fits(self, now_s: float, size: int) -> bool:
        """Return True if a feedback read of ``size`` servos ends before the next command."""
        line = self._feedback_bytes.get(size)
        if line is None:
            register = self.table.present_position
            line = self._feedback_bytes[size] = (
                len(self.codec.sync_read(register.address, register.size, self.ids[:size]))
                + size * self.codec.status_size(register.size))
        return self._line_fits(now_s, line, answered=True)

    def _fits(self, now_s: float, request: Request) -> bool:
        """Return True if ``request`` and its answers end before the next command is expected.

        A read holds the line longer than its bytes: each servo waits its Return Delay Time
        before it answers (500 us from the factory), a USB adapter passes the answers on when
        its latency timer runs out (1-16 ms), and a simulated bus when its thread runs. Judged
        by the bytes alone, a read put late in a gap was still out when the next command came
        (six servos at the factory delay answer 3 ms late; the wire tests put commands behind
        such reads at 20, 50 and 200 Hz), so the median wait beyond the line time of the
        latest answered requests is added. Not the largest: one answer held up once (a busy
        machine) would keep the reads from fitting anywhere, and each would then go a poll
        period late, in a command's way.
        """
        return self._line_fits(now_s, len(request.data) + request.answer_bytes,
                               answered=bool(request.expect))

    def _line_fits(self, now_s: float, line_bytes: int, *, answered: bool) -> bool:
        """Return True if ``line_bytes`` (and, if ``answered``, the turnaround) end in time."""
        end_s = max(now_s, self._line_free_s) + line_bytes * self._byte_s
        if answered:
            end_s += self._turnaround_s
        return self._stream.fits(now_s, end_s)

    def _feedback_request(self, now_s: float, size: int) -> Request:
        """Return the sync read of the next ``size`` servos of the feedback round.

        The round's first read starts it (and moves the feedback grid on: a period later, or a
        period from now if it fell behind); its last read's answers are the round's positions.
        """
        if not self.codec.SYNC_READ:
            raise ValueError(f'{type(self.codec).__name__} has no sync read')
        admitted = self.admitted()
        if not self._unread:
            self._round_due_s = self._next_poll_s
            self._next_poll_s = max(self._next_poll_s + 1.0 / self.options.poll_hz, now_s)
            self._unread = list(admitted)
            self._round_counts = {}
        ids = tuple(servo_id for servo_id in self._unread if servo_id in admitted)[:size]
        self._unread = [servo_id for servo_id in self._unread[size:] if servo_id in admitted]
        last = not self._unread
        register = self.table.present_position
        counts = self._round_counts

        def done(statuses: dict[int, StatusPacket], stamp_s: float) -> None:
            for servo_id, status in statuses.items():
                servo = self._servos[servo_id]
                if len(status.params) == register.size:
                    servo.present = counts[servo_id] = register.decode(status.params)
            if last:
                self.positions = BusPositions(counts, stamp_s)

        return Request('positions', self.codec.sync_read(register.address, register.size, ids),
                       ids, len(ids) * self.codec.status_size(register.size),
                       params=register.size, done=done)

    def _writable(self) -> list[ServoRecord]:
        return [s for s in self._servos.values()
                if s.admitted and s.lost_since is None and not s.busy
                and (s.id in self._goals or s.goal is not None)
                and self._torque_want is not False]

    def _goals_due(self, now_s: float) -> bool:
        if not self._writable():
            return False
        return self.goals_unsent() or now_s >= self._next_refresh_s

    def _goal_request(self, now_s: float) -> Request:
        """Return the sync write of every writable servo's goal and speed (latest wins)."""
        servos = self._writable()
        address, size = goal_span(self.table)
        data = {}
        for servo in servos:
            held = servo.goal if servo.goal is not None else servo.present
            goal = self._goals.get(servo.id, held if held is not None else 0)
            start = servo.goal if servo.goal is not None else servo.present
            speed = servo.speed
            if start is not None and goal != start:
                speed = self._speed(servo.table, abs(goal - start))
            data[servo.id] = goal_block(servo.table, goal, speed)
            servo.goal, servo.speed = goal, speed
        if self.goals_unsent():          # a command (not a refresh): part of the stream
            self._stream.command(now_s if self._command_s is None else self._command_s)
        self._goal_written = self._goal_version
        self._next_refresh_s = now_s + GOAL_REFRESH_S
        return Request('goals', self.codec.sync_write(address, size, data))

    def _speed(self, table: ControlTable, distance: int) -> int:
        """Return the goal speed register value covering ``distance`` counts in the move time.

        0 (at once) is each maker's "fastest"; a move slower than the slowest unit is given
        that unit (``ControlTable.speed_unit_counts_per_s``: STS3215 steps/s, Dynamixel X
        Profile_Velocity 0.229 rev/min).
        """
        if self._move_s <= 0.0 or distance == 0:
            return 0
        speed = math.ceil(distance / self._move_s / table.speed_unit_counts_per_s)
        return min(max(speed, 1), table.goal_speed.value_range[1])

    def _telemetry_due(self, now_s: float) -> bool:
        return bool(self.telemetry_hz) and now_s >= self._next_telemetry_s and bool(
            self.admitted())

    def _telemetry_turns(self) -> list[tuple[int, list[Register]]]:
        return [(servo_id, block) for servo_id in self.admitted()
                for block in telemetry_blocks(self._servos[servo_id].table)]

    def _take_telemetry_turn(self, now_s: float) -> None:
        self._next_telemetry_s = now_s + 1.0 / self.telemetry_hz
        self._telemetry_turn = (self._telemetry_turn + 1) % len(self._telemetry_turns())

    def _telemetry_at(self, now_s: float) -> float:
        """Return when telemetry may go (see rule 5 of the module docstring).

        Its time; while commands stream and the read would not end before the next command,
        when the stream has stopped (a command that comes first wakes the link, and the read
        may then fit behind it).
        """
        if not self._stream.streaming(now_s) or self._fits(now_s,
                                                           self._telemetry_request(now_s)):
            return self._next_telemetry_s
        return max(self._next_telemetry_s, self._stream.reconsider_s(now_s))

    def _telemetry_request(self, now_s: float) -> Request:
        """Return the next telemetry read (:meth:`_take_telemetry_turn` moves the turn on)."""
        turns = self._telemetry_turns()
        servo_id, block = turns[self._telemetry_turn % len(turns)]
        servo = self._servos[servo_id]
        address, size = span(*block)
        table = servo.table

        def done(statuses: dict[int, StatusPacket], stamp_s: float) -> None:
            status = statuses.get(servo_id)
            if status is None or len(status.params) != size:
                return
            for register in block:
                value = register.value_in(status.params, address)
                if register is table.present_load:
                    servo.load_percent = value * table.load_unit_percent
                elif register is table.present_voltage:
                    servo.voltage_v = value * table.voltage_unit_v
                elif register is table.present_temperature:
                    servo.temperature_c = float(value)
                else:
                    servo.hardware_error = value
            servo.readings_s = stamp_s

        return Request('telemetry', self.codec.read(servo_id, address, size), (servo_id,),
                       self.codec.status_size(size), params=size, done=done)

    # -- what came back ------------------------------------------------------------------------

    def received(self, now_s: float) -> None:
        """Take the statuses the codec has recognised for the request on its way."""
        while (status := self.codec.take_status()) is not None:
            flight = self._flight
            servo = self._servos.get(status.id)
            if flight is None or servo is None or status.id not in flight.expect \
                    or status.id in flight.statuses:
                continue            # nobody asked (a late answer, an echo): dropped
            if len(status.params) != flight.params and not (status.error and not status.params):
                continue            # another request's (late) answer; an error may come bare
            self.count.acks += 1
            self.count.rtts.append(now_s - flight.sent_s)
            self._answered_s = max(self._answered_s, flight.sent_s)
            servo.error = status.error
            servo.misses = 0
            flight.statuses[status.id] = status
            if len(flight.statuses) == len(flight.expect):
                self._finish(flight, now_s)

    def expire(self, now_s: float) -> None:
        """Close a request whose answers are late; the servos that missed it are counted."""
        flight = self._flight
        if flight is None or now_s < flight.deadline_s:
            return
        self.count.timeouts += 1
        # A late answer must not pass for the next request's: quiet, and drop what comes.
        self._drain = True
        self._line_free_s = max(self._line_free_s, now_s + DRAIN_S)
        for servo_id in flight.expect:
            if servo_id not in flight.statuses:
                notice = missed(self._servos[servo_id], flight.sent_s, now_s,
                                lost_after=self.options.lost_after,
                                answered_s=self._answered_s)
                if notice is not None:
                    self._notices.append(notice)
        self._finish(flight, now_s)

    def _finish(self, flight: Request, now_s: float) -> None:
        if len(flight.statuses) == len(flight.expect):
            line_s = (len(flight.data) + flight.answer_bytes) * self._byte_s
            self._turnarounds.append(max(0.0, now_s - flight.sent_s - line_s))
            self._turnaround_s = statistics.median(self._turnarounds)
        self._flight = None
        self._unwritten = None
        self._line_free_s = max(self._line_free_s, now_s)
        if flight.done is not None:
            flight.done(flight.statuses, now_s)
        elif self._task is not None:
            self._step(flight.statuses.get(flight.expect[0]))

    # -- when to look again --------------------------------------------------------------------

    def wake_at(self, now_s: float) -> float:
        """Return when something falls due: an answer's deadline, a free line, a timer [s]."""
        if self._flight is not None:
            return self._flight.deadline_s
        due = [now_s + 1.0]
        if self._task is not None or self._tasks or self._writable() and self.goals_unsent():
            due.append(max(self._line_free_s, now_s))
        timers = [s.next_ping_s for s in self._servos.values()
                  if s.lost_since is not None and not s.busy]
        if self.admitted():
            if self.options.poll_hz:
                timers.append(self._feedback_plan(now_s)[0])
            if self.telemetry_hz:
                timers.append(self._telemetry_at(now_s))
            if self._writable():
                timers.append(self._next_refresh_s)
        due += [max(at, self._line_free_s) for at in timers]
        return min(due)

    def in_flight(self) -> bool:
        """Return True while a request awaits its answers."""
        return self._flight is not None

    def _error_words(self, servo: ServoRecord) -> tuple[str, ...]:
        words = list(self.codec.error_words(servo.error))
        hardware = getattr(self.codec, 'hardware_error_words', None)
        if servo.hardware_error and hardware is not None:
            words += [w for w in hardware(servo.hardware_error) if w not in words]
        elif servo.hardware_error:
            words += [w for w in self.codec.error_words(servo.hardware_error) if w not in words]
        return tuple(words)

