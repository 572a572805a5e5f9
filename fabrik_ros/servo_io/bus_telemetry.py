"""Each servo's load, voltage, temperature and error register, read one servo at a time.

The driver's diagnostics and the servos' own protection (stall, heat, overload) read these;
they change slowly, so one servo is read at a time, round robin, at ``telemetry_hz``, and only
when nothing else is due on the line (the scheduler asks last).
"""

from collections.abc import Mapping, Sequence
import math

from fabrik_ros.servo_io.bus_line import telemetry_blocks
from fabrik_ros.servo_io.bus_requests import Request, ServoRecord
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec, StatusPacket
from fabrik_ros.servo_io.protocols.control_tables import ControlTable, Register, span


class TelemetryReads:
    """Whose readings are read next, and when.

    :param codec: the protocol's packets
    :param servos: what is known of each servo, by id (the readings are noted there)
    :param telemetry_hz: reads per second, 0 = none
    """

    def __init__(self, codec: BusCodec, servos: Mapping[int, ServoRecord],
                 telemetry_hz: float) -> None:
        self.codec = codec
        self.telemetry_hz = telemetry_hz
        self._servos = servos
        self._next_s = 0.0
        self._turn = 0
        self._blocks_of: dict[int, tuple[ControlTable, list[list[Register]]]] = {}

    def reset(self, now_s: float) -> None:
        """Start over on a new connection: the first read due now."""
        self._next_s = now_s

    def due_s(self) -> float:
        """Return when the next read is due [s] (infinity if there is no telemetry)."""
        return self._next_s if self.telemetry_hz else math.inf

    def request(self, now_s: float, ids: Sequence[int]) -> Request:
        """Return the next read of the round robin over ``ids``, and move the turn on."""
        turns = [(servo_id, block) for servo_id in ids
                 for block in self._blocks(self._servos[servo_id].table)]
        servo_id, block = turns[self._turn % len(turns)]
        self._turn = (self._turn + 1) % len(turns)
        self._next_s = now_s + 1.0 / self.telemetry_hz
        address, size = span(*block)
        servo = self._servos[servo_id]

        def done(statuses: dict[int, StatusPacket], stamp_s: float) -> None:
            status = statuses.get(servo_id)
            if status is not None and len(status.params) == size:
                _note_readings(servo, block, status.params, address, stamp_s)

        return Request('telemetry', self.codec.read(servo_id, address, size), (servo_id,),
                       self.codec.status_size(size), params=size, done=done)

    def _blocks(self, table: ControlTable) -> list[list[Register]]:
        """Return :func:`telemetry_blocks` of ``table``, worked out once per model."""
        known = self._blocks_of.get(id(table))
        if known is None or known[0] is not table:
            known = self._blocks_of[id(table)] = (table, telemetry_blocks(table))
        return known[1]


def _note_readings(servo: ServoRecord, block: Sequence[Register], params: bytes,
                   address: int, stamp_s: float) -> None:
    """Note the readings of ``block`` (read from ``address``) on ``servo``, in SI units."""
    table = servo.table
    for register in block:
        value = register.value_in(params, address)
        if register is table.present_load:
            servo.load_percent = value * table.load_unit_percent
        elif register is table.present_voltage:
            servo.voltage_v = value * table.voltage_unit_v
        elif register is table.present_temperature:
            servo.temperature_c = float(value)
        else:
            servo.hardware_error = value
    servo.readings_s = stamp_s
