"""The goals a bus's servos should move to, and the one sync write that carries them.

One sync write carries every writable servo's goal and speed, so the servos start together
and a command costs one packet, whatever the number of servos. A newer command replaces one
not written yet (latest wins): a producer faster than the line never builds a queue, and the
servos go where the latest command says. Nothing answers a sync write, so a packet lost on the
wire would go unnoticed: while torque is on the latest goals are written again every
``GOAL_REFRESH_S``. A servo gets goals only once admitted (its present position read on this
connection), and none while the caller wants torque off, nor to a servo the caller wants
limp on its own (:attr:`GoalWrites.limp_ids`: one detached for overheating), whose goals are
not even kept: released, it holds where it stands until the next. A servo admitted later than the
connect's handshake (anew after it stopped answering, or late) holds where it stands, its
earlier goal dropped, and takes no goal until the caller has taken its admission
(:meth:`GoalWrites.take_admitted`): a goal planned before the caller knew would start from
where the servo was not.
"""

from collections.abc import Mapping
import math

from fabrik_ros.servo_io.bus_line import goal_block, goal_span
from fabrik_ros.servo_io.bus_requests import Request, ServoRecord
from fabrik_ros.servo_io.link_stats import Counters
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec
from fabrik_ros.servo_io.protocols.control_tables import ControlTable

GOAL_REFRESH_S = 1.0            # latest goals written again this often while torque is on


class GoalWrites:
    """The latest goals [counts] by id, whether they went out, and when to write them again.

    :param codec: the protocol's packets
    :param table: the model whose goal block the sync write carries (the servos on one bus
        are one maker's models, which share the goal registers' addresses)
    :param servos: what is known of each servo, by id (the goal and speed written are noted)
    :param counters: statistics (``commands``, ``coalesced``), updated in place
    """

    def __init__(self, codec: BusCodec, table: ControlTable,
                 servos: Mapping[int, ServoRecord], counters: Counters) -> None:
        self.codec = codec
        self.table = table
        self.count = counters
        self.limp = False               # the caller wants torque off: no goals are written
        self.limp_ids: set[int] = set()     # servos wanted limp on their own: no goals
        self.version = 0                # commands taken so far
        self.refresh_s = math.inf       # when the goals are written again
        self._servos = servos
        self._goals: dict[int, int] = {}
        self._set_by: dict[int, int] = {}   # the command (version) that set each goal
        self._written = 0                   # the version written last
        self._move_s = 0.0
        # Servos admitted since the caller last asked, with the count each holds at.
        self._admitted: dict[int, int] = {}

    def check(self, goals: Mapping[int, int]) -> None:
        """Raise ValueError on an unknown id or a count the goal register cannot hold."""
        for servo_id, count in goals.items():
            servo = self._servos.get(servo_id)
            if servo is None:
                raise ValueError(f'goal for servo id {servo_id!r}, not one of the ids '
                                 f'{list(self._servos)}')
            if not 0 <= count <= servo.table.position_max:
                raise ValueError(f'goal for servo id {servo_id} = {count!r}, must be within '
                                 f'[0, {servo.table.position_max}] counts')

    def take(self, goals: Mapping[int, int], move_s: float) -> bool:
        """Merge ``goals`` into the earlier ones (latest wins).

        :returns: True if an earlier command was still unsent (it is replaced)
        :raises ValueError: on an unknown id or a count the goal register cannot hold
        """
        self.check(goals)
        replaced = self.waiting()
        self.version += 1
        taken = {servo_id: int(count) for servo_id, count in goals.items()
                 if servo_id not in self._admitted and servo_id not in self.limp_ids}
        self._goals.update(taken)
        self._set_by.update({servo_id: self.version for servo_id in taken})
        self._move_s = move_s
        self.count.commands += 1
        if replaced:
            self.count.coalesced += 1
        return replaced

    def drop(self) -> None:
        """Forget the goals set so far: the servos hold where they stand until the next."""
        self._goals.clear()
        self._written = self.version

    def pop(self, servo_id: int) -> None:
        """Forget ``servo_id``'s goal: it holds where it stands until the next."""
        self._goals.pop(servo_id, None)

    def forget_admissions(self) -> None:
        """Forget the admissions not yet taken (a new connection admits every servo anew)."""
        self._admitted.clear()

    def drop_older(self, servo_id: int, version: int) -> None:
        """Forget ``servo_id``'s goal if a command no later than ``version`` set it (stale)."""
        if self._set_by.get(servo_id, 0) <= version:
            self._goals.pop(servo_id, None)

    def admitted(self, servo_id: int, holds_at: int) -> None:
        """Note that ``servo_id`` was admitted after the handshake, holding at ``holds_at``.

        Its goal is dropped, and goals for it are ignored until :meth:`take_admitted`.
        """
        self._goals.pop(servo_id, None)
        self._admitted[servo_id] = int(holds_at)

    def take_admitted(self) -> dict[int, int]:
        """Return the servos admitted after the handshake since the last call, where each holds.

        From now on they take goals again.
        """
        admitted, self._admitted = self._admitted, {}
        return admitted

    def unsent(self) -> bool:
        """Return True while the latest command has not gone out."""
        return self._written < self.version

    def waiting(self) -> bool:
        """Return True while the latest command has not gone out and a servo may take it."""
        return self.unsent() and bool(self.writable())

    def writable(self) -> list[ServoRecord]:
        """Return the servos a goal write goes to: admitted, answering, free, torque wanted."""
        if self.limp:
            return []
        return [s for s in self._servos.values()
                if s.admitted and s.lost_since is None and not s.busy
                and s.id not in self.limp_ids
                and (s.id in self._goals or s.goal is not None)]

    def due(self, now_s: float) -> bool:
        """Return True if a goal write is due: a command unsent, or the refresh."""
        return (self.unsent() or now_s >= self.refresh_s) and bool(self.writable())

    def request(self, now_s: float) -> Request:
        """Return the sync write of every writable servo's goal and speed."""
        address, size = goal_span(self.table)
        blocks = {servo.id: self._block(servo) for servo in self.writable()}
        self._written = self.version
        self.refresh_s = now_s + GOAL_REFRESH_S
        return Request('goals', self.codec.sync_write(address, size, blocks))

    def _block(self, servo: ServoRecord) -> bytes:
        """Return ``servo``'s goal block and note it as written; unnamed servos keep theirs."""
        start = servo.goal if servo.goal is not None else servo.present
        goal = self._goals.get(servo.id, start if start is not None else 0)
        speed = servo.speed
        if start is not None and goal != start:
            speed = self._speed(servo.table, abs(goal - start))
        servo.goal, servo.speed = goal, speed
        return goal_block(servo.table, goal, speed)

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
