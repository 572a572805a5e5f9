"""One setting the link keeps on the board: its desired value and how far the board has it."""

from dataclasses import dataclass
from typing import Any, Optional

from fabrik_ros.servo_io.errors import BoardRefused


@dataclass
class Slot:
    """One setting the caller wants on the board, and how far the board has caught up.

    Every :meth:`set` bumps ``version``; the scheduler records which version it has ``taken``
    to send (the newest on its way), which one the board ``applied`` (acknowledged, or written
    where nothing is acknowledged) and which one it ``refused`` with a NACK.
    """

    value: Any
    version: int = 0
    taken: int = 0
    applied: int = 0
    refused: int = 0
    error: Optional[BoardRefused] = None

    def set(self, value: Any) -> None:
        """Store a new desired value."""
        self.value = value
        self.version += 1

    def dirty(self) -> bool:
        """Return True while the board has neither applied nor refused the latest value."""
        return self.version > max(self.applied, self.refused)

    def unsent(self) -> bool:
        """Return True if the latest value has not even been handed to the I/O thread."""
        return self.dirty() and self.version > self.taken

    def forget_board(self, always: bool = False) -> None:
        """Mark the value as missing on the board (after a reconnect or a board reset).

        A value never set is left alone unless ``always``: the board's reset default holds.
        """
        if self.version or always:
            self.taken = self.applied = self.refused = -1
