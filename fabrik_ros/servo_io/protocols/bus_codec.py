"""What the bus link needs from a serial-bus-servo protocol: request bytes and a status receiver.

Feetech STS (``feetech.py``) and Dynamixel (Protocol 1.0 in ``feetech.py``, Protocol 2.0 in
``dynamixel.py``) share one model: a half-duplex bus where the host sends an *instruction
packet* to a servo id (or to the broadcast id) and each addressed servo answers with a *status
packet* carrying an error byte and parameters. The instructions the link uses are the same five
on both makers: ping, read, write, sync write (one packet, many servos, no answer) and sync read
(one packet, one status per servo, in the order of the ids asked). Registers are addressed by
number in each model's control table (``control_tables.py``).

A :class:`BusCodec` is pure bytes and holds no port and no clock, so BusLink's scheduler,
pipelining and reconnects stay the link's own (the makers' SDKs tie framing to port I/O, which
is why they are test witnesses here, not building blocks). Its receiver takes whatever the port
delivered: it skips garbage and packets with a bad checksum, counts them, and never raises on
device bytes. The simulated buses use the same codec from the servo's side
(:meth:`BusCodec.status`, :meth:`BusCodec.take_instruction`), so host and simulator share one
framing.
"""

import abc
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
import enum
from typing import ClassVar, NamedTuple, Optional

from fabrik_ros.servo_io.protocols.dialect import Protocol

BUFFER_MAX = 4096        # bytes the receiver keeps; a device flooding the line loses the oldest


class Instruction(enum.IntEnum):
    """Instruction codes the link uses; the same numbers on Feetech and Dynamixel 1.0/2.0.

    Sources: scservo_sdk ``scservo_def.py`` (INST_*), dynamixel_sdk ``robotis_def.py``.
    """

    PING = 0x01
    READ = 0x02
    WRITE = 0x03
    SYNC_READ = 0x82
    SYNC_WRITE = 0x83


@dataclass(frozen=True)
class StatusPacket:
    """A servo's answer: its ``id``, the ``error`` bits (see :meth:`BusCodec.error_words`)."""

    id: int
    error: int
    params: bytes


@dataclass(frozen=True)
class InstructionPacket:
    """A request as a servo receives it (the simulated buses parse these)."""

    id: int
    instruction: int
    params: bytes


class Frame(NamedTuple):
    """A whole packet with a good checksum, before it is read as a status or an instruction.

    ``code`` is the byte after the length: the error bits of a Protocol 1.0 status, or the
    instruction (Protocol 2.0 statuses carry instruction 0x55 and the error in ``params[0]``).
    """

    id: int
    code: int
    params: bytes


class Scan(NamedTuple):
    """What a codec found at the front of the receive buffer.

    ``drop`` bytes are to be discarded (``bad_checksum`` when they began a packet whose
    checksum failed), or ``frame`` is a whole packet of ``drop`` bytes; neither (drop 0) means
    more bytes are needed. Tuples, not dataclasses: one is made for every packet received.
    """

    drop: int = 0
    frame: Optional[Frame] = None
    bad_checksum: bool = False


