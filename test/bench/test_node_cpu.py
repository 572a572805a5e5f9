"""Smoke test of bench/node_cpu.py: a quick run prints every row and leaves no process behind."""

import json
import os
from pathlib import Path
import re
import signal
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / 'bench' / 'node_cpu.py'
CASES = ('PWM board, arm_4dof, native', 'Feetech bus, so101, feetech')
PROCESSES = ('sim_device', 'fabrik_ik', 'servo_driver')
STARTED = re.compile(r'^started (\S+) pid (\d+)$', re.MULTILINE)


def _start(tmp_path: Path, *options: str) -> subprocess.Popen:
    """Start the benchmark in a session of its own, so that one signal reaches all it starts."""
    command = [sys.executable, str(BENCH), '--quick', '--out', str(tmp_path / 'node_cpu.json'),
               '--log-dir', str(tmp_path / 'logs'), *options]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _end_session(bench: subprocess.Popen) -> None:
    """Kill whatever of the benchmark's session still runs (after a failure or a timeout)."""
    try:
        os.killpg(bench.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    bench.wait()


def _running(pids: list[int]) -> list[str]:
    """Return the command lines of the package's processes among ``pids`` still running."""
    left = []
    for pid in pids:
        try:
            command = Path(f'/proc/{pid}/cmdline').read_bytes().replace(b'\0', b' ').decode()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if 'fabrik_ros' in command:      # not a process that got the pid since
            left.append(command)
    return left


@pytest.mark.ros
def test_a_quick_run_prints_every_row_and_leaves_no_process(tmp_path):
    bench = _start(tmp_path)
    try:
        out, err = bench.communicate()
        started = [(name, int(pid)) for name, pid in STARTED.findall(err)]
        left = _running([pid for _, pid in started])     # before the session is killed
    finally:
        _end_session(bench)
    assert bench.returncode == 0, err
    assert sorted(name for name, _ in started) == sorted(2 * PROCESSES)
    assert left == []
    rows = [line for line in out.splitlines() if line.startswith(CASES)]
    assert len(rows) == len(CASES) * len(PROCESSES)
    for case in CASES:
        for name in PROCESSES:
            assert any(row.startswith(case) and f' {name} ' in row for row in rows), (case, name)
    for row in rows:
        if ' sim_device ' not in row:
            assert '<=1 ' in row and '<=0.3 ' in row, row       # the goals beside the figures
    results = json.loads((tmp_path / 'node_cpu.json').read_text(encoding='utf-8'))
    assert sorted(r['case'] for r in results['results']) == ['bus', 'pwm']
    for result in results['results']:
        assert sorted(result['nodes']) == sorted(PROCESSES)
        windows = result['rounds'][0]['windows']
        assert [w['rate_hz'] for w in windows] == [None, 20, 50]
        assert all(w['targets'] > 0 for w in windows[1:])


@pytest.mark.ros
def test_a_stopped_run_ends_every_process_it_started(tmp_path):
    bench = _start(tmp_path, '--cases', 'pwm')
    try:
        started = []
        for line in bench.stderr:
            if found := STARTED.match(line.strip()):
                started.append(int(found.group(2)))
            if line.startswith('window'):       # everything runs: stop it there
                bench.send_signal(signal.SIGTERM)
                break
        bench.communicate()
        left = _running(started)        # before the session is killed
    finally:
        _end_session(bench)
    assert len(started) == len(PROCESSES)
    assert bench.returncode == 1
    assert left == []
