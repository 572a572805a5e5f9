"""Decide what BusLink writes next on a half-duplex servo bus, and when: pure, clock passed in.

On a serial servo bus the host and the servos share one wire, so one request is on its way at
a time (:mod:`~fabrik_ros.servo_io.bus_exchange`). :class:`BusScheduler` holds what the caller
wants (goals, torque) and what is known of every servo; the link's I/O thread asks it for the
next bytes (:meth:`BusScheduler.next_write`), hands it the statuses that arrived
(:meth:`BusScheduler.received`), tells it the time (:meth:`BusScheduler.expire`) and sleeps
until :meth:`BusScheduler.wake_at`. Every decision takes ``now_s``, so tests drive it with a
fake clock and a simulated bus, without ptys or threads.

Whenever the line is free, the first of these that is due goes:

1. **A servo task** (:mod:`~fabrik_ros.servo_io.bus_tasks`): an admission, a re-ping, a
   torque change, a torque-limit change or a reboot, each step answered. No goal reaches a servo
   before its present position was read on the connection, so a servo torqued at power-up
   does not jump.
2. **Feedback** (:mod:`~fabrik_ros.servo_io.bus_feedback`) when due at ``poll_hz``, unless a
   command waits: a waiting command goes first, until the read is a poll period late (a line
   saturated with commands still carries the feedback).
3. **Goals** (:mod:`~fabrik_ros.servo_io.bus_goals`): one sync write, latest wins, as soon as
   the line is free after :meth:`BusScheduler.set_goals`; again every ``GOAL_REFRESH_S`` while
   torque is on, as nothing acknowledges it.
4. **Telemetry** (:mod:`~fabrik_ros.servo_io.bus_telemetry`) at ``telemetry_hz``, round
   robin, only when nothing above is due.

A servo that misses ``lost_after`` requests in a row is left out of reads and writes and
pinged until it answers; when it is named silent: :mod:`~fabrik_ros.servo_io.bus_silence`.
The others keep going; losing the port is the connection's business, not the scheduler's.
"""

from collections.abc import Mapping, Sequence
import math
from typing import Optional

from fabrik_ros.servo_io.bus_admission import ServoSteps
from fabrik_ros.servo_io.bus_exchange import BusExchange
from fabrik_ros.servo_io.bus_feedback import FeedbackReads
from fabrik_ros.servo_io.bus_goals import GoalWrites
from fabrik_ros.servo_io.bus_line import DEFAULT_TELEMETRY_HZ
from fabrik_ros.servo_io.bus_reports import BusPositions, Notice, ServoCondition
from fabrik_ros.servo_io.bus_requests import Request, ServoRecord
from fabrik_ros.servo_io.bus_silence import missed_at_connect
from fabrik_ros.servo_io.bus_tasks import ServoTasks
from fabrik_ros.servo_io.bus_telemetry import TelemetryReads
from fabrik_ros.servo_io.link_options import LinkOptions
from fabrik_ros.servo_io.link_stats import Counters
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec
from fabrik_ros.servo_io.protocols.control_tables import ControlTable

