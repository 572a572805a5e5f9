"""Shared receive side of the unframed protocols (SSC-32U, Maestro): answers by position."""

from typing import Optional

from fabrik_ros.servo_io.protocols.dialect import Answer, AnswerKind, Dialect, Transaction

_MAX_BUFFER = 4096       # bytes kept while no request waits; older ones are dropped


class RawDialect(Dialect):
    """Answers are recognised by size or by a CR terminator, in the order requests went out.

    The link asks for one answer at a time and calls :meth:`reset` after a reply timeout, so a
    late answer cannot be mistaken for the next one.
    """

    def __init__(self, channels: int) -> None:
        super().__init__(channels)
        self._buffer = bytearray()

    def reset(self) -> None:
        """Drop every byte received so far."""
        self.discard_input()

    def discard_input(self) -> None:
        """Drop every byte received so far."""
        self._buffer.clear()

    def feed(self, data: bytes) -> None:
        """Append received bytes, keeping only the newest ``_MAX_BUFFER``."""
        self._buffer += data
        del self._buffer[:-_MAX_BUFFER]

    def take_answer(self, transaction: Transaction) -> Optional[Answer]:
        """Return the next ``size`` bytes, or the next CR-terminated line, once complete."""
        if transaction.answer is AnswerKind.BYTES:
            size = transaction.size
        elif transaction.answer is AnswerKind.LINE:
            size = self._buffer.find(b'\r') + 1
        else:
            return Answer(b'')
        if size <= 0 or len(self._buffer) < size:
            return None
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return Answer(data)
