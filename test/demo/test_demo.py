"""`make demo` runs the arm on the simulated board and prints the table it promises."""

import os
from pathlib import Path
import subprocess
import sys

import pytest

from fabrik_ros.demo.cli import SEQUENCE, SO101_SEQUENCE

REPO_ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ('#', 'step', 'sent on', 'target [m]', 'result', 'residual [mm]', 'joint angles',
           'held', 'time [s]')
# What each board's column holds: its heading, how many outputs, their range.
HELD = {'native': ('board pins [us]', 4, (500, 2500)),
        'maestro': ('board pins [us]', 4, (500, 2500)),
        'feetech': ('servo positions [count]', 6, (0, 4095)),
        'dynamixel': ('servo positions [count]', 6, (0, 4095))}


def _run_demo(*args: str) -> subprocess.CompletedProcess:
    # As from a shell that set none of the DDS variables: the demo keeps itself on loopback.
    environ = {name: value for name, value in os.environ.items()
               if name not in ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY')}
    return subprocess.run([sys.executable, '-m', 'fabrik_ros.demo', *args], cwd=REPO_ROOT,
                          env=environ, capture_output=True, text=True, timeout=90)


def _rows(stdout: str, held: str = 'board pins [us]') -> list[dict[str, str]]:
    lines = [line for line in stdout.splitlines() if ' | ' in line]
    header = [cell.strip() for cell in lines[0].split(' | ')]
    columns = [held if c == 'held' else c for c in COLUMNS]
    assert [h.split(' [deg]')[0] for h in header] == columns
    return [dict(zip(columns, (cell.strip() for cell in line.split(' | ')), strict=True))
            for line in lines[1:]]


@pytest.mark.ros
@pytest.mark.timeout(120)
@pytest.mark.parametrize('board, protocol', [('python', 'native'), ('python', 'maestro'),
                                             ('simavr', 'native'), ('python', 'feetech'),
                                             ('python', 'dynamixel')])
def test_demo_prints_every_step_as_expected_and_exits_0(board, protocol, tmp_path):
    plot = tmp_path / 'poses.png'
    result = _run_demo('--board', board, '--protocol', protocol, '--plot', str(plot))
    assert result.returncode == 0, result.stdout + result.stderr
    assert '[rcl]' not in result.stderr, 'rcl warned at start-up (ROS_LOCALHOST_ONLY on Jazzy?)'
    column, outputs, (low, high) = HELD[protocol]
    rows = _rows(result.stdout, column)
    sequence = SO101_SEQUENCE if outputs == 6 else SEQUENCE    # the bus drives the SO-101
    assert [row['step'] for row in rows] == [step.label for step in sequence]
    for row, step in zip(rows, sequence, strict=True):
        assert row['result'].split(' (')[0] == step.expect.value, row
        if row['result'] == 'reached':
            assert float(row['residual [mm]']) <= 0.1
        assert len(row[column].split()) == outputs
        assert all(low <= int(p) <= high for p in row[column].split())
    rejected = [i for i, row in enumerate(rows) if row['result'] == 'rejected']
    assert rejected, 'the sequence has rejected targets'
    for index in rejected:
        now, before = ([int(p) for p in rows[i][column].split()]
                       for i in (index, index - 1))
        # Pins measured in simavr round a width that sits on a half microsecond either way.
        assert all(abs(a - b) <= 1 for a, b in zip(now, before, strict=True)), (
            f'a rejected target leaves the board where it was: {before} -> {now}')
    assert f'{len(SEQUENCE)} steps' in result.stdout
    assert plot.stat().st_size > 10_000
    assert 'out of reach' in result.stderr and 'not finite' in result.stderr


def test_demo_refuses_an_unknown_protocol():
    result = _run_demo('--protocol', 'lss')
    assert result.returncode == 2
    assert "invalid choice: 'lss'" in result.stderr


def test_demo_refuses_an_arm_file_of_the_other_kind_of_servo():
    result = _run_demo('--protocol', 'feetech', '--config', 'config/arm_4dof.yaml')
    assert result.returncode == 1
    assert 'calibrated in pulse widths (a PWM board), --protocol feetech drives counts' in (
        result.stderr)


def test_demo_refuses_the_simavr_board_with_a_foreign_protocol():
    result = _run_demo('--board', 'simavr', '--protocol', 'ssc32')
    assert result.returncode == 1
    assert 'native protocol' in result.stderr
