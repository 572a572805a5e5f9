"""The firmware in simavr ends with the process that started it, however that one ends.

Issue 34.3: processes a test or benchmark starts must not outlive it. The harness runs in a
session of its own (a Ctrl-C for the host's group must not end the board before the host's
last words), so a group kill misses it; a host killed outright takes it along all the same,
because its next heartbeat on the pipe to the dead host ends it (SIGPIPE). Started with
SIGPIPE ignored, it served its pty on and on: this test then fails.
"""

import os
from pathlib import Path
import signal
import subprocess
import sys

import pytest

from fabrik_ros.boardsim.simavr_board import build_hardware, missing_prerequisites
from test.bench.processes import run_tagged
from test.polling import poll

REPO_ROOT = Path(__file__).resolve().parents[2]
HOST = ('import sys, threading\n'
        'from fabrik_ros.boardsim.simavr_board import SimavrBoard\n'
        'board = SimavrBoard()\n'
        'board.start()\n'
        'print(board.pid, flush=True)\n'
        'threading.Event().wait()\n')


def _ended(pid: int) -> bool:
    """Return True once ``pid`` is gone or a zombie (ended, not yet reaped by its new parent)."""
    try:
        status = Path(f'/proc/{pid}/status').read_text(encoding='ascii')
    except OSError:
        return True
    return any(line.split()[1:2] == ['Z'] for line in status.splitlines()
               if line.startswith('State:'))


@pytest.mark.timeout(120)
def test_the_harness_ends_when_its_host_is_killed_outright():
    missing = missing_prerequisites()
    if missing:
        pytest.skip(f'simavr tool chain missing: {missing}')
    build_hardware('firmware', 'sim')
    with run_tagged([sys.executable, '-c', HOST], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                    text=True) as host:
        harness = int(host.popen.stdout.readline())
        assert not _ended(harness)
        os.kill(host.popen.pid, signal.SIGKILL)
        host.popen.wait()
        assert poll(lambda: _ended(harness), timeout_s=20.0), f'harness {harness} runs on'
