"""End a benchmark's helper process with the process that started it, however that one ended.

A benchmark starts node processes (node_main.py) and a test starts the benchmark. When the
starter is killed (a test's timeout, SIGKILL, a crash) its children must not run on: a
servo_driver left behind once retried its pseudo-terminal for an hour, and wrote native frames
onto a later test's simulated bus that got the same pty number.

The starter names itself in ``FABRIK_ROS_PARENT_PID`` (:func:`child_environment`); the child
calls :func:`end_with_parent` first thing. On Linux the kernel then sends the child SIGTERM the
moment its parent dies (``prctl(PR_SET_PDEATHSIG)``); everywhere, a thread also checks the
parent every ``CHECK_S`` and, once it is gone, sends SIGTERM itself, and ends the process
outright if it is still there ``GRACE_S`` later (a node's cleanup is bounded, but a child
that hangs in it must not stay either).
"""

from collections.abc import Callable, Mapping
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
from typing import Optional

VARIABLE = 'FABRIK_ROS_PARENT_PID'
CHECK_S = 0.2
GRACE_S = 10.0
_PR_SET_PDEATHSIG = 1


def child_environment(base: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """Return ``base`` (default: this process's environment) naming this process the parent."""
    return {**(os.environ if base is None else base), VARIABLE: str(os.getpid())}


def end_with_parent(*, default_to_parent: bool = True) -> Optional[int]:
    """Arrange for this process to end when the process named in the environment ends.

    The variable is taken out of the environment, so this process's own children do not
    watch their grandparent. Without it, the current parent is watched (``default_to_parent``)
    or nothing is.

    :returns: the pid watched, None if none
    """
    named = os.environ.pop(VARIABLE, '')
    parent = int(named) if named else (os.getppid() if default_to_parent else None)
    if parent is None:
        return None
    _kernel_request()()
    if os.getppid() != parent:            # gone before the kernel was asked: end now
        os.kill(os.getpid(), signal.SIGTERM)
    threading.Thread(target=_watch, args=(parent,), name='parent watch', daemon=True).start()
    return parent


def ended_with(parent: int) -> Callable[[], None]:
    """Return a ``preexec_fn`` that has the kernel end the child when ``parent`` dies.

    For a command that cannot call :func:`end_with_parent` itself (a console script of the
    package); a child whose parent is gone already by then exits at once. Linux only: the
    caller ends its children itself elsewhere.
    """
    request = _kernel_request()

    def in_child() -> None:
        request()
        if os.getppid() != parent:
            os._exit(1)
    return in_child


def _kernel_request() -> Callable[[], None]:
    """Return what has Linux send SIGTERM when the parent dies (nothing elsewhere).

    libc is looked up here, in the calling process: a ``preexec_fn`` must not start the
    subprocess that finding it may take.
    """
    if not sys.platform.startswith('linux'):
        return lambda: None
    libc = ctypes.CDLL(ctypes.util.find_library('c') or None, use_errno=True)
    return lambda: libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _watch(parent: int) -> None:
    stop = threading.Event()
    while os.getppid() == parent:
        stop.wait(CHECK_S)
    os.kill(os.getpid(), signal.SIGTERM)
    stop.wait(GRACE_S)
    os._exit(1)
