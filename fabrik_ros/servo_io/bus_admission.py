"""One servo's answered steps on a bus: its admission and its torque, each write acknowledged.

Admission (run by :mod:`fabrik_ros.servo_io.bus_tasks`): a servo found silent is
pinged; then its model number, position-limit registers and torque state are read, the arm
file's homing offset written where the servo holds another (torque off first; Feetech EEPROM
unlocked and locked again), and its present position read. Only then may a goal reach it: an
STS3215 is torqued at power-up, and a goal written before the read would move the arm at
once. Torque on reads the present position and writes it as the goal before the torque, so
the arm holds where it stands. A reboot (Dynamixel Protocol 2.0 only) is one answered request.

Each step is a unicast request answered by one status packet, sent again up to
``max_retries`` times when no answer comes (an answer of the wrong length is another
request's, late, and the scheduler drops it: the read is then sent again); a step that gets
no answer ends the task (the scheduler counts the misses and names a servo silent).
"""

from collections.abc import Generator, Mapping, Sequence
import math
from typing import Optional

from fabrik_ros.servo_io.bus_line import goal_block, goal_span
from fabrik_ros.servo_io.bus_reports import Notice
from fabrik_ros.servo_io.bus_requests import Request, ServoRecord, Task
from fabrik_ros.servo_io.link_options import LinkOptions
from fabrik_ros.servo_io.link_stats import Counters
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec, StatusPacket
from fabrik_ros.servo_io.protocols.control_tables import (
    ControlTable,
    Register,
    span,
    TABLES,
)

Step = Generator[Request, Optional[StatusPacket], bool]


