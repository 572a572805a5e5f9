"""A simulated board that notes when every frame's first byte reaches it on the modelled line.

:class:`TimedBoard` is a :class:`~fabrik_ros.boardsim.SimBoard` that also keeps each chunk it
reads with the time its first byte finished arriving on the modelled line (start bit, 8 data
bits, stop bit: 86.8 µs per byte at 115200 baud, 10 µs at 1 Mbaud, queued behind whatever is
still on the line). Decoding happens after a run, in :func:`frames_from_chunks`, so the board
thread does no extra work while the clock matters.

On a servo bus (Feetech, Dynamixel) the frame that carries a target is the sync write of
every servo's goal (servo_io/bus_scheduler.py); it is read as :class:`SyncGoals`, the goal
count of each id. Unicast writes, reads and pings carry no target and stay instruction packets.
"""

from collections.abc import Mapping
from dataclasses import dataclass
import struct
from typing import Optional

from priority import boost_current_thread

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.servo_io import Command, Frame, FrameDecoder, Protocol
from fabrik_ros.servo_io.protocols import maestro, ssc32
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec, Instruction, InstructionPacket
from fabrik_ros.servo_io.protocols.control_tables import ControlTable, STS3215, XL430_W250
from fabrik_ros.servo_io.protocols.dynamixel import DynamixelCodec
from fabrik_ros.servo_io.protocols.feetech import FeetechCodec
from fabrik_ros.servo_io.protocols.native import CRC_SIZE, HEADER_SIZE


@dataclass(frozen=True)
class Chunk:
    """Bytes the board read at once; ``first_byte_s`` is when the first had fully arrived."""

    first_byte_s: float
    data: bytes


@dataclass(frozen=True)
class TimedFrame:
    """A command the board received and when its first byte had arrived [s, monotonic].

    ``frame`` is a native Frame, an SSC-32U command, a Maestro command, or on a servo bus
    :class:`SyncGoals` or another instruction packet.
    """

    first_byte_s: float
    frame: object


@dataclass(frozen=True)
class SyncGoals:
    """A sync write that sets goal positions: the goal of each servo it names [counts, by id]."""

    counts: Mapping[int, int]


