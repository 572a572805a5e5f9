"""A BusScheduler joined to a simulated servo bus by a modelled half-duplex line; fake clock."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional

from fabrik_ros.boardsim.bus_firmware import BusFirmware
from fabrik_ros.boardsim.dynamixel_bus import DynamixelBusFirmware
from fabrik_ros.boardsim.feetech_bus import FeetechBusFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io.bus_line import BUS_OPTIONS
from fabrik_ros.servo_io.bus_scheduler import BusScheduler
from fabrik_ros.servo_io.link_options import LinkOptions
from fabrik_ros.servo_io.link_stats import Counters
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec, Instruction, InstructionPacket
from fabrik_ros.servo_io.protocols.control_tables import ControlTable, STS3215, XL430_W250
from fabrik_ros.servo_io.protocols.dialect import Protocol
from fabrik_ros.servo_io.protocols.dynamixel import DynamixelCodec
from fabrik_ros.servo_io.protocols.feetech import FeetechCodec

SERVOS = 6
IDS = tuple(range(1, SERVOS + 1))
BUSES: dict[Protocol, tuple[Callable[[], BusCodec], ControlTable,
                            Callable[[ServoModel, str], BusFirmware]]] = {
    Protocol.FEETECH: (FeetechCodec, STS3215, FeetechBusFirmware),
    Protocol.DYNAMIXEL: (DynamixelCodec, XL430_W250, DynamixelBusFirmware)}


@dataclass
class Sent:
    """An instruction packet the scheduler wrote, as the servos read it."""

    at_s: float
    packet: InstructionPacket

    def writes(self, table: ControlTable, register_name: str, codec: BusCodec) -> dict[int, int]:
        """Return the value this packet writes into ``register_name`` of each servo, by id."""
        register = table.register(register_name)
        fields = codec.FIELD_BYTES
        params = self.packet.params
        if self.packet.instruction == Instruction.WRITE:
            address = int.from_bytes(params[:fields], 'little')
            data = params[fields:]
            entries = {self.packet.id: data}
        elif self.packet.instruction == Instruction.SYNC_WRITE:
            address = int.from_bytes(params[:fields], 'little')
            size = int.from_bytes(params[fields:2 * fields], 'little')
            body = params[2 * fields:]
            entries = {body[i]: body[i + 1:i + 1 + size] for i in range(0, len(body), size + 1)}
        else:
            return {}
        found = {}
        for servo_id, data in entries.items():
            if address <= register.address and register.end <= address + len(data):
                found[servo_id] = register.value_in(data, address)
        return found

    def reads(self, table: ControlTable, register_name: str, codec: BusCodec) -> set[int]:
        """Return the ids whose ``register_name`` this packet reads."""
        register = table.register(register_name)
        fields = codec.FIELD_BYTES
        params = self.packet.params
        if self.packet.instruction not in (Instruction.READ, Instruction.SYNC_READ):
            return set()
        address = int.from_bytes(params[:fields], 'little')
        size = int.from_bytes(params[fields:2 * fields], 'little')
        if not (address <= register.address and register.end <= address + size):
            return set()
        if self.packet.instruction == Instruction.READ:
            return {self.packet.id}
        return set(params[2 * fields:])


@dataclass
class BusWire:
    """A scheduler, a simulated bus and the line between them; time moves only by hand.

    ``drop`` may lose a reply (``drop(reply) -> True``); ``delay(reply)`` holds it back that
    many seconds more (a servo, adapter or simulator thread that is late).
    """

    protocol: Protocol = Protocol.FEETECH
    options: LinkOptions = BUS_OPTIONS
    homing_offsets: Optional[dict[int, int]] = None
    telemetry_hz: float = 10.0
    answered: tuple[int, ...] = IDS
    now: float = 0.0
    drop: Callable[[bytes], bool] = lambda reply: False
    delay: Callable[[bytes], float] = lambda reply: 0.0
    sent: list[Sent] = field(default_factory=list)
    replies: list[tuple[float, bytes]] = field(default_factory=list)
    answered_at: list[float] = field(default_factory=list)     # when each reply came in

    def __post_init__(self) -> None:
        make_codec, self.table, make_firmware = BUSES[self.protocol]
        self.codec = make_codec()
        self.reader = make_codec()              # reads back what the scheduler wrote
        self.bus = make_firmware(ServoModel(SERVOS), 'sim')
        self.count = Counters()
        self.scheduler = BusScheduler(self.codec, IDS, self.table, self.options, self.count,
                                      homing_offsets=self.homing_offsets,
                                      telemetry_hz=self.telemetry_hz)
        self.byte_s = 10.0 / self.options.baud

    def connect(self) -> None:
        """Start a connection as the link does after its handshake pinged ``answered``."""
        self.scheduler.forget_bus(self.now, self.answered)

    def step(self) -> None:
        """Do everything due at ``now``: replies in, late requests closed, writes out."""
        arrived = [data for at, data in self.replies if at <= self.now]
        self.replies = [(at, data) for at, data in self.replies if at > self.now]
        for data in arrived:
            self.codec.feed(data)
            self.answered_at.append(self.now)
        self.scheduler.received(self.now)
        self.scheduler.expire(self.now)
        while (data := self.scheduler.next_write(self.now)) is not None:
            self._send(data)

    def _send(self, data: bytes) -> None:
        arrives = self.now + len(data) * self.byte_s
        self.reader.feed(data)
        while (packet := self.reader.take_instruction()) is not None:
            self.sent.append(Sent(self.now, packet))
        reply = self.bus.receive(data, arrives)
        if reply and not self.drop(reply):
            self.replies.append((arrives + len(reply) * self.byte_s + self.delay(reply), reply))

    def run_until(self, end_s: float) -> None:
        """Advance the clock event by event to ``end_s``, stepping at each event."""
        self.step()
        while self.now < end_s:
            due = [self.scheduler.wake_at(self.now)] + [at for at, _ in self.replies]
            later = min(end_s, max(self.now, min(due)))
            assert later > self.now, f'wake_at({self.now}) = {min(due)}: nothing to wait for'
            self.now = later
            self.step()

    def run_for(self, seconds: float) -> None:
        """Advance the clock by ``seconds``."""
        self.run_until(self.now + seconds)

    def goal_writes(self, servo_id: int) -> list[tuple[float, int]]:
        """Return when each goal for ``servo_id`` went out, and the goal."""
        name = self.table.goal_position.name
        return [(s.at_s, s.writes(self.table, name, self.reader)[servo_id]) for s in self.sent
                if servo_id in s.writes(self.table, name, self.reader)]

    def position_reads(self, servo_id: int) -> list[float]:
        """Return when a read of ``servo_id``'s present position went out."""
        name = self.table.present_position.name
        return [s.at_s for s in self.sent if servo_id in s.reads(self.table, name, self.reader)]

    def sync_writes(self) -> list[Sent]:
        """Return the sync writes sent so far."""
        return [s for s in self.sent if s.packet.instruction == Instruction.SYNC_WRITE]

    def sync_reads(self) -> list[Sent]:
        """Return the sync reads sent so far."""
        return [s for s in self.sent if s.packet.instruction == Instruction.SYNC_READ]

    def servo(self, servo_id: int):
        """Return the simulated servo ``servo_id``."""
        return self.bus.servo(servo_id)

    def present(self, servo_id: int) -> int:
        """Return where the simulated servo stands now [counts]."""
        return round(self.servo(servo_id).present(self.now))
