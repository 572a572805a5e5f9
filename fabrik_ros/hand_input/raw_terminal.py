"""The terminal a keyboard jog reads: keys one at a time, unechoed, restored however it ends.

:class:`RawTerminal` turns off line buffering and echo (``ICANON``, ``ECHO``) on a terminal
and gives back exactly the settings it found, once, from :meth:`RawTerminal.restore` (call it
on every way out: quit, SIGINT, SIGTERM, an exception). ``ISIG`` stays on, so Ctrl-C still
raises SIGINT and the program's own stop handling runs. Output processing stays on too: log
lines keep their line breaks. Escape sequences (arrow and function keys) are dropped whole, so
their letters (the ``A`` of ``ESC [ A``) are never read as keys.
"""

import os
import re
import select
import termios
from typing import Optional

# ESC [ params final (CSI), ESC O final (SS3), or ESC and one other char.
_ESCAPE = re.compile(r'\x1b(\[[0-9;?]*[@-~]?|O.?|.?)', re.DOTALL)
_READ_BYTES = 256


class NotATerminalError(ValueError):
    """The file descriptor is not a terminal: there are no keys to read."""


class RawTerminal:
    """One terminal in key-at-a-time mode (see the module docstring).

    :param fd: the terminal's file descriptor (stdin's, 0, for a program)
    :raises NotATerminalError: if ``fd`` is not a terminal
    """

    def __init__(self, fd: int) -> None:
        if not os.isatty(fd):
            raise NotATerminalError(
                f'file descriptor {fd} is not a terminal: the keyboard jog reads keys from '
                'one (run it in a terminal window, not from a launch file, a pipe or a '
                'service)')
        self._fd = fd
        self._saved: Optional[list] = None
        self.closed = False

    def enter(self) -> None:
        """Switch to key-at-a-time, unechoed input (the settings found are kept)."""
        saved = termios.tcgetattr(self._fd)
        raw = termios.tcgetattr(self._fd)
        raw[3] &= ~(termios.ICANON | termios.ECHO)
        raw[6][termios.VMIN], raw[6][termios.VTIME] = 1, 0
        termios.tcsetattr(self._fd, termios.TCSADRAIN, raw)
        self._saved = saved

    def restore(self) -> None:
        """Give the terminal back its settings as found (once; later calls do nothing)."""
        saved, self._saved = self._saved, None
        if saved is not None:
            try:
                termios.tcsetattr(self._fd, termios.TCSADRAIN, saved)
            except termios.error:       # the terminal went away (its window closed)
                pass

    def read_keys(self) -> str:
        """Return the keys typed since the last call, without waiting ('' if none).

        Sets :attr:`closed` when the terminal hung up (end of file).
        """
        text = ''
        while not self.closed and select.select([self._fd], [], [], 0.0)[0]:
            try:
                chunk = os.read(self._fd, _READ_BYTES)
            except OSError:             # EIO: the terminal's other end closed
                chunk = b''
            if not chunk:
                self.closed = True
                break
            text += chunk.decode('utf-8', errors='replace')
        return keys_of(text)


def keys_of(text: str) -> str:
    r"""Return ``text`` without its escape sequences.

    >>> keys_of('w\x1b[Aa\x1bOBd\x1b')
    'wad'
    """
    return _ESCAPE.sub('', text)
