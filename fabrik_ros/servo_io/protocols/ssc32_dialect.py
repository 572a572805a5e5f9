"""The link's view of the Lynxmotion SSC-32U (see ``ssc32.py`` for the manual's formats)."""

from collections.abc import Sequence
from typing import Optional

from fabrik_ros.servo_io.device_bytes import shown
from fabrik_ros.servo_io.errors import NotABoard
from fabrik_ros.servo_io.protocols import ssc32
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


def _send(data: bytes) -> Transaction:
    return Transaction(data, AnswerKind.NONE)


class Ssc32Dialect(RawDialect):
    """Group moves with ``T``; pulses read back with ``QP``; no acknowledgements.

    Only enabled channels are sent targets, because on the SSC-32U a target starts the pulses
    and ``P0`` stops them. A channel's first move after a (re)connect or a stop goes without
    ``T``: the board ignores timing until it knows where the servo is.
    """

    capabilities = Capabilities(acknowledged=False, board_limits=False, watchdog=False,
                                pulse_range_us=(ssc32.PULSE_MIN_US, ssc32.PULSE_MAX_US))
    board_name = 'SSC-32U'
    board_channels = ssc32.CHANNELS
    likely_causes = (f'the wrong baud rate (an SSC-32U ships at {ssc32.FACTORY_BAUD} baud: '
                     f'baud:={ssc32.FACTORY_BAUD}, or set the board to the one used), no VL '
                     'power on the board, or another device on the port')

    def __init__(self, channels: int) -> None:
        super().__init__(channels)
        self._positioned: set[int] = set()

    def reset(self) -> None:
        """Forget which channels the board has positioned, and buffered bytes."""
        super().reset()
        self._positioned.clear()

    def handshake(self) -> Transaction:
        """Return ``VER``."""
        return Transaction(ssc32.encode_version(), AnswerKind.LINE)

    def board_info(self, answer: Answer) -> Optional[BoardInfo]:
        """Return the version text as the firmware name (protocol version 0 = not native).

        :raises NotABoard: if the answer is not a version line (see ``ssc32.decode_version``)
        """
        version = ssc32.decode_version(answer.data)
        if version is None:
            raise NotABoard(f'VER answered {shown(answer.data)}, not a version line like '
                            f'{ssc32.VERSION_EXAMPLE!r}')
        return BoardInfo(0, self.channels, version)

    def pulses(self, pulses_us: Sequence[int], move_ms: int, enabled_mask: int,
               board_us: Sequence[Optional[int]]) -> list[Transaction]:
        """Return at most two group moves: unpositioned channels without T, the rest with T.

        A positioned channel already at its target on the board is left out: it goes on with
        the move it has.
        """
        moving = {ch: pulses_us[ch] for ch in mask_channels(enabled_mask, self.channels)
                  if pulses_us[ch]}
        first = {ch: pulse for ch, pulse in moving.items() if ch not in self._positioned}
        timed = {ch: pulse for ch, pulse in moving.items()
                 if ch in self._positioned and pulse != board_us[ch]}
        transactions = []
        if first:
            transactions.append(_send(ssc32.encode_group_move(first)))
            self._positioned.update(first)
        if timed:
            transactions.append(_send(ssc32.encode_group_move(timed, time_ms=move_ms)))
        return transactions

    def enable(self, mask: int, previous_mask: int,
               pulses_us: Sequence[int]) -> list[Transaction]:
        """Stop channels leaving ``mask`` (``P0``); position channels joining it at once."""
        stopping = mask_channels(previous_mask & ~mask, self.channels)
        starting = {ch: pulses_us[ch] for ch in mask_channels(mask & ~previous_mask,
                                                              self.channels)}
        transactions = []
        if stopping:
            transactions.append(_send(ssc32.encode_stop_pulses(stopping)))
            self._positioned.difference_update(stopping)
        if starting:
            transactions.append(_send(ssc32.encode_group_move(starting)))
            self._positioned.update(starting)
        return transactions

    def poll(self) -> list[Transaction]:
        """Return one ``QP`` line per channel, each answered by one byte.

        One line naming every channel would hold the line for 16 bytes (1.4 ms at 115200
        baud) and a pulse command arriving meanwhile with it; separate lines let pulse
        commands go out between them, so a read delays one by a single ``QP`` line at most.
        """
        return [Transaction(ssc32.encode_query_pulse_widths([channel]), AnswerKind.BYTES,
                            size=1) for channel in range(self.channels)]

    def positions(self, answers: Sequence[Answer], stamp_s: float) -> Optional[Positions]:
        """Return the pulse widths (10 µs resolution); 0 (not pulsing) → None.

        None for the whole report if a width is outside 500..2500 µs (the board drives no
        other) or bytes nobody asked for arrived meanwhile.
        """
        garbled = self.take_garbled()
        if len(answers) != self.channels or any(len(answer.data) != 1 for answer in answers):
            return None
        pulses = ssc32.decode_pulse_widths(b''.join(answer.data for answer in answers))
        low, high = self.capabilities.pulse_range_us
        if garbled or not all(pulse == 0 or low <= pulse <= high for pulse in pulses):
            return None
        return Positions(tuple(pulse or None for pulse in pulses), 10.0, stamp_s)
