"""Simulated Dynamixel X servos on one bus, speaking Protocol 2.0, for SimBoard.

``SimBoard(Protocol.DYNAMIXEL, channels=6)`` runs six XL430-W250 with ids 1..6 on one pty at
1 Mbaud. What they do beyond the shared :class:`~.bus_firmware.BusFirmware`, each rule from the
ROBOTIS e-Manual (Protocol 2.0 page; XL430-W250 control table and the includes it names):

- **Power-up limp**: Torque Enable(64) starts at 0 (the arm falls if nothing holds it).
- **Ping** answers the model number (1060) and the firmware version, as the SDK expects.
- **Status packets**: the error byte is one error number, plus the alert bit (0x80) while the
  Hardware Error Status(70) register is not 0. Status Return Level(68) decides who answers:
  0 ping only, 1 ping and read, 2 (default) everything; a broadcast is never answered except
  ping and sync read.
- **Refusals** (nothing is written, the status says why): an EEPROM register written while
  torque is on, a read-only register written, or bytes past the modelled table (the indirect
  area 168..661 is not modelled): access error; part of a register written: data length
  error; a value outside a register's range: data range error; a goal outside the position
  limit registers: data limit error (Goal Position(116) ranges over Min..Max Position Limit).
  A sync write is refused servo by servo, silently: nobody answers a sync write.
- **Homing offset**: Present Position = actual position + Homing Offset(20) (the e-Manual;
  LeRobot's ``_get_half_turn_homings`` says the same). In Position Control Mode (3, the
  default) the e-Manual's note makes the servo ignore an offset beyond -1,024..1,024 (a
  quarter turn): the write is answered without error and the register keeps its value. A
  joint range that needs the seam moved further cannot be fixed by the offset on an X servo.
- **Hardware errors on demand**: set ``servo.error_bits`` to Hardware Error Status bits
  (:data:`~fabrik_ros.servo_io.protocols.dynamixel.HARDWARE_ERROR_BITS`); a bit also set in
  Shutdown(63) (default 52: overheating, electrical shock, overload) turns torque off and keeps
  it off until a reboot instruction, the only way back the e-Manual gives.
"""

from collections.abc import Mapping

from fabrik_ros.boardsim.bus_firmware import BusFirmware
from fabrik_ros.boardsim.bus_servo import BusServo
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec, InstructionPacket
from fabrik_ros.servo_io.protocols.control_tables import (
    Register,
    Storage,
    XL430_W250,
)
from fabrik_ros.servo_io.protocols.dynamixel import ALERT, DynamixelCodec, ErrorNumber
from fabrik_ros.servo_io.protocols.dynamixel import Instruction as DxlInstruction

_READ_ONLY = ('Model_Number', 'Firmware_Version', 'Hardware_Error_Status', 'Moving',
              'Present_Load', 'Present_Current', 'Present_Velocity', 'Present_Position',
              'Present_Input_Voltage', 'Present_Temperature')
# Value ranges of the XL430-W250 control table for the registers the host writes.
_RANGES: Mapping[str, tuple[int, int]] = {
    'ID': (0, 252), 'Baud_Rate': (0, 7), 'Return_Delay_Time': (0, 254), 'Drive_Mode': (0, 13),
    'Operating_Mode': (0, 16), 'Homing_Offset': (-1_044_479, 1_044_479),
    'Temperature_Limit': (0, 100), 'Velocity_Limit': (0, 1023),
    'Max_Position_Limit': (0, 4095), 'Min_Position_Limit': (0, 4095), 'Torque_Enable': (0, 1),
    'LED': (0, 1), 'Status_Return_Level': (0, 2), 'Profile_Acceleration': (0, 32767),
    'Profile_Velocity': (0, 32767)}
_ANSWER_ALL = 2          # Status Return Level(68): every instruction answered
_ANSWER_READS = 1        # ... ping and read answered
_POSITION_MODE = 3       # Operating Mode(11): Position Control Mode, one turn (the default)
_POSITION_MODE_OFFSET_MAX = 1024     # Homing Offset(20) applied in that mode (e-Manual note)