IDLE_WAKE_S = 1.0       # longest the I/O thread sleeps when nothing falls due


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
        offsets = _checked_offsets(ids, table, homing_offsets or {})
        self.codec = codec
        self.ids = tuple(ids)
        self.table = table
        self.options = options
        self.count = counters
        self.telemetry_hz = telemetry_hz
        self._servos = {servo_id: ServoRecord(servo_id, table) for servo_id in self.ids}
        self._notices: list[Notice] = []
        self._line = BusExchange(codec, self._servos, options, counters, self._notices)
        self._goals = GoalWrites(codec, table, self._servos, counters)
        self._tasks = ServoTasks(
            ServoSteps(codec, table, options, counters, offsets, self._notices),
            self._servos, self._goals)
        self._feedback = FeedbackReads(codec, table, self._servos, options.poll_hz)
        self._telemetry = TelemetryReads(codec, self._servos, telemetry_hz)

    # -- connection ----------------------------------------------------------------------------

    def forget_bus(self, now_s: float, answered: Sequence[int] = ()) -> None:
        """Start over on a new connection: every servo is admitted anew before its goals.

        :param answered: the ids that answered the handshake's ping (not pinged again); the
            others (pinged ``max_retries`` + 1 times already) are named silent since now
        """
        self._tasks.reset()
        self._line.reset(now_s)
        self._feedback.reset(now_s)
        self._telemetry.reset(now_s)
        self._goals.drop()          # stale: a servo holds where it stands until the next
        self._goals.forget_admissions()
        self._goals.refresh_s = math.inf
        for servo in self._servos.values():
            servo.admitted = servo.busy = servo.rewish = False
            servo.torque_limit = servo.limit_tried = None
            servo.goal = servo.present = None
            servo.misses = 0
            if servo.id in answered:
                servo.lost_since = servo.silent_since = None
                self._tasks.admit(servo, pinged=True)
            elif (notice := missed_at_connect(servo, now_s)) is not None:
                self._notices.append(notice)

    def note_write(self, data: bytes, now_s: float) -> None:
        """Account for bytes on the line (the handshake's pings, written by the link)."""
        self._line.note_write(data, now_s)

    # -- what the caller wants -------------------------------------------------------------------

    def set_goals(self, goals: Mapping[int, int], move_s: float) -> bool:
        """Store goals [counts] by id, merged into the earlier ones; latest wins.

        :returns: True if an earlier command was still unsent (it is replaced)
        :raises ValueError: on an unknown id or a count the goal register cannot hold
        """
        return self._goals.take(goals, move_s)

    def set_torque(self, on: bool) -> None:
        """Turn every servo's torque on (holding its present position) or off (limp).

        Goals set before are dropped: the servos hold where they stand until the next.
        """
        self._goals.drop()
        self._goals.limp = not on
        self._tasks.want_torque(bool(on))

    def set_limp(self, servo_id: int, limp: bool) -> None:
        """Keep one servo limp whatever :meth:`set_torque` says (``limp``), or stop doing so.

        Honoured at once and at every (re)admission; no goal is written to it, nor kept for it
        (released, it holds where it stands until the next). Its position is still read.

        :raises ValueError: on an unknown id
        """
        if servo_id not in self._servos:
            raise ValueError(f'limp wish for servo id {servo_id!r}, not one of the ids '
                             f'{list(self._servos)}')
        if limp:
            self._goals.limp_ids.add(servo_id)
            self._goals.pop(servo_id)
        else:
            self._goals.limp_ids.discard(servo_id)
        self._tasks.want_limp(servo_id, limp)

    def limp_ids(self) -> tuple[int, ...]:
        """Return the servos kept limp on their own (:meth:`set_limp`)."""
        return tuple(sorted(self._goals.limp_ids))

    def set_torque_limit(self, servo_id: int, fraction: Optional[float]) -> None:
        """Cap ``servo_id``'s output at ``fraction`` of its full torque (None: full); latest wins.

        Written, answered, to the model's torque-limit register (see :mod:`bus_tasks`); kept
        across the servo's re-admission. A model without one (none of those supported) is left
        as it is.

        :raises ValueError: on an unknown id or a fraction outside [0, 1] or not finite
        """
        if servo_id not in self._servos:
            raise ValueError(f'torque limit for servo id {servo_id!r}, not one of the ids '
                             f'{list(self._servos)}')
        value = 1.0 if fraction is None else float(fraction)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f'torque limit for servo id {servo_id} = {fraction!r}, must be '
                             'within [0.0, 1.0] (a fraction of its full torque)')
        self._tasks.want_torque_limit(servo_id, value)

    def reboot(self, ids: Sequence[int]) -> tuple[int, ...]:
        """Queue an answered reboot of each servo named that answers; return those queued.

        Each is then lost, pinged until it answers, and admitted anew (:mod:`bus_tasks`); a
        servo that does not answer now is left to its pings, which admit it all the same.

        :raises ValueError: on an unknown id, or on a protocol without a reboot instruction
            (the codec's reason); nothing is queued then
        """
        self.check_reboot(ids)
        queued = tuple(servo_id for servo_id in dict.fromkeys(ids)
                       if self._servos[servo_id].lost_since is None)
        for servo_id in queued:
            self._tasks.reboot(self._servos[servo_id])
        return queued

    def check_reboot(self, ids: Sequence[int]) -> None:
        """Raise ValueError if :meth:`reboot` of ``ids`` would be refused, saying why."""
        if self.codec.REBOOT_REFUSAL:
            raise ValueError(self.codec.REBOOT_REFUSAL)
        unknown = [servo_id for servo_id in ids if servo_id not in self._servos]
        if unknown:
            raise ValueError(f'reboot of servo ids {unknown!r}, not among the ids '
                             f'{list(self._servos)}')

    def admission_done(self) -> bool:
        """Return True once every servo is admitted or found silent (none mid-admission)."""
        return all(s.lost_since is not None or (s.admitted and not s.busy)
                   for s in self._servos.values())

    def goals_unsent(self) -> bool:
        """Return True while the latest goals have not gone out."""
        return self._goals.unsent()

    def settled(self) -> bool:
        """Return True once goals and torque have gone out to every servo that answers."""
        if self._goals.waiting():
            return False
        return not self._tasks.pending() and self._line.flight is None

    # -- what is known ---------------------------------------------------------------------------

    @property
    def positions(self) -> Optional[BusPositions]:
        """Return the latest feedback read's present positions, None before the first."""
        return self._feedback.positions

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

    def torque_limits(self) -> dict[int, Optional[int]]:
        """Return each servo's torque-limit register as last written (None: not written)."""
        return {s.id: s.torque_limit for s in self._servos.values()}

    def conditions(self) -> dict[int, ServoCondition]:
        """Return what each servo last reported of itself."""
        return {s.id: ServoCondition(s.temperature_c, s.voltage_v, s.load_percent,
                                     _error_words(self.codec, s), s.silent_since, s.model,
                                     s.readings_s, _hardware_errors(self.codec, s),
                                     *_voltage_range(s))
                for s in self._servos.values()}

    def take_admitted(self) -> dict[int, int]:
        """Return the servos admitted since the last call, and where each holds [counts].

        Those admitted after the connect's handshake (anew after they stopped answering, or
        late): each holds where it stands and takes no goal until it was taken here.
        """
        return self._goals.take_admitted()

    def take_notices(self) -> list[Notice]:
        """Return what happened that a person should read (a servo silent or back, an offset)."""
        notices = list(self._notices)
        self._notices.clear()           # the list is shared with the exchange and the steps
        return notices

    # -- the line ------------------------------------------------------------------------------

    def next_write(self, now_s: float) -> Optional[bytes]:
        """Return the bytes to write now, or None; the caller must write what it gets."""
        if not self._line.free(now_s):
            return None
        request = self._next_request(now_s)
        return None if request is None else self._line.send(request, now_s)

    def written(self, now_s: float) -> None:
        """Note that the bytes :meth:`next_write` handed out last went out at ``now_s``.

        The line, and the answers' deadline, run from then: a thread preempted between
        taking a request and writing it would otherwise judge on-time answers late.
        """
        self._line.written(now_s)

    def received(self, now_s: float) -> None:
        """Take the statuses the codec has recognised for the request on its way."""
        self._line.received(now_s)

    def expire(self, now_s: float) -> None:
        """Close a request whose answers are late; the servos that missed it are counted."""
        self._line.expire(now_s)

    def in_flight(self) -> bool:
        """Return True while a request awaits its answers."""
        return self._line.flight is not None

    def wake_at(self, now_s: float) -> float:
        """Return when something falls due: an answer's deadline, a free line, a timer [s]."""
        flight = self._line.flight
        if flight is not None:
            return flight.deadline_s
        free_s = max(self._line.line_free_s, now_s)
        if self._tasks.pending() or self._goals.waiting():
            return free_s
        timers = [now_s + IDLE_WAKE_S, self._tasks.next_ping_s()]
        if self.admitted():
            timers += [self._feedback.due_s(), self._telemetry.due_s()]
            if self._goals.writable():
                timers.append(self._goals.refresh_s)
        return max(min(timers), free_s)

    def _next_request(self, now_s: float) -> Optional[Request]:
        """Return what goes on the free line now; see the rules of the module docstring."""
        request = self._tasks.request(now_s)
        if request is not None:
            return request
        admitted = self.admitted()
        if admitted and now_s >= self._feedback.due_s() and (
                not self._goals.waiting() or now_s >= self._feedback.late_s()):
            return self._feedback.request(now_s, admitted)
        if self._goals.due(now_s):
            return self._goals.request(now_s)
        if admitted and now_s >= self._telemetry.due_s():
            return self._telemetry.request(now_s, admitted)
        return None


