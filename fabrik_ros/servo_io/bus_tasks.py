"""One servo's answered steps at a time: its admission, its re-pings, its torque changes.

Admission (:class:`~fabrik_ros.servo_io.bus_admission.ServoSteps` has the steps) comes before
any goal on a connection: an STS3215 is torqued at power-up, and a goal written before its
present position was read would move the arm at once. A servo that stopped answering is
pinged until it answers and is then admitted anew; a goal set before it (re)appeared is stale
and dropped, so it holds where it stands until the next command. One admitted after the
connect's handshake (anew, or late) takes no goal until the caller, told where it holds
(:meth:`GoalWrites.take_admitted`), moves it on from there. After admission a servo
holds the torque the caller wants, or where the caller has not said, the torque it had (an
STS3215 torqued at power-up holds the arm again after its homing offset was written).

A torque change goes to every admitted servo by unicast writes, each answered. The latest wish
wins: a servo whose own task is under way gets it when that task ends, if the task left the
servo otherwise.

A servo may also be wished limp on its own (:meth:`ServoTasks.want_limp`: the driver detaches
one that overheats, the others keep their torque). The limp wish overrides the torque wish for
that servo, at once and at every (re)admission, until the caller takes it back; then the servo
gets the torque wish again (on: holding where it stands).

A torque limit (a gripper's grip) is a wish per servo, kept as a fraction of its full torque
and written, answered, to the servo's torque-limit register (the model's
``ControlTable.torque_limit``); latest wins, as with the torque. A servo (re)admitted gets the
wish again (the register is RAM: a power cycle restores the full torque). A value the servo
did not take (no answer within the retries, or refused) is not tried again until the wish
changes or the servo is admitted anew.

A reboot (Dynamixel: the only way out of a hardware-error shutdown) is one answered request;
then the servo restarts, so it is lost (:func:`~fabrik_ros.servo_io.bus_silence.rebooted`),
pinged until it answers, and admitted anew like any servo that answers again: it holds where
it stands, with the torque the caller wants, until the caller took its admission. A reboot
queued for a servo that is lost by the time it runs (it restarts already, or stopped
answering) is not sent: its pings admit it anew all the same.
"""

from collections import deque
from collections.abc import Mapping
import math
from typing import Optional

from fabrik_ros.servo_io.bus_admission import ServoSteps
from fabrik_ros.servo_io.bus_goals import GoalWrites
from fabrik_ros.servo_io.bus_requests import Request, ServoRecord, Task
from fabrik_ros.servo_io.bus_silence import BOOT_S, ping_interval, rebooted
from fabrik_ros.servo_io.protocols.bus_codec import StatusPacket


