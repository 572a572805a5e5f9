"""Simulated firmware speaking the board protocol exactly as hardware/PROTOCOL.md says."""

from collections.abc import Callable
import struct
from typing import Optional

from fabrik_ros.boardsim.board_firmware import SimFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.native import (
    BoardInfo,
    Command,
    CorruptFrame,
    Frame,
    NackError,
    PositionReport,
    WatchdogAction,
)


class _NackError(Exception):
    """Raised inside a handler to answer NACK with ``error``; never leaves this module."""

    def __init__(self, error: NackError) -> None:
        super().__init__(error.name)
        self.error = error


class NativeFirmware(SimFirmware):
    """Answer every frame with ACK, NACK or DATA; host-silence watchdog; READY at boot.

    ``frame_us`` is the pulse frame SET_FRAME chose (0 = slotted 20 ms); the servo model has no
    pulse timing, so it is kept only to enforce SET_FRAME's and SET_LIMITS's rules and to be read.
    """

    def __init__(self, model: ServoModel, firmware: str) -> None:
        super().__init__(model, firmware)
        self._decoder = native.FrameDecoder()
        self.timeout_s = 0.0
        self.action = WatchdogAction.HOLD
        self._last_valid_s = 0.0
        self.watchdog_fired = False
        self.frame_us = native.FRAME_SLOTTED
        self._handlers: dict[int, Callable[[bytes, float], Optional[bytes]]] = {
            Command.PING: self._ping, Command.SET_PULSES: self._set_pulses,
            Command.SET_LIMITS: self._set_limits, Command.GET_POSITIONS: self._get_positions,
            Command.ENABLE: self._enable, Command.SET_TIMEOUT: self._set_timeout,
            Command.SET_FRAME: self._set_frame}

    @property
    def info(self) -> BoardInfo:
        """Return the identity PING and READY report."""
        return BoardInfo(native.PROTOCOL_VERSION, self.model.channels, self.firmware)

    def boot(self, now_s: float) -> bytes:
        """Return the READY frame."""
        self._last_valid_s = now_s
        return native.encode_ready(self.info)

    def receive(self, data: bytes, now_s: float) -> bytes:
        """Decode frames and answer each; a CRC failure is answered NACK BAD_CRC."""
        replies = b''
        for item in self._decoder.feed(data):
            if isinstance(item, CorruptFrame):
                replies += native.encode_nack(item.seq, item.cmd, NackError.BAD_CRC)
            else:
                self._last_valid_s = now_s
                self.watchdog_fired = False
                replies += self._answer(item, now_s)
        return replies

    def _answer(self, frame: Frame, now_s: float) -> bytes:
        handler = self._handlers.get(frame.cmd)
        try:
            if handler is None:
                raise _NackError(NackError.UNKNOWN_CMD)
            data = handler(frame.payload, now_s)
        except _NackError as nack:
            return native.encode_nack(frame.seq, frame.cmd, nack.error)
        if data is None:
            return native.encode_ack(frame.seq, frame.cmd)
        return native.encode_data(frame.seq, frame.cmd, data)

    def tick(self, now_s: float) -> None:
        """Act once when the host has been silent for the watchdog timeout."""
        if self.timeout_s <= 0 or self.watchdog_fired:
            return
        if now_s - self._last_valid_s >= self.timeout_s:
            self.watchdog_fired = True
            if self.action is WatchdogAction.HOLD:
                self.model.hold(now_s)
            else:
                self.model.enabled_mask = 0

    def _channel_count(self, payload: bytes, header: int, item: int) -> int:
        """Return k for a payload of ``header`` bytes plus k items; NACK on a bad length."""
        body = len(payload) - header
        if body < item or body % item:
            raise _NackError(NackError.BAD_LENGTH)
        if body // item > self.model.channels:
            raise _NackError(NackError.BAD_CHANNEL)
        return body // item

    def _ping(self, payload: bytes, now_s: float) -> Optional[bytes]:
        if payload:
            raise _NackError(NackError.BAD_LENGTH)
        return native.board_info_bytes(self.info)

    def _set_pulses(self, payload: bytes, now_s: float) -> Optional[bytes]:
        count = self._channel_count(payload, 2, 2)
        move_ms, *pulses = struct.unpack(f'<H{count}H', payload)
        for channel, pulse in enumerate(pulses):
            if pulse and not self.model.in_limits(channel, pulse):
                raise _NackError(NackError.OUT_OF_RANGE)
        # One move clock for all channels: a channel given 0 keeps its target but restarts
        # from where it is, so it too arrives when the new move ends (PROTOCOL.md).
        targets = [pulse or self.model.target(ch) for ch, pulse in enumerate(pulses)]
        targets += [self.model.target(ch) for ch in range(count, self.model.channels)]
        self.model.move_over(targets, move_ms / 1000.0, now_s)
        return None

    def _set_limits(self, payload: bytes, now_s: float) -> Optional[bytes]:
        count = self._channel_count(payload, 0, 4)
        values = struct.unpack(f'<{2 * count}H', payload)
        pairs = list(zip(values[0::2], values[1::2], strict=True))
        for low, high in pairs:
            if not native.PULSE_MIN_US <= low < high <= native.PULSE_MAX_US:
                raise _NackError(NackError.OUT_OF_RANGE)
            if not self._frame_holds(self.frame_us, high):
                raise _NackError(NackError.OUT_OF_RANGE)
        self.model.set_limits(pairs, now_s)
        return None

    def _get_positions(self, payload: bytes, now_s: float) -> Optional[bytes]:
        if payload:
            raise _NackError(NackError.BAD_LENGTH)
        report = PositionReport(self.model.enabled_mask, tuple(self.model.positions(now_s)))
        return native.position_bytes(report)

    def _enable(self, payload: bytes, now_s: float) -> Optional[bytes]:
        if len(payload) != 1:
            raise _NackError(NackError.BAD_LENGTH)
        mask = payload[0]
        if mask >> self.model.channels:
            raise _NackError(NackError.BAD_CHANNEL)
        if any(mask >> ch & 1 and not self.model.target(ch) for ch in range(self.model.channels)):
            raise _NackError(NackError.NO_TARGET)
        self.model.enabled_mask = mask
        return None

    def _set_timeout(self, payload: bytes, now_s: float) -> Optional[bytes]:
        if len(payload) != 3:
            raise _NackError(NackError.BAD_LENGTH)
        timeout_ms, action = struct.unpack('<HB', payload)
        if action not in (WatchdogAction.HOLD, WatchdogAction.DETACH):
            raise _NackError(NackError.OUT_OF_RANGE)
        self.timeout_s = timeout_ms / 1000.0
        self.action = WatchdogAction(action)
        self.watchdog_fired = False
        return None

    @staticmethod
    def _frame_holds(frame_us: int, max_us: int) -> bool:
        """Whether a frame leaves the pin low for the gap after a pulse of ``max_us``."""
        return frame_us == native.FRAME_SLOTTED or max_us + native.FRAME_GAP_US <= frame_us

    def _set_frame(self, payload: bytes, now_s: float) -> Optional[bytes]:
        frame_us = native.parse_set_frame(payload)
        if frame_us is None:
            raise _NackError(NackError.BAD_LENGTH)
        if frame_us > native.FRAME_MAX_US or not all(
                self._frame_holds(frame_us, high) for _, high in self.model.limits):
            raise _NackError(NackError.OUT_OF_RANGE)
        self.frame_us = frame_us
        return None
