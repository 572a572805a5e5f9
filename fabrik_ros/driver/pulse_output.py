"""The servos of a PWM board (native, ssc32, maestro) as a :class:`ServoOutput`, in µs."""

from collections.abc import Callable, Sequence
import time
from typing import Optional

from fabrik_ros.driver.board_layout import BoardLayout
from fabrik_ros.driver.link_output import LinkOutput
from fabrik_ros.driver.servo_output import (
    servo_addresses,
    ServoHealth,
    ServoReport,
    ServoUnit,
)
from fabrik_ros.kinematics import Arm
from fabrik_ros.servo_io.link import ServoLink
from fabrik_ros.servo_io.link_options import LinkOptions, MOVE_MAX_S
from fabrik_ros.servo_io.protocols.dialect import Protocol
from fabrik_ros.servo_io.serial_port import open_serial, SerialFactory

_REPORT_PERIODS = 3.0       # a report older than this many poll periods is no longer current


class PulseOutput(LinkOutput[ServoLink]):
    """Drive the arm's servos through a :class:`ServoLink` on the channels of a layout.

    ``link`` and ``layout`` are public for what only a PWM board has (its watchdog, its pulse
    frame, the calibration jog by pulse width).

    :param path: the board's serial port
    :param arm: the arm (its servo map gives the channels and pulse ranges)
    :param options: the link's settings (baud, poll rate, ...)
    :param clock: the monotonic clock of the link and of :meth:`report` [s]
    """

    unit: ServoUnit = 'us'

    def __init__(self, path: str, arm: Arm, *, protocol: Protocol,
                 options: LinkOptions, clock: Callable[[], float] = time.monotonic,
                 serial_factory: SerialFactory = open_serial) -> None:
        super().__init__(clock)
        self.layout = BoardLayout.of(arm)
        self._addresses = servo_addresses(arm.servo_map)
        self._poll_hz = options.poll_hz
        self.link = ServoLink(path, protocol=protocol, channels=self.layout.channels,
                              options=options, serial_factory=serial_factory, clock=clock,
                              on_state=self._on_state)
        self.link.set_limits(self.layout.limits_us)

    @property
    def board_name(self) -> str:
        """Return the firmware the board announced, '' before it did."""
        board = self.link.board
        return board.firmware if board is not None else ''

    def send(self, units: Sequence[float], move_s: float) -> None:
        """Set every servo's pulse [µs, servo order], whole µs within its channel's limits."""
        pulses = [0] * self.layout.channels
        for channel, pulse in zip(self._addresses, units, strict=True):
            low, high = self.layout.limits_us[channel]
            pulses[channel] = min(max(round(float(pulse)), low), high)
        self.link.set_pulses(pulses, min(max(move_s, 0.0), MOVE_MAX_S))

    def attach(self, on: bool) -> None:
        """Make the arm's channels pulse, or stop every channel."""
        self.link.enable(self.layout.enable_mask if on else 0)

    def report(self, now_s: float) -> Optional[ServoReport]:
        """Return the pulses the board reported since it connected, within three polls."""
        positions = self.link.positions()
        if (positions is None or self._poll_hz <= 0.0
                or now_s - positions.stamp_s > _REPORT_PERIODS / self._poll_hz
                or positions.stamp_s < self._connected_at
                or len(positions.pulses_us) < self.layout.channels):
            return None
        units = tuple(_as_float(positions.pulses_us[c]) for c in self._addresses)
        return ServoReport(units, positions.resolution_us, positions.stamp_s)

    def torque_limit(self, servo: int, fraction: Optional[float]) -> bool:
        """Return False: a PWM servo has no torque limit to set."""
        return False

    def limp(self, servo: int, limp: bool) -> bool:
        """Return False: a PWM board detaches every channel at once or none."""
        return False

    def temperatures(self) -> tuple[Optional[float], ...]:
        """Return (): a PWM servo reports no temperature."""
        return ()

    def effort(self, servo: int, now_s: float) -> Optional[float]:
        """Return None: a PWM servo reports no load."""
        return None

    def release(self, *, detach: bool) -> None:
        """Stop the pulses (``detach``), else switch the board's watchdog off so it holds."""
        if detach:
            self.link.detach()
        elif self.link.capabilities.watchdog:
            self.link.set_watchdog(0.0)

    def sync(self, timeout_s: float) -> None:
        """Wait until the board has everything set so far (see :meth:`ServoLink.sync`)."""
        self.link.sync(timeout_s)

    def close(self) -> None:
        """Close the link."""
        self.link.close()

    def link_values(self) -> dict[str, object]:
        """Return the port, the board and the link's counters for /diagnostics."""
        link, stats = self.link, self.link.stats()
        return {
            'port': link.path, 'protocol': link.protocol.value, 'state': link.state.value,
            'board': self.board_name,
            'reconnects': stats.reconnects, 'nacks': stats.nacks, 'timeouts': stats.timeouts,
            'retries': stats.retries, 'commands': stats.commands,
            'coalesced': stats.coalesced, 'board resets': stats.board_resets,
            'round trip median [ms]': _ms(stats.rtt_median_s),
            'round trip p99 [ms]': _ms(stats.rtt_p99_s)}

    def health(self) -> tuple[ServoHealth, ...]:
        """Return nothing: a PWM servo reports no condition of its own."""
        return ()


def _as_float(pulse_us: Optional[int]) -> Optional[float]:
    return None if pulse_us is None else float(pulse_us)


def _ms(seconds: Optional[float]) -> object:
    return '' if seconds is None else 1e3 * seconds
