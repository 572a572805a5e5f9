"""`make web` as a person runs it: the page address is printed, one Ctrl-C ends it cleanly."""

import selectors
import signal
import subprocess
import sys
import time

import pytest

from test.nodes.conftest import REPO_ROOT
from test.webview.browser import free_port

pytestmark = [pytest.mark.ros, pytest.mark.timeout(90)]


def _wait_for_line(process: subprocess.Popen, fragment: str, timeout_s: float) -> str:
    seen = []
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(timeout=deadline - time.monotonic()):
                break
            line = process.stdout.readline()
            if not line:
                break
            seen.append(line)
            if fragment in line:
                return line
    raise AssertionError(f'no line with {fragment!r} within {timeout_s} s: {seen}')


def test_make_web_prints_the_page_and_stops_every_process_on_one_ctrl_c():
    port = free_port()
    process = subprocess.Popen([sys.executable, '-m', 'fabrik_ros.webview.pipeline',
                                '--port', str(port)], cwd=REPO_ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = _wait_for_line(process, 'open http', 60.0)
        assert f'http://127.0.0.1:{port}' in line
        process.send_signal(signal.SIGINT)
        output, errors = process.communicate(timeout=60.0)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, errors
    assert 'Traceback' not in errors
    # Each child stopped by itself on the one SIGINT: none had to be killed, none failed.
    stopped = [line for line in output.splitlines() if line.startswith('make web: stopped ')]
    assert len(stopped) == 1, output
    statuses = dict(item.split(': ') for item in stopped[0].removeprefix(
        'make web: stopped ').split(', '))
    assert statuses == {'web_view': '0', 'fabrik_ik': '0', 'servo_driver': '0',
                        'sim_device': '0'}, errors
