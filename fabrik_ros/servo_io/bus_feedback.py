"""The servos' present positions, read by one sync read of every admitted servo at ``poll_hz``.

The driver publishes joint_states from these reads and checks its motion against them, so
they keep their rate: reads fall due on a fixed grid. A command waiting goes before a read
that is due (the scheduler's rule), but a read that is a poll period late goes first, so a
line saturated with commands still carries the feedback.
"""

from collections.abc import Mapping, Sequence
import math
from typing import Optional

from fabrik_ros.servo_io.bus_reports import BusPositions
from fabrik_ros.servo_io.bus_requests import Request, ServoRecord
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec, StatusPacket
from fabrik_ros.servo_io.protocols.control_tables import ControlTable


class FeedbackReads:
    """When the next present-position read is due, and the positions the latest one brought.

    :param codec: the protocol's packets
    :param table: the model whose present-position register is read (one maker's address)
    :param servos: what is known of each servo, by id (``present`` is noted there)
    :param poll_hz: reads per second, 0 = none
    """

    def __init__(self, codec: BusCodec, table: ControlTable,
                 servos: Mapping[int, ServoRecord], poll_hz: float) -> None:
        self.codec = codec
        self.table = table
        self.poll_hz = poll_hz
        self.positions: Optional[BusPositions] = None
        self._servos = servos
        self._next_s = 0.0
        self._packet: tuple[tuple[int, ...], bytes] = ((), b'')   # the latest ids' sync read

    def reset(self, now_s: float) -> None:
        """Start over on a new connection: no positions yet, the first read due now."""
        self.positions = None
        self._next_s = now_s

    def due_s(self) -> float:
        """Return when the next read is due [s] (infinity if there is no feedback)."""
        return self._next_s if self.poll_hz else math.inf

    def late_s(self) -> float:
        """Return when the next read is a poll period late [s]: it then goes before a command."""
        return self._next_s + 1.0 / self.poll_hz if self.poll_hz else math.inf

    def request(self, now_s: float, ids: Sequence[int]) -> Request:
        """Return the sync read of ``ids``' present positions; the grid moves a period on.

        A read that went late (behind commands) keeps the grid, so reads keep their rate; one
        more than a period behind (a stalled host) moves it, so no burst of reads catches up.
        Its answers become :attr:`positions` (servos that did not answer lack there).
        """
        period_s = 1.0 / self.poll_hz
        self._next_s = max(self._next_s + period_s, now_s - period_s)
        register = self.table.present_position

        def done(statuses: dict[int, StatusPacket], stamp_s: float) -> None:
            counts = {}
            for servo_id, status in statuses.items():
                if len(status.params) == register.size:
                    counts[servo_id] = register.decode(status.params)
                    self._servos[servo_id].present = counts[servo_id]
            self.positions = BusPositions(counts, stamp_s)

        ids = tuple(ids)
        if self._packet[0] != ids:      # the same servos read after read: the same packet
            self._packet = ids, self.codec.sync_read(register.address, register.size, ids)
        return Request('positions', self._packet[1], ids,
                       len(ids) * self.codec.status_size(register.size),
                       params=register.size, done=done)
