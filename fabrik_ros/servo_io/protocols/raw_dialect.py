"""Shared receive side of the unframed protocols (SSC-32U, Maestro): answers by position."""

from typing import Optional

from fabrik_ros.servo_io.protocols.dialect import Answer, AnswerKind, Dialect, Transaction

_MAX_BUFFER = 4096       # bytes kept while no request waits; older ones are dropped
MAX_LINE = 64            # a text answer without CR by then is no answer either board sends


class RawDialect(Dialect):
    """Answers are recognised by size or by a CR terminator, in the order requests went out.

    The link asks for one answer at a time and calls :meth:`discard_input` after a reply
    timeout, so a late answer cannot be mistaken for the next one. Neither board sends
    anything it was not asked for, so bytes still buffered once an answer is complete are
    unrequested: they are dropped (the next answer must not start with them), kept for
    :meth:`take_unrequested`, and make the positions of the poll they fell in
    unknown.
    """

    unframed = True

    def __init__(self, channels: int) -> None:
        super().__init__(channels)
        self._buffer = bytearray()
        self._unrequested = bytearray()
        self._garbled = False       # unrequested bytes since the last positions()

    def reset(self) -> None:
        """Drop every byte received so far, and the record of unrequested ones."""
        self.discard_input()
        self._unrequested.clear()
        self._garbled = False

    def discard_input(self) -> None:
        """Drop every byte received so far."""
        self._buffer.clear()

    def feed(self, data: bytes) -> None:
        """Append received bytes, keeping only the newest ``_MAX_BUFFER``."""
        self._buffer += data
        del self._buffer[:-_MAX_BUFFER]

    def take_answer(self, transaction: Transaction) -> Optional[Answer]:
        """Return the next ``size`` bytes, or the next CR-terminated line, once complete.

        A line is cut at ``MAX_LINE`` bytes: no answer of these boards is longer, so what
        would follow is not waited for.
        """
        if transaction.answer is AnswerKind.BYTES:
            size = transaction.size
        elif transaction.answer is AnswerKind.LINE:
            end = self._buffer.find(b'\r', 0, MAX_LINE)
            size = end + 1 if end >= 0 else (MAX_LINE if len(self._buffer) >= MAX_LINE else 0)
        else:
            return Answer(b'')
        if size <= 0 or len(self._buffer) < size:
            return None
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        self._note_unrequested(self._buffer)
        self._buffer.clear()
        return Answer(data)

    def take_unrequested(self) -> bytes:
        """Return the bytes no request asked for since the last call (the first 4096); drop them.

        Called while no request waits, so whatever is buffered counts too.
        """
        self._note_unrequested(self._buffer)
        self._buffer.clear()
        sample = bytes(self._unrequested)
        self._unrequested.clear()
        return sample

    def take_garbled(self) -> bool:
        """Return True if unrequested bytes arrived since the last call (for positions())."""
        garbled, self._garbled = self._garbled, False
        return garbled

    def _note_unrequested(self, data: bytearray) -> None:
        if not data:
            return
        self._garbled = True
        self._unrequested += data[:_MAX_BUFFER - len(self._unrequested)]
