"""The link's view of the Pololu Maestro (see ``maestro.py`` for the manual's formats)."""

from collections.abc import Sequence
from typing import Optional

from fabrik_ros.servo_io.device_bytes import shown
from fabrik_ros.servo_io.errors import NotABoard
from fabrik_ros.servo_io.protocols import maestro
from fabrik_ros.servo_io.protocols.dialect import (
    Answer,
    AnswerKind,
    Capabilities,
    mask_channels,
    Positions,
    Transaction,
)
from fabrik_ros.servo_io.protocols.native import BoardInfo
from fabrik_ros.servo_io.protocols.raw_dialect import RawDialect

_PULSE_MAX_US = maestro.DATA_MAX // maestro.QUARTERS_PER_US


class MaestroDialect(RawDialect):
    """Set Target per channel, with Set Speed standing in for the move time; no acks.

    Set Target (not Set Multiple Targets) is used because every Maestro accepts it, the
    6-channel Micro Maestro included. The move time becomes a per-channel speed limit computed
    from the distance to the previous target; the speed is only re-sent when it changes.
    """

    capabilities = Capabilities(acknowledged=False, board_limits=False, watchdog=False,
                                pulse_range_us=(1, _PULSE_MAX_US))
    board_name = 'Pololu Maestro'
    board_channels = maestro.CHANNELS     # the Mini Maestro 24; a Micro Maestro has 6
    likely_causes = ('a Maestro not in the USB Dual Port serial mode (it ships in "UART, '
                     'detect baud rate", where the Command Port ignores commands and passes on '
                     'what arrives on RX: Maestro Control Center, Serial Settings), its TTL '
                     'Port instead of its Command Port, or another device on the port')

    def __init__(self, channels: int) -> None:
        super().__init__(channels)
        self._targets: dict[int, int] = {}
        self._speeds: dict[int, int] = {}

    def reset(self) -> None:
        """Forget the targets and speeds sent on the previous connection."""
        super().reset()
        self._targets.clear()
        self._speeds.clear()

    def handshake(self) -> Transaction:
        """Return Get Errors (answers two bytes and clears the error register)."""
        return Transaction(maestro.encode_get_errors(), AnswerKind.BYTES,
                           size=maestro.REPLY_SIZE)

    def board_info(self, answer: Answer) -> Optional[BoardInfo]:
        """Return a board identity naming the error register read at the handshake.

        :raises NotABoard: if the register has a bit set that no Maestro defines
        """
        errors = maestro.decode_u16(answer.data)
        undefined = errors & ~maestro.ERRORS_DEFINED
        if undefined:
            raise NotABoard(f'Get Errors answered 0x{errors:04x} ({shown(answer.data)}), with '
                            f'bits 0x{undefined:04x} set that no Maestro has (only bits 0-8 '
                            'are defined)')
        return BoardInfo(0, self.channels, f'Pololu Maestro (errors 0x{errors:04x})')

    def _target(self, channel: int, pulse_us: int, move_s: float) -> bytes:
        previous = self._targets.get(channel)
        speed = maestro.speed_for_move(pulse_us - previous, move_s) if previous else 0
        data = b''
        if self._speeds.get(channel) != speed:
            data += maestro.encode_set_speed(channel, speed)
            self._speeds[channel] = speed
        self._targets[channel] = pulse_us
        return data + maestro.encode_set_target(channel, pulse_us)

    def pulses(self, pulses_us: Sequence[int], move_ms: int, enabled_mask: int,
               board_us: Sequence[Optional[int]]) -> list[Transaction]:
        """Return one write with the targets (and changed speeds) of enabled channels.

        A channel already at its target on the board is left out: it goes on with the move
        it has.
        """
        data = b''.join(self._target(ch, pulses_us[ch], move_ms / 1000.0)
                        for ch in mask_channels(enabled_mask, self.channels)
                        if pulses_us[ch] and pulses_us[ch] != board_us[ch])
        return [Transaction(data, AnswerKind.NONE)] if data else []

    def enable(self, mask: int, previous_mask: int,
               pulses_us: Sequence[int]) -> list[Transaction]:
        """Set target 0 (no pulses) on leaving channels, their target on joining ones."""
        data = b''
        for channel in mask_channels(previous_mask & ~mask, self.channels):
            data += maestro.encode_set_target(channel, 0)
            self._targets.pop(channel, None)
        for channel in mask_channels(mask & ~previous_mask, self.channels):
            data += self._target(channel, pulses_us[channel], 0.0)
        return [Transaction(data, AnswerKind.NONE)] if data else []

    def poll(self) -> list[Transaction]:
        """Return one Get Position per channel, each answered by two bytes.

        Asked one at a time, a pulse command arriving during a read waits for two bytes on
        the line at most, not for all of them (see the SSC-32U's ``poll``).
        """
        return [Transaction(maestro.encode_get_position(channel), AnswerKind.BYTES,
                            size=maestro.REPLY_SIZE) for channel in range(self.channels)]

    def positions(self, answers: Sequence[Answer], stamp_s: float) -> Optional[Positions]:
        """Return the positions rounded to whole µs; 0 (off) → None.

        None for the whole report if a position is beyond 14 bits (targets are two 7-bit
        halves, so no servo position is larger) or bytes nobody asked for arrived meanwhile.
        """
        garbled = self.take_garbled()
        if (len(answers) != self.channels
                or any(len(answer.data) != maestro.REPLY_SIZE for answer in answers)):
            return None
        quarters = [maestro.decode_u16(answer.data) for answer in answers]
        if garbled or any(q > maestro.DATA_MAX for q in quarters):
            return None
        pulses = tuple(round(q / maestro.QUARTERS_PER_US) or None for q in quarters)
        return Positions(pulses, 1.0, stamp_s)
