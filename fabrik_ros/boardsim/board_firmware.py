"""What every simulated board firmware provides to :class:`~.board.SimBoard`."""

import abc

from fabrik_ros.boardsim.servo_model import ServoModel


class SimFirmware(abc.ABC):
    """Turn received bytes into servo changes and reply bytes; pure, time passed in [s]."""

    def __init__(self, model: ServoModel, firmware: str) -> None:
        self.model = model
        self.firmware = firmware

    def boot(self, now_s: float) -> bytes:
        """Return what the board sends once it has started (nothing by default)."""
        return b''

    @abc.abstractmethod
    def receive(self, data: bytes, now_s: float) -> bytes:
        """Handle bytes from the host and return the bytes to answer."""

    @abc.abstractmethod
    def tick(self, now_s: float) -> None:
        """Run time-driven behaviour such as a watchdog."""
