"""Processes a test starts, told apart by a tag in their environment, and ended with the test.

A child inherits its parent's environment, so every process started below a tagged one
carries the tag too, whichever helper started it and whatever group or session it moved to:
:func:`tagged` finds them all in /proc. :func:`run_tagged` starts a command in a session of its
own under a fresh tag and, however the test ends (an assertion, pytest-timeout's exception,
SIGTERM turned into one), ends that session and then anything still carrying the tag.
"""

from collections.abc import Iterator, Sequence
import contextlib
from dataclasses import dataclass
import os
from pathlib import Path
import signal
import subprocess
from typing import Optional
import uuid

from test.polling import poll

TAG = 'FABRIK_ROS_TEST_TAG'
# What a process of the package runs: a node, a benchmark, a simulated board, the firmware.
PACKAGE_MARKERS = ('fabrik_ros', 'node_main.py', '/bench/', 'sim_device', 'servo_driver',
                   'fabrik_ik', 'sim_arm', 'fabrik_arm', 'web_view', 'fabrik_servo_sim')
_STOP_S = 10.0


@dataclass(frozen=True)
class Found:
    """A running process and its command line."""

    pid: int
    command: str


def tagged(tag: str, *, package_only: bool = True, prefix: bool = False) -> list[Found]:
    """Return the live processes whose environment holds ``TAG=tag`` (this one left out).

    :param package_only: only those running something of the package (not, say, a ros2
        daemon a CLI test started, which outlives its test by design)
    :param prefix: also those whose tag starts with ``tag`` (a worker's tag extends its run's)
    """
    wanted = f'{TAG}={tag}'.encode()
    found = []
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / 'environ').read_bytes().split(b'\0')
            command = (entry / 'cmdline').read_bytes().replace(b'\0', b' ').decode(
                errors='replace').strip()
        except OSError:          # ended meanwhile, or not ours to read
            continue
        if not command or not _holds(environ, wanted, prefix):   # a zombie has no command line
            continue
        if not package_only or any(marker in command for marker in PACKAGE_MARKERS):
            found.append(Found(int(entry.name), command))
    return found


def _holds(environ: list[bytes], wanted: bytes, prefix: bool) -> bool:
    if prefix:
        return any(entry.startswith(wanted) for entry in environ)
    return wanted in environ


def end_tagged(tag: str, timeout_s: float = _STOP_S, *, prefix: bool = False) -> list[Found]:
    """Send SIGTERM to every process of the package carrying ``tag``, SIGKILL if it stays.

    :returns: the processes that were still running (empty: nothing was left)
    """
    left = tagged(tag, prefix=prefix)
    for process in left:
        _signal(process.pid, signal.SIGTERM)
    if not poll(lambda: not tagged(tag, prefix=prefix), timeout_s):
        for process in tagged(tag, prefix=prefix):
            _signal(process.pid, signal.SIGKILL)
    return left


def wait_until_gone(tag: str, timeout_s: float, *, prefix: bool = False) -> list[Found]:
    """Wait until no process of the package carries ``tag``; return those still there."""
    poll(lambda: not tagged(tag, prefix=prefix), timeout_s)
    return tagged(tag, prefix=prefix)


def _signal(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, number)


@dataclass
class Tagged:
    """A command started by :func:`run_tagged`: its process and the tag its tree carries."""

    popen: subprocess.Popen
    tag: str


@contextlib.contextmanager
def run_tagged(command: Sequence[str], *, env: Optional[dict] = None,
               **popen_options) -> Iterator[Tagged]:
    """Start ``command`` in its own session under a fresh tag; end all of it on the way out.

    On leaving, the session gets SIGTERM (the command's own cleanup runs), then SIGKILL if it
    lingers; last, every process of the package still carrying the tag (one that moved to
    another session) is ended the same way.
    """
    tag = uuid.uuid4().hex
    environment = {**(os.environ if env is None else env), TAG: tag}
    popen = subprocess.Popen(list(command), env=environment, start_new_session=True,
                             **popen_options)
    try:
        yield Tagged(popen, tag)
    finally:
        _end_session(popen)
        end_tagged(tag)


def _end_session(popen: subprocess.Popen) -> None:
    for number in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(popen.pid, number)
        try:
            popen.wait(_STOP_S)
            return
        except subprocess.TimeoutExpired:
            continue
