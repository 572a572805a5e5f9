"""`make web` as a person runs it: the page address is printed, one Ctrl-C ends it cleanly."""

import signal
import socket
import subprocess
import sys

import pytest

from test.nodes.conftest import REPO_ROOT
from test.webview.browser import free_port

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]


def _wait_for_line(process: subprocess.Popen, fragment: str) -> str:
    """Return the first output line holding ``fragment``; fail if the output ends first."""
    seen = []
    for line in process.stdout:
        seen.append(line)
        if fragment in line:
            return line
    raise AssertionError(f'the output ended without {fragment!r}: {seen}')


def test_make_web_prints_the_page_and_stops_every_process_on_one_ctrl_c():
    port = free_port()
    process = subprocess.Popen([sys.executable, '-m', 'fabrik_ros.webview.pipeline',
                                '--port', str(port)], cwd=REPO_ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = _wait_for_line(process, 'open http')
        assert f'http://127.0.0.1:{port}' in line
        process.send_signal(signal.SIGINT)
        output, errors = process.communicate()
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


def test_make_web_on_a_taken_port_fails_naming_it_and_leaves_nothing_running():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(('127.0.0.1', 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        result = subprocess.run([sys.executable, '-m', 'fabrik_ros.webview.pipeline',
                                 '--port', str(port)], cwd=REPO_ROOT, text=True,
                                capture_output=True)
    assert result.returncode == 1, result.stderr
    assert f'127.0.0.1:{port} is in use by another program' in result.stderr
    assert 'make web: web_view exited with status 1' in result.stderr
    assert 'open http' not in result.stdout
    assert 'Traceback' not in result.stderr