class BusCodec(abc.ABC):
    """Build instruction packets and pick status packets out of received bytes, for one protocol.

    Class attributes: ``protocol``; ``BROADCAST_ID`` (every servo listens, none answers except
    to sync read); ``MAX_ID`` (highest id a servo may have); ``FIELD_BYTES`` (bytes of an
    address or a length inside a request: 1 on Protocol 1.0, 2 on 2.0); ``SYNC_READ`` (whether
    the servos understand sync read: the AX-12 does not); ``ERROR_BITS`` (bit -> word).

    One codec object keeps one receive buffer: the link holds one for the statuses it reads, a
    simulated servo bus one for the instructions it reads.
    """

    protocol: ClassVar[Protocol]
    BROADCAST_ID: ClassVar[int] = 0xFE
    MAX_ID: ClassVar[int] = 0xFC
    FIELD_BYTES: ClassVar[int] = 1
    SYNC_READ: ClassVar[bool] = True
    ERROR_BITS: ClassVar[Mapping[int, str]] = {}
    # Why :meth:`reboot` cannot be asked of these servos; '' where it can.
    REBOOT_REFUSAL: ClassVar[str] = 'these servos have no reboot instruction'

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.garbage_bytes = 0       # bytes skipped because no packet started there
        self.bad_checksums = 0       # packets dropped because their checksum failed
        self.foreign_packets = 0     # good packets of the other direction (an echo), dropped

    # -- framing: what each protocol defines ----------------------------------------------

    @abc.abstractmethod
    def packet(self, servo_id: int, instruction: int, params: bytes) -> bytes:
        """Return the instruction packet ``instruction`` with ``params`` for ``servo_id``.

        :raises ValueError: if the packet is longer than the protocol's length field allows.
        """

    @abc.abstractmethod
    def status(self, servo_id: int, error: int, params: bytes) -> bytes:
        """Return the status packet a servo sends (for simulated servos and tests)."""

    @abc.abstractmethod
    def status_size(self, params_len: int) -> int:
        """Return the bytes on the line of one status packet with ``params_len`` parameters."""

    @abc.abstractmethod
    def instruction_size(self, params_len: int) -> int:
        """Return the bytes on the line of one instruction packet with ``params_len`` params."""

    @abc.abstractmethod
    def _scan(self, buffer: bytearray) -> Scan:
        """Look at the front of ``buffer`` for a packet; see :class:`Scan`."""

    @abc.abstractmethod
    def _as_status(self, frame: Frame) -> Optional[StatusPacket]:
        """Return ``frame`` read as a status packet, None if it cannot be one."""

    @abc.abstractmethod
    def _as_instruction(self, frame: Frame) -> Optional[InstructionPacket]:
        """Return ``frame`` read as an instruction packet, None if it cannot be one."""

    # -- requests ---------------------------------------------------------------------------

    def ping(self, servo_id: int) -> bytes:
        """Return a ping to ``servo_id``; it answers an empty status if it is there."""
        self._check_id(servo_id, broadcast=False)
        return self.packet(servo_id, Instruction.PING, b'')

    def read(self, servo_id: int, address: int, size: int) -> bytes:
        """Return a read of ``size`` bytes from ``address``; the status carries them."""
        self._check_id(servo_id, broadcast=False)
        return self.packet(servo_id, Instruction.READ,
                           self._field(address, 'address') + self._field(size, 'size', low=1))

    def write(self, servo_id: int, address: int, data: bytes) -> bytes:
        """Return a write of ``data`` from ``address``; a unicast write is answered empty."""
        self._check_id(servo_id, broadcast=True)
        if not data:
            raise ValueError('data is empty, must hold at least one byte to write')
        return self.packet(servo_id, Instruction.WRITE, self._field(address, 'address') + data)

    def sync_write(self, address: int, size: int, data_by_id: Mapping[int, bytes]) -> bytes:
        """Return one packet writing ``size`` bytes from ``address`` to every servo named.

        Nobody answers a sync write. The ids go in ascending order.

        :raises ValueError: on no ids, a bad id, or data of another length than ``size``.
        """
        if not data_by_id:
            raise ValueError('data_by_id is empty, must name at least one servo')
        params = bytearray(self._field(address, 'address') + self._field(size, 'size', low=1))
        for servo_id in sorted(data_by_id):
            self._check_id(servo_id, broadcast=False)
            data = data_by_id[servo_id]
            if len(data) != size:
                raise ValueError(f'data_by_id[{servo_id}] has {len(data)} bytes, must have '
                                 f'size = {size}')
            params += bytes((servo_id,)) + data
        return self.packet(self.BROADCAST_ID, Instruction.SYNC_WRITE, bytes(params))

    def sync_read(self, address: int, size: int, ids: Iterable[int]) -> bytes:
        """Return one packet asking every servo in ``ids`` for ``size`` bytes from ``address``.

        Each answers one status packet, in the order of ``ids``.

        :raises ValueError: on no ids, a bad or repeated id, or a protocol without sync read.
        """
        if not self.SYNC_READ:
            raise ValueError(f'{type(self).__name__}: these servos have no sync read; read '
                             'each servo instead')
        ids = tuple(ids)
        if not ids:
            raise ValueError('ids is empty, must name at least one servo')
        if len(set(ids)) != len(ids):
            raise ValueError(f'ids = {ids!r}, must not repeat an id')
        for servo_id in ids:
            self._check_id(servo_id, broadcast=False)
        params = self._field(address, 'address') + self._field(size, 'size', low=1) + bytes(ids)
        return self.packet(self.BROADCAST_ID, Instruction.SYNC_READ, params)

    def reboot(self, servo_id: int) -> bytes:
        """Return a reboot of ``servo_id``: it answers, then restarts as at power-up.

        Only Protocol 2.0 has one the link sends (:class:`~.dynamixel.DynamixelCodec`).

        :raises ValueError: on a protocol without a reboot instruction, saying why
            (:attr:`REBOOT_REFUSAL`)
        """
        raise ValueError(f'{type(self).__name__}: {self.REBOOT_REFUSAL}')

    # -- receiving --------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Add bytes received from the line; the oldest go beyond :data:`BUFFER_MAX`."""
        self._buffer += data
        excess = len(self._buffer) - BUFFER_MAX
        if excess > 0:
            del self._buffer[:excess]
            self.garbage_bytes += excess

    def take_status(self) -> Optional[StatusPacket]:
        """Return the next status packet received, None until a whole one is there."""
        while True:
            frame = self._next_frame()
            if frame is None:
                return None
            status = self._as_status(frame)
            if status is not None:
                return status
            self.foreign_packets += 1

    def take_instruction(self) -> Optional[InstructionPacket]:
        """Return the next instruction packet received (servo side), None until one is there."""
        while True:
            frame = self._next_frame()
            if frame is None:
                return None
            instruction = self._as_instruction(frame)
            if instruction is not None:
                return instruction
            self.foreign_packets += 1

    def clear(self) -> None:
        """Forget bytes not yet taken (after a timeout or a reconnect)."""
        self._buffer.clear()

    @property
    def pending(self) -> int:
        """Return how many received bytes are not yet part of a taken packet."""
        return len(self._buffer)

    def _next_frame(self) -> Optional[Frame]:
        while self._buffer:
            scan = self._scan(self._buffer)
            if scan.drop == 0:
                return None
            del self._buffer[:scan.drop]
            if scan.frame is not None:
                return scan.frame
            if scan.bad_checksum:
                self.bad_checksums += 1
            else:
                self.garbage_bytes += scan.drop
        return None

    # -- status errors ----------------------------------------------------------------------

    def error_words(self, error: int) -> tuple[str, ...]:
        """Return the meaning of each bit set in a status packet's ``error`` byte.

        Bits the protocol does not define are named by number (``'bit 4'``), never dropped.
        """
        return tuple(self.ERROR_BITS.get(1 << bit, f'bit {bit}')
                     for bit in range(8) if error >> bit & 1)

    def hardware_alert(self, error: int) -> bool:
        """Return True if a status's ``error`` byte says the servo has a hardware error.

        Protocol 2.0's alert bit; Protocol 1.0's bits name the condition itself (none here).
        """
        return False

    # -- checks -----------------------------------------------------------------------------

    def _check_id(self, servo_id: int, *, broadcast: bool) -> None:
        if 0 <= servo_id <= self.MAX_ID or (broadcast and servo_id == self.BROADCAST_ID):
            return
        extra = f' or {self.BROADCAST_ID} (broadcast)' if broadcast else ''
        raise ValueError(f'servo id = {servo_id!r}, must be within [0, {self.MAX_ID}]{extra}')

    def _field(self, value: int, name: str, *, low: int = 0) -> bytes:
        top = (1 << 8 * self.FIELD_BYTES) - 1
        if not low <= value <= top:
            raise ValueError(f'{name} = {value!r}, must be within [{low}, {top}]')
        return value.to_bytes(self.FIELD_BYTES, 'little')



def line_time_us(size: int, baud: int) -> float:
    """Return how long ``size`` bytes take on a UART line at ``baud`` [µs] (8N1: 10 bits each).

    >>> line_time_us(8, 1_000_000)
    80.0
    """
    if baud <= 0:
        raise ValueError(f'baud = {baud!r}, must be > 0')
    return size * 10 * 1e6 / baud
