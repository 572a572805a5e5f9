"""Simulated Pololu Maestro answering the compact protocol (see ``maestro.py``)."""

import math

from fabrik_ros.boardsim.board_firmware import SimFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io.protocols import maestro
from fabrik_ros.servo_io.protocols.maestro import MaestroCommand, MaestroError

_US_PER_S_PER_SPEED_UNIT = 0.25 / 0.010   # one speed unit is 0.25 µs per 10 ms


class MaestroFirmware(SimFirmware):
    """Targets, speeds and read-backs; protocol errors are flagged as the Maestro does.

    Targets are clamped into the channel limits (the Maestro's per-channel min/max setting);
    acceleration is stored but not modelled. Go Home stops every channel ("Off" home mode).
    """

    def __init__(self, model: ServoModel, firmware: str) -> None:
        super().__init__(model, firmware)
        self._decoder = maestro.MaestroCommandDecoder()
        self._seen_protocol_errors = 0
        self.errors = MaestroError(0)
        self.speeds: dict[int, int] = {}
        self.accelerations: dict[int, int] = {}

    def tick(self, now_s: float) -> None:
        """Do nothing: the board has no timers that act on their own."""

    def receive(self, data: bytes, now_s: float) -> bytes:
        """Handle every complete packet and return the answers to Get commands."""
        replies = b''
        for byte in data:      # byte by byte, so an error is flagged before the next packet
            commands = self._decoder.feed(bytes((byte,)))
            if self._decoder.protocol_errors != self._seen_protocol_errors:
                self._seen_protocol_errors = self._decoder.protocol_errors
                self.errors |= MaestroError.SERIAL_PROTOCOL
            for command in commands:
                if command.channel is not None and command.channel >= self.model.channels:
                    self.errors |= MaestroError.SERIAL_PROTOCOL
                    continue
                replies += self._handle(command, now_s)
        return replies

    def _handle(self, command: MaestroCommand, now_s: float) -> bytes:
        # The decoder gives a channel to exactly the commands that address one.
        if command.channel is None:
            return self._handle_board(command.command)
        return self._handle_channel(command.command, command.channel, command.values, now_s)

    def _handle_board(self, code: int) -> bytes:
        """Answer a command for the whole board: Get Errors or Go Home."""
        if code == maestro.GET_ERRORS:
            errors, self.errors = self.errors, MaestroError(0)
            return maestro.encode_u16(int(errors))
        if code == maestro.GO_HOME:
            for ch in range(self.model.channels):
                self.model.stop(ch)
        return b''

    def _handle_channel(self, code: int, channel: int, values: tuple[int, ...],
                        now_s: float) -> bytes:
        """Answer a command for ``channel`` (the first one, for Set Multiple Targets)."""
        if code == maestro.SET_TARGET:
            self._target(channel, values[0], now_s)
        elif code == maestro.SET_MULTIPLE_TARGETS:
            for offset, target in enumerate(values):
                if channel + offset < self.model.channels:
                    self._target(channel + offset, target, now_s)
        elif code == maestro.SET_SPEED:
            self.speeds[channel] = values[0]
        elif code == maestro.SET_ACCELERATION:
            self.accelerations[channel] = values[0]
        elif code == maestro.GET_POSITION:
            return maestro.encode_u16(round(self.model.outputs(now_s)[channel] * 4))
        return b''

    def _target(self, channel: int, quarters: int, now_s: float) -> None:
        if quarters == 0:
            self.model.stop(channel)
            return
        low, high = self.model.limits[channel]
        target = min(max(round(quarters / maestro.QUARTERS_PER_US), low), high)
        speed = self.speeds.get(channel, 0)
        rate = speed * _US_PER_S_PER_SPEED_UNIT if speed else math.inf
        self.model.move(channel, target, now_s, rate)
        self.model.enabled_mask |= 1 << channel
