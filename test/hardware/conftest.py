"""Fixtures of the firmware tests: the build, a simavr board per test, a host on its pty."""

from collections.abc import Iterator
import os
from pathlib import Path

import pytest

from fabrik_ros.boardsim.simavr_board import build_hardware, missing_prerequisites, SimavrBoard
from test.hardware.frame_host import FrameHost


@pytest.fixture(scope='session')
def hardware_build() -> None:
    """Build firmware, harness and host tests once per run (make skips what is current)."""
    missing = missing_prerequisites()
    if missing:
        reason = (f'firmware toolchain or simavr not installed (missing: {", ".join(missing)});'
                  ' `make setup` installs gcc-avr avr-libc simavr libsimavr-dev libelf-dev')
        if os.environ.get('CI'):
            pytest.fail(f'{reason}; CI installs them, so this is a broken setup')
        pytest.skip(reason)
    build_hardware()


@pytest.fixture
def board(hardware_build: None, tmp_path: Path) -> Iterator[SimavrBoard]:
    """Return the firmware running in simavr in real time, with an EEPROM file of its own."""
    with SimavrBoard(eeprom_path=tmp_path / 'eeprom.bin') as simavr_board:
        yield simavr_board


@pytest.fixture
def host(board: SimavrBoard) -> Iterator[FrameHost]:
    """Return a host talking to ``board`` through its pty with pyserial."""
    frame_host = FrameHost(board.port)
    yield frame_host
    frame_host.close()
