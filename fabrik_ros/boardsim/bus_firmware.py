"""A simulated serial servo bus: servos that answer a :class:`BusCodec`'s instruction packets.

The Feetech and Dynamixel buses differ in framing and in what a status packet's error byte
means, not in what the instructions do, so :class:`BusFirmware` handles ping, read, write,
sync write and sync read for any codec, and each maker's firmware (``feetech_bus.py``,
``dynamixel_bus.py``) names its codec, control table and error byte.

A packet left unfinished for :data:`RECEIVE_TIMEOUT_S` of line silence is dropped, as a
servo's receiver gives up on a packet whose end never came (the makers publish no figure; 20 ms
is longer than a 64-byte chunk takes at 38400 baud, the slowest STS rate). Without it, one
corrupted length byte would leave the servos deaf for up to 250 bytes.

On a bus the servos answer one after another, in the order a sync read names them (a
broadcast ping: in id order); a silent servo leaves its slot empty. Packets with a bad
checksum are ignored, as the servos ignore them. Instructions the link never sends (reg
write, action, reset, bulk read) and malformed ones go unanswered.

The servos have their own supply: unplugging and replugging the USB adapter leaves them as
they were (:meth:`BusFirmware.replugged`); :meth:`BusFirmware.power_cycle_servos` is a
brown-out of the servo supply.

Tests reach the servos from their own thread through the methods below; they take the
firmware's lock, which the board thread holds while it hands bytes over.
"""

import abc
from collections.abc import Callable, Iterable
import threading
from typing import ClassVar, Optional

from fabrik_ros.boardsim.board_firmware import SimFirmware
from fabrik_ros.boardsim.bus_servo import BusServo
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec, Instruction, InstructionPacket
from fabrik_ros.servo_io.protocols.control_tables import ControlTable

RECEIVE_TIMEOUT_S = 0.02


