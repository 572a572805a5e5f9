"""The firmware's protocol core compiled for the host: C unit tests, spec vectors, fuzzing."""

import os
import re
import subprocess

import pytest

from fabrik_ros.boardsim.simavr_board import BUILD_DIR, HARDWARE_DIR

UNIT_TESTS = BUILD_DIR / 'host' / 'fsb_unit_tests'
FUZZ = BUILD_DIR / 'host' / 'fsb_fuzz'
PROTOCOL_MD = HARDWARE_DIR / 'PROTOCOL.md'


def run(*command: str) -> subprocess.CompletedProcess[str]:
    # The core never allocates; LeakSanitizer only adds a ptrace dependency some CI
    # sandboxes refuse.
    env = {**os.environ, 'ASAN_OPTIONS': 'detect_leaks=0'}
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120,
                          env=env)


@pytest.mark.timeout(120)
def test_c_unit_tests_pass(hardware_build):
    result = run(str(UNIT_TESTS), '--protocol', str(PROTOCOL_MD))
    assert result.returncode == 0, result.stdout + result.stderr
    listed = run(str(UNIT_TESTS), '--list').stdout.split()
    assert len(listed) >= 20


@pytest.mark.timeout(120)
def test_firmware_core_answers_every_protocol_md_vector_byte_for_byte(hardware_build):
    result = run(str(UNIT_TESTS), '--protocol', str(PROTOCOL_MD),
                 'test_protocol_worked_examples')
    assert result.returncode == 0, result.stdout + result.stderr
    checked = int(re.search(r'checked (\d+) PROTOCOL.md vector lines', result.stdout).group(1))
    assert checked >= 30


@pytest.mark.timeout(120)
@pytest.mark.parametrize('seed', [1, 2, 3])
def test_random_bytes_never_break_the_core_invariants(hardware_build, seed):
    """Bounded fuzz under ASan/UBSan: no crash, no pulse outside the limits, no bad reply."""
    result = run(str(FUZZ), '--seed', str(seed), '--rounds', '3000')
    assert result.returncode == 0, result.stdout + result.stderr
    reached = dict(re.findall(r'(\w+)=(\d+)', result.stdout))
    # The fuzz must actually reach the states that could go wrong, not just bounce off.
    for state in ('enabled', 'moving', 'limits', 'watchdog', 'fast'):
        assert int(reached[state]) > 100, result.stdout