class ServoTasks:
    """The queue of servo tasks, the one running, and the torque the caller wants.

    :param steps: the answered steps tasks are made of
    :param servos: what is known of each servo, by id
    :param goals: the goals, of which a (re)admitted servo's stale one is dropped
    """

    def __init__(self, steps: ServoSteps, servos: Mapping[int, ServoRecord],
                 goals: GoalWrites) -> None:
        self.torque_want: Optional[bool] = None     # None: the caller has not said
        self.limit_want: dict[int, float] = {}      # torque limit by id, fraction of full
        self.limp_want: set[int] = set()            # wanted limp whatever the torque wish
        self._steps = steps
        self._servos = servos
        self._goals = goals
        self._queue: deque[tuple[ServoRecord, Task]] = deque()
        self._running: Optional[tuple[ServoRecord, Task]] = None
        self._next: Optional[Request] = None        # the running task's next request
        self._now_s = 0.0                           # the latest time the scheduler gave

    def reset(self) -> None:
        """Drop every task (a new connection)."""
        self._queue.clear()
        self._running = None
        self._next = None

    def pending(self) -> bool:
        """Return True while a task is queued or running."""
        return self._running is not None or bool(self._queue)

    def admit(self, servo: ServoRecord, *, pinged: bool) -> None:
        """Queue ``servo``'s admission (``pinged``: it answered a ping just now)."""
        self._start(servo, self._admit(servo, pinged=pinged))

    def reboot(self, servo: ServoRecord) -> None:
        """Queue a reboot of ``servo``, after its tasks queued before (see the docstring)."""
        self._start(servo, self._reboot(servo))

    def want_torque(self, on: bool) -> None:
        """Bring every admitted servo's torque to ``on``; a busy one when its task ends."""
        self.torque_want = on
        for servo in self._servos.values():
            if servo.admitted and servo.lost_since is None:
                if servo.busy:
                    servo.rewish = True
                else:
                    self._start(servo, self._hold_torque(servo))

    def want_limp(self, servo_id: int, limp: bool) -> None:
        """Keep ``servo_id`` limp (``limp``) whatever the torque wish, or give it that wish."""
        if limp:
            self.limp_want.add(servo_id)
        else:
            self.limp_want.discard(servo_id)
        servo = self._servos[servo_id]
        if servo.admitted and servo.lost_since is None:
            if servo.busy:
                servo.rewish = True
            else:
                self._start(servo, self._hold_torque(servo))

    def wanted_torque(self, servo: ServoRecord) -> Optional[bool]:
        """Return the torque the caller wants of ``servo`` (None: not said)."""
        return False if servo.id in self.limp_want else self.torque_want

    def want_torque_limit(self, servo_id: int, fraction: float) -> None:
        """Bring ``servo_id``'s torque limit to ``fraction`` of its full torque (latest wins)."""
        self.limit_want[servo_id] = fraction
        servo = self._servos[servo_id]
        if servo.admitted and servo.lost_since is None and not servo.busy:
            self._limit_if_due(servo)

    def limit_value(self, servo: ServoRecord) -> Optional[int]:
        """Return the register value of the servo's wished torque limit (None: no wish)."""
        if servo.id not in self.limit_want or servo.table.torque_limit is None:
            return None
        return servo.table.torque_limit_value(self.limit_want[servo.id])

    def _limit_if_due(self, servo: ServoRecord) -> None:
        value = self.limit_value(servo)
        if value is not None and value != servo.limit_tried:
            self._start(servo, self._hold_limit(servo))

    def next_ping_s(self) -> float:
        """Return when the next servo that stopped answering is pinged [s] (inf: none)."""
        return min((s.next_ping_s for s in self._servos.values()
                    if s.lost_since is not None and not s.busy), default=math.inf)

    def request(self, now_s: float) -> Optional[Request]:
        """Return the running task's next request, starting queued tasks (and re-pings)."""
        self._now_s = now_s
        if self._running is None:
            self._queue_pings(now_s)
        while self._next is None and self._running is None and self._queue:
            self._running = self._queue.popleft()
            self._step(None, first=True)
        request, self._next = self._next, None
        if request is not None:
            request.done = self._answered
        return request

    def _answered(self, statuses: dict[int, StatusPacket], stamp_s: float) -> None:
        """Give the running task the answer to its request (None: none came)."""
        assert self._running is not None
        self._now_s = stamp_s
        self._step(statuses.get(self._running[0].id))

    def _start(self, servo: ServoRecord, task: Task) -> None:
        servo.busy = True
        self._queue.append((servo, task))

    def _step(self, status: Optional[StatusPacket], first: bool = False) -> None:
        """Give the running task an answer and keep its next request; see to a late wish."""
        assert self._running is not None
        servo, task = self._running
        try:
            self._next = next(task) if first else task.send(status)
        except StopIteration:
            servo.busy = False
            self._running = None
            self._next = None
            if servo.rewish:
                servo.rewish = False
                want = self.wanted_torque(servo)
                if (servo.admitted and servo.lost_since is None
                        and want is not None and servo.torque is not want):
                    self._start(servo, self._hold_torque(servo))
            if not servo.busy and servo.admitted and servo.lost_since is None:
                self._limit_if_due(servo)

    def _queue_pings(self, now_s: float) -> None:
        for servo in self._servos.values():
            if servo.lost_since is not None and not servo.busy and now_s >= servo.next_ping_s:
                servo.next_ping_s = now_s + ping_interval(servo)
                self.admit(servo, pinged=False)

    def _admit(self, servo: ServoRecord, *, pinged: bool) -> Task:
        """Ping (unless it just answered one), admit, drop a stale goal, hold the torque."""
        if not pinged and not (yield from self._steps.ping(servo)):
            return
        servo.misses = 0
        begun = self._goals.version
        held = yield from self._steps.admit(servo)
        if held is None:
            return
        self._goals.drop_older(servo.id, begun)
        servo.admitted = True
        servo.torque_limit = servo.limit_tried = None
        yield from self._hold_torque(servo, held)     # then the torque limit, as it ends
        if not pinged and servo.present is not None:
            self._goals.admitted(servo.id, servo.present)     # anew, or late: see take_admitted

    def _reboot(self, servo: ServoRecord) -> Task:
        """Reboot the servo unless it is lost already; then it is lost until it answers."""
        if servo.lost_since is not None:
            return
        servo.back_by_s = self._now_s + BOOT_S      # its misses count from then, the
        yield from self._steps.reboot(servo)        # reboot's own too (a lost answer)
        rebooted(servo, self._now_s)

    def _hold_limit(self, servo: ServoRecord) -> Task:
        """Write the servo's wished torque limit, if it has one not yet tried."""
        value = self.limit_value(servo)
        register = servo.table.torque_limit
        if value is None or register is None or value == servo.limit_tried:
            return
        servo.limit_tried = value
        if (yield from self._steps.write(servo, register, value)):
            servo.torque_limit = value

    def _hold_torque(self, servo: ServoRecord, held: Optional[bool] = None) -> Task:
        """Bring the servo's torque to what the caller wants; on: hold where it stands.

        :param held: the torque to restore where the caller has not said (None: leave it)
        """
        wanted = self.wanted_torque(servo)
        want = wanted if wanted is not None else held
        yield from self._steps.hold_torque(servo, want)