class BusFirmware(SimFirmware):
    """Servos with ids 1..``model.channels`` on one bus.

    Subclasses set ``table`` (the servos' model), ``offset_sign`` (see :class:`BusServo`) and
    implement :meth:`new_codec` and :meth:`status_error`.
    """

    table: ClassVar[ControlTable]
    offset_sign: ClassVar[int] = 1

    def __init__(self, model: ServoModel, firmware: str) -> None:
        super().__init__(model, firmware)
        self.codec = self.new_codec()
        self.lock = threading.RLock()
        self._heard_at_s = -RECEIVE_TIMEOUT_S
        self.servos = [BusServo(self.table, servo_id, offset_sign=self.offset_sign)
                       for servo_id in range(1, model.channels + 1)]
        self._handlers: dict[int, Callable[[InstructionPacket, float], bytes]] = {
            Instruction.PING: self._ping, Instruction.READ: self._read,
            Instruction.WRITE: self._write, Instruction.SYNC_WRITE: self._sync_write,
            Instruction.SYNC_READ: self._sync_read}

    @abc.abstractmethod
    def new_codec(self) -> BusCodec:
        """Return the codec the servos read instruction packets with."""

    @abc.abstractmethod
    def status_error(self, servo: BusServo) -> int:
        """Return the error byte of the servo's status packets."""

    # -- what tests reach -------------------------------------------------------------------

    def servo(self, servo_id: int) -> BusServo:
        """Return the servo answering to ``servo_id``.

        :raises KeyError: if no servo on the bus has that id.
        """
        with self.lock:
            for servo in self.servos:
                if servo.servo_id == servo_id:
                    return servo
        raise KeyError(f'servo id {servo_id} is not on the bus; ids: {self.ids()}')

    def ids(self) -> list[int]:
        """Return the ids on the bus in the servos' order."""
        with self.lock:
            return [servo.servo_id for servo in self.servos]

    def present_positions(self, now_s: float) -> list[int]:
        """Return each servo's present position, rounded [counts]."""
        with self.lock:
            return [round(servo.present(now_s)) for servo in self.servos]

    def torques(self) -> list[bool]:
        """Return which servos have torque on."""
        with self.lock:
            return [servo.torque for servo in self.servos]

    def move_by_hand(self, servo_id: int, count: float, now_s: float) -> None:
        """Move a servo's shaft by hand to ``count`` (see :meth:`BusServo.move_by_hand`)."""
        with self.lock:
            self.servo(servo_id).move_by_hand(count, now_s)

    def place_object(self, servo_id: int, count: float, now_s: float) -> None:
        """Put an object in ``servo_id``'s way at ``count`` (see :meth:`BusServo.place_object`)."""
        with self.lock:
            self.servo(servo_id).place_object(count, now_s)

    def remove_object(self, servo_id: int, now_s: float) -> None:
        """Take the object out of ``servo_id``'s way."""
        with self.lock:
            self.servo(servo_id).remove_object(now_s)

    def power_cycle_servos(self, now_s: float) -> None:
        """Switch the servo supply off and on (see :meth:`BusServo.power_cycle`)."""
        with self.lock:
            for servo in self.servos:
                servo.power_cycle(now_s)

    def replugged(self) -> None:
        """Forget a packet half received when the adapter was unplugged; the servos stay."""
        with self.lock:
            self.codec.clear()

    # -- SimFirmware ----------------------------------------------------------------------------

    def tick(self, now_s: float) -> None:
        """Drop a packet left unfinished too long (the servos' motion needs no ticks)."""
        with self.lock:
            if now_s - self._heard_at_s > RECEIVE_TIMEOUT_S:
                self.codec.clear()

    def receive(self, data: bytes, now_s: float) -> bytes:
        """Handle every instruction packet completed by ``data``; return the status packets."""
        with self.lock:
            self.tick(now_s)
            self._heard_at_s = now_s
            self.codec.feed(data)
            replies = bytearray()
            packet = self.codec.take_instruction()
            while packet is not None:
                replies += self._handle(packet, now_s)
                packet = self.codec.take_instruction()
            return bytes(replies)

    # -- instructions ---------------------------------------------------------------------------

    def _handle(self, packet: InstructionPacket, now_s: float) -> bytes:
        handler = self._handlers.get(packet.instruction)
        if handler is None:
            return b''
        try:
            return handler(packet, now_s)
        except ValueError:      # e.g. a read too long for one status packet: no answer
            return b''

    def _listening(self, servo_id: int) -> list[BusServo]:
        """Return the servos that hear a packet to ``servo_id`` (silent ones hear nothing)."""
        everyone = servo_id == self.codec.BROADCAST_ID
        hearing = [servo for servo in self.servos
                   if not servo.silent and (everyone or servo.servo_id == servo_id)]
        return sorted(hearing, key=lambda servo: servo.servo_id)

    def _answer(self, servo: BusServo, params: bytes) -> bytes:
        return self.codec.status(servo.servo_id, self.status_error(servo), params)

    def _fields(self, params: bytes, count: int) -> Optional[tuple[list[int], bytes]]:
        """Split ``count`` address/length fields off ``params``; None if it is too short."""
        width = self.codec.FIELD_BYTES
        if len(params) < count * width:
            return None
        fields = [int.from_bytes(params[i * width:(i + 1) * width], 'little')
                  for i in range(count)]
        return fields, params[count * width:]

    def _ping(self, packet: InstructionPacket, now_s: float) -> bytes:
        return b''.join(self._answer(servo, b'') for servo in self._listening(packet.id))

    def _read(self, packet: InstructionPacket, now_s: float) -> bytes:
        split = self._fields(packet.params, 2)
        if split is None or split[1] or packet.id == self.codec.BROADCAST_ID:
            return b''
        (address, size), _ = split
        return b''.join(self._answer(servo, servo.read(address, size, now_s))
                        for servo in self._listening(packet.id))

    def _write(self, packet: InstructionPacket, now_s: float) -> bytes:
        split = self._fields(packet.params, 1)
        if split is None or not split[1]:
            return b''
        (address,), data = split
        servos = self._listening(packet.id)
        for servo in servos:
            self._store(servo, address, data, now_s)
        if packet.id == self.codec.BROADCAST_ID:
            return b''
        return b''.join(self._answer(servo, b'') for servo in servos)

    def _sync_write(self, packet: InstructionPacket, now_s: float) -> bytes:
        split = self._fields(packet.params, 2)
        if split is None or packet.id != self.codec.BROADCAST_ID:
            return b''
        (address, size), body = split
        if size == 0 or len(body) % (size + 1):
            return b''
        for start in range(0, len(body), size + 1):
            for servo in self._listening(body[start]):
                self._store(servo, address, body[start + 1:start + 1 + size], now_s)
        return b''

    def _store(self, servo: BusServo, address: int, data: bytes, now_s: float) -> None:
        """Take a written value into the servo's registers (a maker may refuse some)."""
        servo.write(address, data, now_s)

    def _sync_read(self, packet: InstructionPacket, now_s: float) -> bytes:
        split = self._fields(packet.params, 2)
        if not self.codec.SYNC_READ or split is None or packet.id != self.codec.BROADCAST_ID:
            return b''
        (address, size), ids = split
        return b''.join(self._answer(servo, servo.read(address, size, now_s))
                        for servo in _in_order(self._listening(self.codec.BROADCAST_ID), ids))


def _in_order(servos: list[BusServo], ids: Iterable[int]) -> list[BusServo]:
    """Return the servos named by ``ids``, in that order (an id twice answers twice)."""
    by_id = {servo.servo_id: servo for servo in servos}
    return [by_id[servo_id] for servo_id in ids if servo_id in by_id]