class DynamixelBusFirmware(BusFirmware):
    """XL430-W250 servos answering Protocol 2.0; see the module docstring for what they do."""

    table = XL430_W250
    offset_sign = -1     # Present_Position = actual + Homing_Offset (see bus_servo.py)

    def __init__(self, model: ServoModel, firmware: str) -> None:
        super().__init__(model, firmware)
        self._shut_down: set[int] = set()           # ids whose torque a hardware error cut
        self._handlers[DxlInstruction.REBOOT] = self._reboot

    def new_codec(self) -> BusCodec:
        """Return the Protocol 2.0 codec, reading by length as a servo does (unstuffed too)."""
        return DynamixelCodec(strict_stuffing=False)

    def status_error(self, servo: BusServo) -> int:
        """Return the alert bit while the servo has a hardware error, else 0."""
        return ALERT if servo.error_bits else 0

    # -- instructions ---------------------------------------------------------------------------

    def _handle(self, packet: InstructionPacket, now_s: float) -> bytes:
        self._shut_down_on_errors(now_s)
        if packet.instruction not in self._handlers:
            return b''.join(self._status(servo, ErrorNumber.INSTRUCTION)
                            for servo in self._listening(packet.id)
                            if packet.id != self.codec.BROADCAST_ID
                            and self._answers(servo, DxlInstruction.WRITE))
        return super()._handle(packet, now_s)

    def _ping(self, packet: InstructionPacket, now_s: float) -> bytes:
        return b''.join(self._status(servo, ErrorNumber.NONE, self._identity(servo, now_s))
                        for servo in self._listening(packet.id))

    def _read(self, packet: InstructionPacket, now_s: float) -> bytes:
        split = self._fields(packet.params, 2)
        if split is None or split[1] or packet.id == self.codec.BROADCAST_ID:
            return b''
        (address, size), _ = split
        return b''.join(self._read_one(servo, address, size, now_s)
                        for servo in self._listening(packet.id)
                        if self._answers(servo, DxlInstruction.READ))

    def _sync_read(self, packet: InstructionPacket, now_s: float) -> bytes:
        split = self._fields(packet.params, 2)
        if split is None or packet.id != self.codec.BROADCAST_ID:
            return b''
        (address, size), ids = split
        by_id = {servo.servo_id: servo for servo in self._listening(packet.id)}
        return b''.join(self._read_one(by_id[servo_id], address, size, now_s)
                        for servo_id in ids if servo_id in by_id)

    def _write(self, packet: InstructionPacket, now_s: float) -> bytes:
        split = self._fields(packet.params, 1)
        if split is None or not split[1]:
            return b''
        (address,), data = split
        answers = bytearray()
        for servo in self._listening(packet.id):
            refusal = self._refusal(servo, address, data)
            if refusal is ErrorNumber.NONE:
                self._apply(servo, address, data, now_s)
            if packet.id != self.codec.BROADCAST_ID and self._answers(servo, DxlInstruction.WRITE):
                answers += self._status(servo, refusal)
        return bytes(answers)

    def _store(self, servo: BusServo, address: int, data: bytes, now_s: float) -> None:
        """Apply a sync write's value unless the servo refuses it (it answers nothing)."""
        if self._refusal(servo, address, data) is ErrorNumber.NONE:
            self._apply(servo, address, data, now_s)

    def _reboot(self, packet: InstructionPacket, now_s: float) -> bytes:
        """Restart the servo: RAM from power-up (torque off), hardware errors cleared."""
        if packet.params or packet.id == self.codec.BROADCAST_ID:
            return b''
        answers = bytearray()
        for servo in self._listening(packet.id):
            servo.error_bits = 0
            self._shut_down.discard(servo.servo_id)
            servo.power_cycle(now_s)
            if self._answers(servo, DxlInstruction.WRITE):
                answers += self._status(servo, ErrorNumber.NONE)
        return bytes(answers)

    # -- rules ----------------------------------------------------------------------------------

    def _refusal(self, servo: BusServo, address: int, data: bytes) -> ErrorNumber:
        """Return why the servo refuses to write ``data`` at ``address`` (NONE: it does not)."""
        end = address + len(data)
        if end > self.table.memory_size:
            return ErrorNumber.ACCESS
        touched = [register for register in self.table.registers()
                   if register.address < end and address < register.end]
        if any(register.address < address or register.end > end for register in touched):
            return ErrorNumber.DATA_LENGTH
        for register in touched:
            if register.name in _READ_ONLY or (register.storage is Storage.EEPROM
                                               and servo.torque):
                return ErrorNumber.ACCESS
        for register in touched:
            value = register.value_in(data, address)
            low, high = _RANGES.get(register.name, register.value_range)
            if not low <= value <= high:
                return ErrorNumber.DATA_RANGE
            if register == self.table.goal_position and not self._within_limits(
                    servo, address, data, value):
                return ErrorNumber.DATA_LIMIT
        return ErrorNumber.NONE

    def _within_limits(self, servo: BusServo, address: int, data: bytes, goal: int) -> bool:
        """Say whether a goal lies within the limits in force once ``data`` is written."""
        low, high = servo.limits
        if self._covers(self.table.min_position_limit, address, data):
            low = self.table.min_position_limit.value_in(data, address)
        if self._covers(self.table.max_position_limit, address, data):
            high = self.table.max_position_limit.value_in(data, address)
        return low <= goal <= high

    @staticmethod
    def _covers(register: Register, address: int, data: bytes) -> bool:
        return address <= register.address and register.end <= address + len(data)

    def _apply(self, servo: BusServo, address: int, data: bytes, now_s: float) -> None:
        offset = self.table.homing_offset
        if offset is not None and self._covers(offset, address, data) and not \
                self._offset_valid(servo, offset.value_in(data, address)):
            start = offset.address - address            # ignored: keep the register as it is
            kept = offset.encode(servo.homing_offset)
            data = data[:start] + kept + data[start + offset.size:]
        servo.write(address, data, now_s)
        if servo.servo_id in self._shut_down and servo.torque:
            servo.write(self.table.torque_enable.address, b'\x00', now_s)

    def _offset_valid(self, servo: BusServo, value: int) -> bool:
        """Say whether the servo applies a Homing Offset of ``value`` in its operating mode.

        In Position Control Mode (3, within one turn) the e-Manual's Homing Offset(20) note
        limits it to -1,024..1,024 and ignores other values (no error in the status).
        """
        mode = servo.register(self.table.register('Operating_Mode'))
        return mode != _POSITION_MODE or abs(value) <= _POSITION_MODE_OFFSET_MAX

    def _shut_down_on_errors(self, now_s: float) -> None:
        """Turn torque off on every servo with a hardware error its Shutdown register names."""
        shutdown = self.table.register('Shutdown')
        for servo in self.servos:
            if servo.error_bits & servo.register(shutdown):
                self._shut_down.add(servo.servo_id)
                if servo.torque:
                    servo.write(self.table.torque_enable.address, b'\x00', now_s)

    def _answers(self, servo: BusServo, instruction: int) -> bool:
        level = servo.register(self.table.register('Status_Return_Level'))
        needed = _ANSWER_READS if instruction == DxlInstruction.READ else _ANSWER_ALL
        return level >= needed

    def _read_one(self, servo: BusServo, address: int, size: int, now_s: float) -> bytes:
        if address + size > self.table.memory_size:
            return self._status(servo, ErrorNumber.ACCESS)
        return self._status(servo, ErrorNumber.NONE, servo.read(address, size, now_s))

    def _identity(self, servo: BusServo, now_s: float) -> bytes:
        """Return what a ping answers: model number (2 bytes) and firmware version."""
        model = self.table.model_number_register
        version = self.table.register('Firmware_Version')
        return servo.read(model.address, model.size, now_s) + servo.read(version.address, 1,
                                                                          now_s)

    def _status(self, servo: BusServo, error: ErrorNumber, params: bytes = b'') -> bytes:
        return self.codec.status(servo.servo_id, int(error) | self.status_error(servo), params)

