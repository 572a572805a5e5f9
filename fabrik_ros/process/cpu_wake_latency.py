"""Keep idle CPUs quick to wake while a node runs: a PM QoS request on /dev/cpu_dma_latency.

Targets streamed at 20-50 Hz leave the nodes idle for 20-50 ms between them. An idle CPU
then enters an idle state that is slow to leave: a deep C-state on a PC, a halted vCPU on a
virtual machine (the host gives its core to other work meanwhile). Each target must then wake
the threads of every process on its way, which run the same Python two to three times more
slowly on caches the idle spell emptied: measured on the development VM (bench/idle_cost.py), three
IK solves after a 50 ms sleep take 337 µs of CPU, 48 µs while a request of 0 µs is held.

Linux's interface for this is PM QoS: a process writes a bound [µs] as a 32-bit integer to
``/dev/cpu_dma_latency`` and keeps the file open; while any holder has it open, no CPU enters
an idle state slower to leave than the lowest bound held (0: the CPUs poll when idle). Closing
the file, or the process ending, withdraws the request, so a crash cannot leave it behind.
Holding it costs power: an idle CPU no longer sleeps. The file is root's by default; a udev
rule can give a group access (docs/robot.md, "Latency at low target rates").
"""

import errno
import os
from pathlib import Path
import struct
from typing import Optional
import weakref

DEVICE = Path('/dev/cpu_dma_latency')
# A request outside this range is refused by the kernel; -1 means "ask for nothing".
MAX_LATENCY_US = 2_000_000_000
NOT_ASKED = -1
_VALUE = struct.Struct('=i')     # the kernel reads a native 32-bit signed integer


class WakeLatencyRequest:
    """One process's hold on the CPUs' wake-up latency; withdrawn by :meth:`close`.

    :attr held: True while the kernel keeps the request
    :attr why_not: why it is not held ('' when it is): asked for nothing, no such device,
        or the error opening or writing it
    """

    def __init__(self, latency_us: int, *, device: Path = DEVICE) -> None:
        """Ask the kernel for ``latency_us`` (``NOT_ASKED``: ask nothing).

        Never raises for a device that cannot be used: a node still runs without the request,
        only more slowly at low rates, and says why from :attr:`why_not`.

        :raises ValueError: if ``latency_us`` is neither NOT_ASKED nor 0..MAX_LATENCY_US
        """
        if latency_us != NOT_ASKED and not 0 <= latency_us <= MAX_LATENCY_US:
            raise ValueError(f'cpu_wake_latency_us = {latency_us}: must be {NOT_ASKED} (ask '
                             f'nothing) or 0..{MAX_LATENCY_US} us')
        self.latency_us = latency_us
        self.device = device
        self.why_not = ''
        self._close = None
        if latency_us == NOT_ASKED:
            self.why_not = f'cpu_wake_latency_us is {NOT_ASKED}'
            return
        fd = _open_and_write(device, latency_us)
        if isinstance(fd, str):
            self.why_not = fd
            return
        # Closed by close(), else when this object goes away or the interpreter exits.
        self._close = weakref.finalize(self, os.close, fd)

    @property
    def held(self) -> bool:
        """Return True while the request stands."""
        return self._close is not None and self._close.alive

    def close(self) -> None:
        """Withdraw the request (again: nothing)."""
        if self._close is not None:
            self._close()


def current_bound_us(device: Path = DEVICE) -> Optional[int]:
    """Return the bound the kernel applies now (the lowest held), None if it cannot be read."""
    try:
        with device.open('rb') as file:
            data = file.read(_VALUE.size)
    except OSError:
        return None
    return _VALUE.unpack(data)[0] if len(data) == _VALUE.size else None


def _open_and_write(device: Path, latency_us: int) -> 'int | str':
    """Return the open descriptor holding the request, or why it could not be made."""
    try:
        fd = os.open(device, os.O_WRONLY | os.O_CLOEXEC)
    except OSError as error:
        return _why(device, error)
    try:
        written = os.write(fd, _VALUE.pack(latency_us))
    except OSError as error:
        os.close(fd)
        return _why(device, error)
    if written != _VALUE.size:
        os.close(fd)
        return f'{device}: took {written} of {_VALUE.size} bytes'
    return fd


def _why(device: Path, error: OSError) -> str:
    if error.errno == errno.ENOENT:
        return f'this kernel has no {device}'
    if error.errno in (errno.EACCES, errno.EPERM):
        return f"{device}: permission denied (root's by default)"
    return f'{device}: {error.strerror or error}'
