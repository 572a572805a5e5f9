"""One open serial port, with pyserial's failures translated into the link's exceptions."""

from collections.abc import Callable
import os
import select
import threading
from typing import Any, Optional

import serial

from fabrik_ros.servo_io.errors import LinkLost, LinkTimeout

SerialFactory = Callable[[str, int, float], Any]
# Longest a read blocks on a port that cannot be waited on in select (a pyserial URL, a
# stand-in): bounds how late such a port's caller notices a deadline or a wake().
READ_SLICE_S = 0.01


def open_serial(path: str, baud: int, write_timeout_s: float) -> serial.SerialBase:
    """Open ``path`` (a device, a symlink to one, or a pyserial URL such as ``loop://``)."""
    return serial.serial_for_url(path, baudrate=baud, timeout=READ_SLICE_S,
                                 write_timeout=write_timeout_s)


def is_url(path: str) -> bool:
    """Return True for a pyserial URL (``loop://``, ``socket://...``), which is not a file."""
    return '://' in path


class SerialPort:
    """Read, write and close one port; every failure becomes :class:`LinkLost` or a timeout.

    A read that finds nothing returns ``b''`` (a timeout is normal while waiting); a write that
    blocks past its timeout raises :class:`LinkTimeout`; a vanished device raises
    :class:`LinkLost`. Opening with DTR asserted resets an Arduino, as the IDE's monitor does.

    A device port (pyserial's on POSIX) is waited on in ``select`` together with the pipe its
    ``cancel_read`` writes to, as long as the caller asks: an idle link thread sleeps until
    its next deadline, and bytes or :meth:`wake` end the wait. Any other port is read in
    slices of ``READ_SLICE_S``.
    """

    def __init__(self, path: str, port: Any, write_timeout_s: float) -> None:
        self.path = path
        self._port = port
        self._write_timeout_s = write_timeout_s
        self._wait_set = _wait_set(port)

    @classmethod
    def open(cls, path: str, factory: SerialFactory, baud: int,
             write_timeout_s: float) -> 'SerialPort':
        """Open ``path`` through ``factory``.

        :raises LinkLost: if the path does not exist or the device cannot be opened.
        """
        if not is_url(path) and not os.path.exists(path):
            raise LinkLost(f'{path}: no such device (unplugged?)')
        try:
            return cls(path, factory(path, baud, write_timeout_s), write_timeout_s)
        except (serial.SerialException, OSError) as error:
            raise LinkLost(f'{path}: cannot open: {error}') from error

    def read(self, max_wait_s: float, idle: threading.Event) -> bytes:
        """Return what has arrived, waiting up to ``max_wait_s`` for it.

        :meth:`wake` ends the wait. On a port that cannot be waited on in select, a wait
        lasts at most one read slice, and one shorter than a slice sleeps on ``idle``
        instead, so that setting ``idle`` ends it too.

        :raises LinkLost: if the device reports an error (unplugged, EIO).
        """
        try:
            waiting = self._port.in_waiting
            if waiting:
                return bytes(self._port.read(waiting))
            if self._wait_set is not None:
                if max_wait_s > 0.0 and self._readable(max_wait_s, *self._wait_set):
                    # A gone device is readable and reads nothing: pyserial's read says so.
                    return bytes(self._port.read(max(1, self._port.in_waiting)))
                return b''
            if max_wait_s >= READ_SLICE_S:
                return bytes(self._port.read(1))
        except serial.SerialException as error:
            raise LinkLost(f'{self.path}: read failed (unplugged?): {error}') from error
        except (OSError, ValueError) as error:     # ValueError: a port closed meanwhile
            raise LinkLost(f'{self.path}: read failed: {error}') from error
        idle.wait(max_wait_s)
        return b''

    @staticmethod
    def _readable(max_wait_s: float, fd: int, abort_fd: int) -> bool:
        """Wait up to ``max_wait_s`` for bytes on ``fd`` or a wake-up; True if bytes came."""
        ready, _, _ = select.select([fd, abort_fd], [], [], max_wait_s)
        if abort_fd in ready:
            os.read(abort_fd, 1000)      # the wake-ups so far: each ends one wait
        return fd in ready

    def write(self, data: bytes) -> None:
        """Write all of ``data``.

        :raises LinkTimeout: if the write blocks longer than the write timeout.
        :raises LinkLost: if the device reports an error.
        """
        try:
            self._port.write(data)
        except serial.SerialTimeoutException as error:
            raise LinkTimeout(f'{self.path}: write of {len(data)} bytes blocked longer than '
                              f'{self._write_timeout_s} s') from error
        except (serial.SerialException, OSError) as error:
            raise LinkLost(f'{self.path}: write failed (unplugged?): {error}') from error

    def output_queued(self) -> bool:
        """Return True unless the OS holds no bytes of earlier writes for the line.

        A port that cannot tell (a pyserial URL without the count) counts as empty; one whose
        count fails counts as busy, and its next read or write reports the failure.
        """
        try:
            return bool(getattr(self._port, 'out_waiting', 0))
        except (serial.SerialException, OSError):
            return True

    def wake(self) -> None:
        """Make a read in progress in another thread return at once (if the port can)."""
        cancel = getattr(self._port, 'cancel_read', None)
        if cancel is not None:
            try:
                cancel()
            except (OSError, TypeError, ValueError):
                pass     # the port is closing; the reading thread notices on its own

    def close(self) -> None:
        """Close the port, ignoring a device that is already gone."""
        try:
            self._port.close()
        except (serial.SerialException, OSError):
            pass         # nothing left to release


def _wait_set(port: Any) -> Optional[tuple[int, int]]:
    """Return the port's descriptor and the read end of its cancel_read pipe, if it has both."""
    try:
        fd, abort_fd = port.fileno(), port.pipe_abort_read_r
    except (AttributeError, OSError, ValueError, serial.SerialException):
        return None
    if isinstance(fd, int) and isinstance(abort_fd, int):
        return fd, abort_fd
    return None
