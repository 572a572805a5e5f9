"""Simulated Lynxmotion SSC-32U: group moves, ``Q``, ``QP``, ``VER`` (see ``ssc32.py``)."""

import math

from fabrik_ros.boardsim.board_firmware import SimFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io.protocols import ssc32


class Ssc32Firmware(SimFirmware):
    """Parse command lines; answer queries; move groups so that all channels end together.

    Pulses outside 500..2500 µs are clamped to that range (what the board does), ``P0`` stops
    a channel, and a channel the board has not positioned yet jumps to its first target.
    """

    def __init__(self, model: ServoModel, firmware: str) -> None:
        super().__init__(model, firmware)
        self._decoder = ssc32.Ssc32CommandDecoder()

    def tick(self, now_s: float) -> None:
        """Do nothing: the board has no timers that act on their own."""

    def receive(self, data: bytes, now_s: float) -> bytes:
        """Handle every complete line and return the answers to queries."""
        replies = b''
        for command in self._decoder.feed(data):
            if isinstance(command, ssc32.GroupMove):
                self._group_move(command, now_s)
            elif isinstance(command, ssc32.QueryMovement):
                moving = self.model.moving(now_s)
                replies += bytes((ssc32.MOVE_IN_PROGRESS if moving else ssc32.MOVE_DONE,))
            elif isinstance(command, ssc32.QueryPulseWidths):
                outputs = self.model.outputs(now_s)
                replies += ssc32.encode_pulse_width_answer(
                    [outputs[ch] if ch < self.model.channels else 0 for ch in command.channels])
            elif isinstance(command, ssc32.Version):
                replies += self.firmware.encode('ascii') + ssc32.CR
        return replies

    def _group_move(self, command: ssc32.GroupMove, now_s: float) -> None:
        moves = [move for move in command.moves if move.channel < self.model.channels]
        for move in moves:
            if move.pulse_us == 0:
                self.model.stop(move.channel)
        moves = [move for move in moves if move.pulse_us]
        targets = {move.channel: min(max(move.pulse_us, ssc32.PULSE_MIN_US), ssc32.PULSE_MAX_US)
                   for move in moves}
        duration_s = (command.time_ms or 0) / 1000.0
        for move in moves:
            if move.speed_us_per_s:
                distance = abs(targets[move.channel] - self.model.position(move.channel, now_s))
                duration_s = max(duration_s, distance / move.speed_us_per_s)
        for channel, target in targets.items():
            distance = abs(target - self.model.position(channel, now_s))
            rate = distance / duration_s if duration_s > 0 else math.inf
            self.model.move(channel, target, now_s, rate)
            self.model.enabled_mask |= 1 << channel
