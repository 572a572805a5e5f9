"""Fixtures of the reliability suite: a ROS harness, the calibrated arm config, rigs, budgets.

Durations of the long runs come from the environment so a short soak can run anywhere:
``FABRIK_SOAK_S`` (the 1 kHz pipeline soak, default 600 s), ``FABRIK_SOAK_CYCLES`` (unplug
cycles, default 100), ``FABRIK_FUZZ_S`` (firmware fuzz budget in the soak, default 300 s).
"""

import os
from pathlib import Path

import pytest

from fabrik_ros.boardsim.simavr_board import build_hardware, missing_prerequisites, SimavrBoard
from fabrik_ros.servo_io import Protocol
from test.nodes.ros_harness import RosHarness
from test.reliability.rig import calibrated_config, Rig
from test.reliability.tapped_board import TappedBoard


def budget(name: str, default: float) -> float:
    """Return the number in environment variable ``name``, else ``default``.

    :raises ValueError: naming the variable if it is set but not a positive number.
    """
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f'{name} = {text!r}, must be a positive number')
    return value


@pytest.fixture
def ros():
    """Yield a RosHarness; its nodes and Context are destroyed after the test."""
    harness = RosHarness()
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """Return the arm config with the servos calibrated to CALIBRATED_US."""
    return calibrated_config(tmp_path)


@pytest.fixture
def make_rig(ros, config, tmp_path):
    """Return ``(protocol=NATIVE, *, plugged=True, board_options={}, **rig_options) -> Rig``."""
    rigs = []

    def make(protocol: Protocol = Protocol.NATIVE, *, plugged: bool = True,
             board_options=None, **rig_options) -> Rig:
        board = TappedBoard(protocol, link_path=str(tmp_path / f'ttyBOARD{len(rigs)}'),
                            **(board_options or {}))
        if plugged:
            board.start()
        rig = Rig(ros, config, board, **rig_options)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        for node in (rig.driver, rig.ik):
            if node is not None and node in ros.nodes:
                ros.destroy(node)
        rig.board.stop()


@pytest.fixture(scope='session')
def hardware_build() -> None:
    """Build firmware, harness and host tests once per run (make skips what is current)."""
    missing = missing_prerequisites()
    if missing:
        reason = f'firmware toolchain or simavr not installed (missing: {", ".join(missing)})'
        if os.environ.get('CI'):
            pytest.fail(f'{reason}; CI installs them, so this is a broken setup')
        pytest.skip(reason)
    build_hardware()


@pytest.fixture
def simavr_board(hardware_build, tmp_path: Path):
    """Return the firmware running in simavr in real time, with an EEPROM file of its own."""
    with SimavrBoard(eeprom_path=tmp_path / 'eeprom.bin') as board:
        yield board
