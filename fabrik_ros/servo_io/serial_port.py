"""One open serial port, with pyserial's failures translated into the link's exceptions."""

from collections.abc import Callable
import fcntl
import os
import select
import threading
from typing import Any, Optional

import serial

from fabrik_ros.servo_io.errors import LinkLost, LinkTimeout

SerialFactory = Callable[[str, int, float], Any]
READ_SLICE_S = 0.01      # a read's timeout until the first wait sets its own
READ_MAX = 4096          # bytes one read takes from the OS at most (more stay for the next)


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
    """

    def __init__(self, path: str, port: Any, write_timeout_s: float) -> None:
        self.path = path
        self._port = port
        self._write_timeout_s = write_timeout_s
        self._fds = _direct_fds(port)

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
        """Return what has arrived, waiting up to ``max_wait_s`` for the first byte.

        The wait blocks in the port, so it ends as soon as bytes arrive, when :meth:`wake` is
        called, or when ``max_wait_s`` is over: an idle link sleeps until it has something to
        do instead of waking on a fixed slice. It does not start if ``idle`` is set already.

        :raises LinkLost: if the device reports an error (unplugged, EIO).
        """
        try:
            if self._fds is not None:
                return self._read_fd(self._fds, max_wait_s, idle)
            waiting = self._port.in_waiting
            if waiting:
                return bytes(self._port.read(waiting))
            if max_wait_s <= 0.0 or idle.is_set():
                return b''
            if getattr(self._port, 'timeout', max_wait_s) != max_wait_s:
                self._port.timeout = max_wait_s    # pyserial: no termios write if unchanged
            return bytes(self._port.read(1))
        except serial.SerialException as error:
            raise LinkLost(f'{self.path}: read failed (unplugged?): {error}') from error
        except LinkLost:
            raise               # says the path and the cause already (an OSError too)
        except OSError as error:
            raise LinkLost(f'{self.path}: read failed: {error}') from error

    def _read_fd(self, fds: tuple[int, int], max_wait_s: float, idle: threading.Event) -> bytes:
        """Read a POSIX port's descriptor directly: one select, then one read of all there is.

        pyserial's read builds a timeout object and selects again for every chunk, and a new
        timeout rewrites the termios settings; an idle bus link reads answers dozens of times
        a second, so that path was a large part of what it costs. The descriptor is
        non-blocking with VMIN = VTIME = 0 (pyserial opens it so): a read finds what has
        arrived, or nothing.
        """
        fd, abort = fds
        if max_wait_s <= 0.0 or idle.is_set():
            try:
                return os.read(fd, READ_MAX)
            except BlockingIOError:
                return b''
        ready, _, _ = select.select(fds, (), (), max_wait_s)
        if abort in ready:
            try:
                os.read(abort, 1000)            # wake() wrote to it; empty it for the next
            except BlockingIOError:
                pass
        if fd not in ready:
            return b''
        try:
            data = os.read(fd, READ_MAX)
        except BlockingIOError:
            return b''
        if not data:            # ready with nothing to read: the device is gone (as pyserial)
            raise LinkLost(f'{self.path}: read failed (unplugged?): the device reports '
                           'readiness to read but returned no data')
        return data

    def write(self, data: bytes) -> None:
        """Write all of ``data``.

        :raises LinkTimeout: if the write blocks longer than the write timeout.
        :raises LinkLost: if the device reports an error.
        """
        try:
            if self._fds is not None:
                try:
                    sent = os.write(self._fds[0], data)
                except BlockingIOError:
                    sent = 0
                if sent == len(data):
                    return      # the usual case: the bytes fit the OS buffer at once
                data = data[sent:]
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


def _direct_fds(port: Any) -> Optional[tuple[int, int]]:
    """Return a POSIX pyserial port's descriptor and its read-abort pipe, None for others.

    Only pyserial's own POSIX port with a non-blocking descriptor is read directly (not its
    ``VTIMESerial``, a URL, or a wrapper of a port, whose own read and write must run), so a
    read never blocks outside the select.
    """
    if os.name != 'posix' or not isinstance(port, serial.Serial):
        return None
    fd, abort = getattr(port, 'fd', None), getattr(port, 'pipe_abort_read_r', None)
    if not isinstance(fd, int) or not isinstance(abort, int):
        return None
    try:
        if not fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK:
            return None
    except OSError:
        return None
    return fd, abort