class ServoSteps:
    """Build one servo's admission and torque tasks from answered unicast requests.

    :param codec: the protocol's packets
    :param table: the model assumed until a servo's model number names another of its maker
    :param options: ``max_retries`` (a request is sent again this often without an answer)
    :param counters: statistics, updated in place (``retries``)
    :param offsets: the homing-offset register each servo must hold, by id
    :param notices: where what a person should read is appended
    """

    def __init__(self, codec: BusCodec, table: ControlTable, options: LinkOptions,
                 counters: Counters, offsets: Mapping[int, int], notices: list[Notice]) -> None:
        self.codec = codec
        self.table = table
        self.options = options
        self.count = counters
        self._offsets = offsets
        self._notices = notices

    def ask(self, servo: ServoRecord, name: str, data: bytes,
            params: int) -> Generator[Request, Optional[StatusPacket], Optional[StatusPacket]]:
        """Send ``data`` to ``servo`` until it answers, up to ``max_retries`` times again."""
        for attempt in range(self.options.max_retries + 1):
            if attempt:
                self.count.retries += 1
            status = yield Request(name, data, (servo.id,), self.codec.status_size(params),
                                   params=params)
            if status is not None:
                return status
        return None

    def read(self, servo: ServoRecord, name: str, registers: Sequence[Register]
             ) -> Generator[Request, Optional[StatusPacket], Optional[dict[str, int]]]:
        """Read ``registers`` (one span) of ``servo``; their values by name, None if silent."""
        address, size = span(*registers)
        status = yield from self.ask(servo, f'read {name}',
                                     self.codec.read(servo.id, address, size), size)
        if status is None or len(status.params) != size:
            return None         # refused: an error status without the registers
        return {register.name: register.value_in(status.params, address)
                for register in registers}

    def write(self, servo: ServoRecord, register: Register, value: int) -> Step:
        """Write one register of ``servo``; True once it answered without an error number."""
        status = yield from self.ask(
            servo, f'write {register.name}',
            self.codec.write(servo.id, register.address, register.encode(value)), 0)
        return status is not None and not self.refused(status)

    def refused(self, status: StatusPacket) -> bool:
        """Return True if a status says the instruction was not carried out.

        Protocol 2.0 carries an error *number* in bits 0-6 (bit 7 is the hardware alert);
        Protocol 1.0 error bits report the servo's condition, not the instruction's fate,
        except its instruction and range bits.
        """
        if self.codec.FIELD_BYTES == 2:
            return bool(status.error & 0x7F)
        return bool(status.error & 0x48)        # P1.0 instruction (0x40), range (0x08) bits

    def ping(self, servo: ServoRecord) -> Step:
        """Ping a servo that stopped answering; True once it answers (named back if silent)."""
        params = 3 if self.codec.FIELD_BYTES == 2 else 0
        status = yield Request('ping', self.codec.ping(servo.id), (servo.id,),
                               self.codec.status_size(params), params=params)
        if status is None:
            return False
        if servo.silent_since is not None:
            self._notices.append(Notice(servo.id, 'answers again'))
        servo.lost_since = servo.silent_since = None
        servo.back_by_s = -math.inf
        return True

    def reboot(self, servo: ServoRecord) -> Step:
        """Reboot ``servo``; True once it answered (Protocol 2.0 answers, then restarts).

        Sent once, not again without an answer: a servo whose answer was lost restarts all
        the same, and one asked again would restart twice.
        """
        status = yield Request('reboot', self.codec.reboot(servo.id), (servo.id,),
                               self.codec.status_size(0), params=0)
        return status is not None and not self.refused(status)

    def admit(self, servo: ServoRecord
              ) -> Generator[Request, Optional[StatusPacket], Optional[bool]]:
        """Read model, limits, torque, homing offset and present position; see the docstring.

        :returns: the torque the servo held when its admission began; None if it fell silent
        """
        table = self.table
        model = yield from self.read(servo, 'model number', [table.model_number_register])
        if model is None:
            return None
        servo.table = self._table_for(model[table.model_number_register.name])
        table = servo.table
        servo.model = table.model
        limits = yield from self.read(servo, 'limits',
                                      [table.min_position_limit, table.max_position_limit])
        if limits is None:
            return None
        servo.limits = (limits[table.min_position_limit.name],
                        limits[table.max_position_limit.name])
        if not (yield from self._voltage_limits(servo)):
            return None
        torque = yield from self.read(servo, 'torque', [table.torque_enable])
        if torque is None:
            return None
        servo.torque = held = bool(torque[table.torque_enable.name])
        if table.homing_offset is not None:
            done = yield from self._homing_offset(servo, table.homing_offset)
            if not done:
                return None
        present = yield from self.read(servo, 'present position', [table.present_position])
        if present is None:
            return None
        servo.present = servo.goal = present[table.present_position.name]
        servo.speed = 0
        return held

    def _voltage_limits(self, servo: ServoRecord) -> Step:
        """Read the input-voltage limit registers, where the model has them.

        A range that is empty (min not below max) is none: the datasheet's applies then.

        :returns: False if the servo fell silent
        """
        table = servo.table
        low, high = table.min_voltage_limit, table.max_voltage_limit
        servo.voltage_limits_v = None
        if low is None or high is None:
            return True
        read = yield from self.read(servo, 'voltage limits', [low, high])
        if read is None:
            return False
        volts = (read[low.name] * table.voltage_unit_v, read[high.name] * table.voltage_unit_v)
        if volts[0] < volts[1]:
            servo.voltage_limits_v = volts
        return True

    def _homing_offset(self, servo: ServoRecord, register: Register) -> Step:
        """Read the homing offset; write the arm file's where the servo holds another.

        EEPROM writes need torque off (Dynamixel X refuses them with torque on; a Feetech
        servo moves while its frame shifts) and, on Feetech, the lock flag cleared and set
        again so the value is kept at power-off.
        """
        read = yield from self.read(servo, 'homing offset', [register])
        if read is None:
            return False
        servo.homing_offset = read[register.name]
        wanted = self._offsets.get(servo.id)
        if wanted is None or wanted == servo.homing_offset:
            return True
        written = yield from self._write_offset(servo, register, wanted)
        if written is None:
            return False
        check = yield from self.read(servo, 'homing offset', [register])
        if check is None:
            return False
        before, servo.homing_offset = servo.homing_offset, check[register.name]
        if written and servo.homing_offset == wanted:
            self._notices.append(Notice(servo.id, f'homing offset register was {before}, wrote '
                                              f"{wanted} (the arm file's); torque was turned "
                                              'off'))
        else:
            self._notices.append(Notice(servo.id, f'homing offset register holds '
                                              f'{servo.homing_offset}, the arm file wants '
                                              f'{wanted}, and writing it failed'))
        return True

    def _write_offset(self, servo: ServoRecord, register: Register, wanted: int
                      ) -> Generator[Request, Optional[StatusPacket], Optional[bool]]:
        """Turn the torque off, unlock the EEPROM, write ``wanted``, lock it again.

        :returns: whether the offset write was carried out; None if a step around it failed
        """
        table = servo.table
        if not (yield from self.write(servo, table.torque_enable, 0)):
            return None
        servo.torque = False
        if table.lock is not None and not (yield from self.write(servo, table.lock, 0)):
            return None
        written = yield from self.write(servo, register, wanted)
        if table.lock is not None and not (yield from self.write(servo, table.lock, 1)):
            return None
        return written

    def hold_torque(self, servo: ServoRecord, want: Optional[bool]) -> Task:
        """Bring the servo's torque to ``want`` (None: leave it); on: hold where it stands."""
        table = servo.table
        if want is None or (want is False and servo.torque is False):
            return
        if want:
            present = yield from self.read(servo, 'present position', [table.present_position])
            if present is None:
                return
            servo.present = present[table.present_position.name]
            goal = goal_block(table, servo.present, 0)
            address, _ = goal_span(table)
            status = yield from self.ask(servo, 'write goal',
                                         self.codec.write(servo.id, address, goal), 0)
            if status is None or self.refused(status):
                return
            servo.goal, servo.speed = servo.present, 0
            if servo.torque:
                return
        if (yield from self.write(servo, table.torque_enable, int(want))):
            servo.torque = want

    def _table_for(self, model_number: int) -> ControlTable:
        """Return the table of the model named, else the assumed one (same maker's addresses)."""
        for table in TABLES.values():
            if (table.model_number == model_number
                    and table.model_number_register == self.table.model_number_register):
                return table
        return self.table
