"""Bookkeeping of the link's I/O thread: desired state per setting, jobs, counters."""

import collections
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from fabrik_ros.servo_io.errors import BoardRefused
from fabrik_ros.servo_io.protocols.dialect import Answer, Transaction

RTT_SAMPLES = 1000


@dataclass
class Slot:
    """One setting the caller wants on the board, and how far the board has caught up.

    Every :meth:`set` bumps ``version``; the I/O thread records which version it ``taken`` to
    send, which one the board ``applied`` (acknowledged, or written where nothing is
    acknowledged) and which one it ``refused`` with a NACK.
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


@dataclass
class Job:
    """Transactions for one slot (or a position read) and what to do when all succeed."""

    name: str
    transactions: list[Transaction]
    done: Callable[[list[Answer]], None]
    slot: Optional[Slot] = None
    version: int = 0


@dataclass
class Counters:
    """Mutable counters behind :class:`~fabrik_ros.servo_io.link_options.LinkStats`."""

    frames_sent: int = 0
    bytes_sent: int = 0
    commands: int = 0
    coalesced: int = 0
    acks: int = 0
    nacks: int = 0
    retries: int = 0
    timeouts: int = 0
    reconnects: int = 0
    board_resets: int = 0
    rtts: collections.deque[float] = field(
        default_factory=lambda: collections.deque(maxlen=RTT_SAMPLES))