class TimedBoard(SimBoard):
    """A SimBoard that records what it reads and when, for latency measurements."""

    def __init__(self, *args, realtime: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._chunks: list[Chunk] = []
        self._want_realtime = realtime
        self.realtime = False

    def on_thread_start(self) -> None:
        """Put the board thread at real-time priority if asked and allowed (priority.py)."""
        if self._want_realtime:
            self.realtime = boost_current_thread()

    def on_host_bytes(self, data: bytes, first_byte_s: float) -> None:
        """Record the chunk with its modelled arrival."""
        self._chunks.append(Chunk(first_byte_s, data))

    def holds(self, channel: int) -> bool:
        """Return whether output ``channel`` (a bus: servo id) drives: pulses or has torque on."""
        if not self.protocol.is_bus:
            return self.enabled[channel]
        with self.firmware.lock:
            return self.firmware.servo(channel).torque

    def goals(self) -> dict[int, int]:
        """Return each output's target by channel (a bus: goal register by id) [µs or counts]."""
        if not self.protocol.is_bus:
            return dict(enumerate(self.targets()))
        table = _BUS[self.protocol][1]
        with self.firmware.lock:
            return {servo.servo_id: servo.register(table.goal_position)
                    for servo in self.firmware.servos}

    def take_chunks(self) -> list[Chunk]:
        """Return the chunks recorded since the last call and start a new record."""
        chunks, self._chunks = self._chunks, []
        return chunks


def frames_from_chunks(chunks: list[Chunk], baud: int,
                       protocol: Protocol = Protocol.NATIVE) -> list[TimedFrame]:
    """Decode recorded chunks into commands stamped with their first byte's arrival.

    A command's first byte is the first byte received after the previous command ended. For
    the Maestro, whose dialect sends a channel's Set Speed right before its Set Target when
    the move time changes, a Set Target is stamped from that Set Speed: one write, one frame.
    """
    byte_s = 10.0 / baud if baud else 0.0
    if protocol.is_bus:
        return _bus_frames(chunks, byte_s, protocol)
    decoder = _DECODERS[protocol]()
    frames = []
    arrivals: list[float] = []      # of the bytes since the previous command ended
    for chunk in chunks:
        for offset, byte in enumerate(chunk.data):
            arrivals.append(chunk.first_byte_s + offset * byte_s)
            items = decoder.feed(bytes((byte,)))
            for item in items:
                if isinstance(item, Frame):     # skip bytes the native decoder dropped
                    size = HEADER_SIZE + len(item.payload) + CRC_SIZE
                    frames.append(TimedFrame(arrivals[-size], item))
                else:
                    frames.append(TimedFrame(arrivals[0], item))
            if items:
                arrivals.clear()
    return _join_maestro_speeds(frames) if protocol is Protocol.MAESTRO else frames


def _join_maestro_speeds(frames: list[TimedFrame]) -> list[TimedFrame]:
    """Stamp a Set Target with the Set Speed of the same channel sent right before it."""
    joined = []
    for index, timed in enumerate(frames):
        before = frames[index - 1].frame if index else None
        if (timed.frame.command == maestro.SET_TARGET and before is not None
                and before.command == maestro.SET_SPEED
                and before.channel == timed.frame.channel):
            timed = TimedFrame(frames[index - 1].first_byte_s, timed.frame)
        joined.append(timed)
    return joined


def _bus_frames(chunks: list[Chunk], byte_s: float, protocol: Protocol) -> list[TimedFrame]:
    """Read instruction packets as the simulated servos do, each stamped from its first byte.

    A packet's bytes are its codec's encoding of what it carries (a Dynamixel packet stuffed),
    so the packet began that many bytes before the byte that completed it.
    """
    make_codec, table = _BUS[protocol]
    codec = make_codec()
    frames = []
    arrivals: list[float] = []      # of the bytes since the previous packet ended
    for chunk in chunks:
        for offset, byte in enumerate(chunk.data):
            arrivals.append(chunk.first_byte_s + offset * byte_s)
            codec.feed(bytes((byte,)))
            packet = codec.take_instruction()
            while packet is not None:
                size = len(codec.packet(packet.id, packet.instruction, packet.params))
                frames.append(TimedFrame(arrivals[-size], _sync_goals(codec, table, packet)
                                         or packet))
                arrivals.clear()
                packet = codec.take_instruction()
    return frames


def _sync_goals(codec: BusCodec, table: ControlTable,
                packet: InstructionPacket) -> Optional[SyncGoals]:
    """Return the goals a sync write sets, None for any other packet or a malformed one."""
    width = codec.FIELD_BYTES
    if packet.instruction != Instruction.SYNC_WRITE or len(packet.params) < 2 * width:
        return None
    address = int.from_bytes(packet.params[:width], 'little')
    size = int.from_bytes(packet.params[width:2 * width], 'little')
    body = packet.params[2 * width:]
    goal = table.goal_position
    if not address <= goal.address < goal.end <= address + size or len(body) % (size + 1):
        return None
    return SyncGoals({body[start]: goal.value_in(body[start + 1:start + 1 + size], address)
                      for start in range(0, len(body), size + 1)})


_BUS: dict[Protocol, tuple[type[BusCodec], ControlTable]] = {
    Protocol.FEETECH: (FeetechCodec, STS3215), Protocol.DYNAMIXEL: (DynamixelCodec, XL430_W250)}
_DECODERS = {Protocol.NATIVE: FrameDecoder, Protocol.SSC32: ssc32.Ssc32CommandDecoder,
             Protocol.MAESTRO: maestro.MaestroCommandDecoder}


def pulse_of(frame: object, channel: int) -> Optional[int]:
    """Return the pulse a host command sets on ``channel`` [µs], None if it sets none.

    On a servo bus: the goal a sync write sets on servo id ``channel`` [counts].

    :param frame: a native Frame, an SSC-32U command, a Maestro command or a bus packet
    """
    if isinstance(frame, SyncGoals):
        return frame.counts.get(channel)
    if isinstance(frame, Frame):
        if frame.cmd != Command.SET_PULSES or len(frame.payload) < 4:
            return None
        count = (len(frame.payload) - 2) // 2       # channels 0..count-1: the rest keep theirs
        if channel >= count:
            return None
        pulse = struct.unpack_from(f'<{count}H', frame.payload, 2)[channel]
        return pulse or None
    if isinstance(frame, ssc32.GroupMove):
        return next((move.pulse_us for move in frame.moves
                     if move.channel == channel and move.pulse_us), None)
    if isinstance(frame, maestro.MaestroCommand):
        if frame.command != maestro.SET_TARGET or frame.channel != channel:
            return None
        return round(frame.values[0] / maestro.QUARTERS_PER_US) or None
    return None
