"""Fixtures of the reliability suite: the calibrated arm config, rigs, budgets, I/O threads.

``ros`` (a RosHarness) is in test/conftest.py.

Durations of the long runs come from the environment so a short soak can run anywhere:
``FABRIK_SOAK_S`` (the 1 kHz pipeline soak, default 600 s), ``FABRIK_SOAK_CYCLES`` (unplug
cycles, default 100), ``FABRIK_FUZZ_S`` (firmware fuzz budget in the soak, default 300 s).
"""

import functools
import os
from pathlib import Path
import threading

import pytest

from fabrik_ros.boardsim.simavr_board import build_hardware, missing_prerequisites, SimavrBoard
from fabrik_ros.servo_io import connection as link_module  # the port handling of the links
from fabrik_ros.servo_io import Protocol, ServoLink
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


@pytest.fixture
def blocking_calls(monkeypatch) -> list[tuple[str, str]]:
    """Return the list of ``(call, thread name)`` of every call that may block on the board.

    Recorded: the serial port's open, read, write and close (as ServoLink uses them), and
    ServoLink's waits (wait_ready, sync, close). A test checks which thread made them, which
    does not depend on how busy the machine is, unlike the time a spin took. A write to a port
    whose output queue is empty cannot block (the bytes fit the OS buffer at once): it is
    recorded as ``SerialPort.write to an idle port``.
    """
    calls: list[tuple[str, str]] = []
    lock = threading.Lock()

    def note(name: str) -> None:
        with lock:
            calls.append((name, threading.current_thread().name))

    def watch(owner: type, name: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def watched(*args, **kwargs):
            idle = owner is port and name == 'write' and not args[0].output_queued()
            note(f'{owner.__name__}.{name}' + (' to an idle port' if idle else ''))
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, watched)

    port = link_module.SerialPort
    for name in ('read', 'write', 'close'):
        watch(port, name)
    for name in ('wait_ready', 'sync', 'close'):
        watch(ServoLink, name)
    open_port = port.open

    def watched_open(cls, *args, **kwargs):
        note(f'{port.__name__}.open')
        return open_port(*args, **kwargs)

    monkeypatch.setattr(port, 'open', classmethod(watched_open))
    return calls