def _voltage_range(servo: ServoRecord) -> tuple[Optional[tuple[float, float]], str]:
    """Return the voltages ``servo`` takes [V] and where that comes from (see ServoCondition)."""
    if servo.voltage_limits_v is not None:
        return servo.voltage_limits_v, 'its voltage limit registers'
    low, high = servo.table.voltage_range_v
    if not servo.model or (low <= 0.0 and high == math.inf):
        return None, ''
    return (low, high), f'the range set for the {servo.model} model'


def _checked_offsets(ids: Sequence[int], table: ControlTable,
                     offsets: Mapping[int, int]) -> dict[int, int]:
    """Return the homing offsets by id; raise ValueError on bad ids or values, naming them."""
    if not ids or len(set(ids)) != len(ids):
        raise ValueError(f'ids = {list(ids)!r}, must name at least one servo, each once')
    unknown = sorted(set(offsets) - set(ids))
    if unknown:
        raise ValueError(f'homing_offsets names ids {unknown} not in ids {list(ids)}')
    register = table.homing_offset
    if offsets and register is None:
        raise ValueError(f'homing_offsets given, but the {table.model} has no homing '
                         'offset register')
    for servo_id, offset in offsets.items():
        assert register is not None
        low, high = register.value_range
        if not low <= offset <= high:
            raise ValueError(f'homing_offsets[{servo_id}] = {offset!r}, must be within '
                             f'[{low}, {high}] (the {table.model} register)')
    return dict(offsets)


def _hardware_errors(codec: BusCodec, servo: ServoRecord) -> tuple[str, ...]:
    """Return the servo's hardware error in words: its register's, else the alert's; ()."""
    hardware = getattr(codec, 'hardware_error_words', None)
    if servo.hardware_error and hardware is not None:
        return tuple(hardware(servo.hardware_error))
    if codec.hardware_alert(servo.error):
        return ('hardware error (its Hardware Error Status not read yet)',)
    return ()


def _error_words(codec: BusCodec, servo: ServoRecord) -> tuple[str, ...]:
    """Return the error bits of the servo's latest status and hardware register, in words."""
    words = list(codec.error_words(servo.error))
    if servo.hardware_error:
        hardware = getattr(codec, 'hardware_error_words', codec.error_words)
        words += [w for w in hardware(servo.hardware_error) if w not in words]
    return tuple(words)
