"""One live simulated board per symlink (issue 24.4), seen from sim_device processes.

A second ``sim_device --link ./ttyA`` used to re-point the first board's link, and the first,
stopping, deleted the link the second then owned; ``--link`` into a missing folder printed a
raw errno about a ``.tmp`` path.
"""

import os
from pathlib import Path
import signal
import subprocess
import sys
import time

import pytest
import serial

from fabrik_ros.boardsim import simavr_board
from fabrik_ros.boardsim.board import SimBoard
from fabrik_ros.boardsim.link_claim import link_owner, LinkClaimError, lock_path
from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.native import Frame, FrameDecoder, Reply

REPO_ROOT = Path(__file__).parent.parent.parent

pytestmark = pytest.mark.timeout(30)


def _sim_device(link: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, '-m', 'fabrik_ros.boardsim', '--link', str(link)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=REPO_ROOT)


def _serving(link: Path) -> subprocess.Popen:
    """Return a sim_device process once it says it serves at ``link`` (else stop it)."""
    process = _sim_device(link)
    try:
        banner = process.stdout.readline()
        assert str(link) in banner, banner + process.stderr.read()
    except BaseException:
        _stop(process)
        raise
    return process


def _stop(process: subprocess.Popen) -> None:
    """Stop the board as Ctrl-C does; kill it if it does not end (it must never stay)."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise


def _answers_ping(path: str) -> bool:
    with serial.Serial(path, 115200, timeout=0.01, write_timeout=1.0) as port:
        port.write(native.encode_ping(7))
        decoder, end = FrameDecoder(), time.monotonic() + 2.0
        while time.monotonic() < end:
            if any(isinstance(item, Frame) and item.seq == 7 and item.cmd == Reply.DATA
                   for item in decoder.feed(port.read(64))):
                return True
    return False


def test_a_second_board_on_a_live_boards_link_is_refused_and_the_first_keeps_it(tmp_path):
    link = tmp_path / 'ttyA'
    first = _serving(link)
    second = None
    try:
        pointed = os.readlink(link)
        second = _sim_device(link)
        try:
            out, err = second.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail('a second board started on the live link')
        assert second.returncode == 1
        assert err == (f'sim_device: cannot start: link {link} belongs to a live simulated '
                       f'board (pid {first.pid}); stop that board or name another link\n')
        assert os.readlink(link) == pointed
        assert _answers_ping(str(link))
    finally:
        for process in (second, first):
            if process is not None:
                _stop(process)
    assert first.returncode == 0
    assert not os.path.lexists(link) and not os.path.lexists(lock_path(str(link)))


def test_the_link_of_a_killed_board_is_taken_over(tmp_path):
    link = tmp_path / 'ttyA'
    killed = _serving(link)
    killed.kill()
    killed.communicate(timeout=10)
    assert os.path.lexists(link) and os.path.exists(lock_path(str(link)))
    assert link_owner(str(link)) is None
    second = _serving(link)
    try:
        assert link_owner(str(link)) == second.pid
        assert _answers_ping(str(link))
    finally:
        _stop(second)
    assert not os.path.lexists(link)


def test_a_board_removes_its_link_only_while_the_link_is_still_its_own(tmp_path):
    link = tmp_path / 'ttyA'
    board = SimBoard(link_path=str(link)).start()
    try:
        os.unlink(link)
        os.symlink('/dev/null', link)      # someone else's link now, by hand
    finally:
        board.stop()
    assert os.readlink(link) == '/dev/null'


def test_two_boards_of_one_process_cannot_share_a_link(tmp_path):
    link = str(tmp_path / 'ttyA')
    with SimBoard(link_path=link) as first:
        with pytest.raises(LinkClaimError) as refused:
            SimBoard(link_path=link).start()
        assert os.readlink(link) == first.pty_path
    assert f'link {link} belongs to a live simulated board (pid {os.getpid()})' in str(
        refused.value)


def test_a_link_in_a_missing_folder_is_refused_in_one_line_naming_the_folder(tmp_path):
    link = tmp_path / 'none' / 'ttyA'
    process = _sim_device(link)
    out, err = process.communicate(timeout=10)
    assert process.returncode == 1 and out == ''
    assert err == (f'sim_device: cannot start: link {link}: its folder {link.parent} does not '
                   f'exist; create it or name a link in an existing folder\n')
    assert not link.parent.exists()


@pytest.mark.skipif(bool(simavr_board.missing_prerequisites()),
                    reason='simavr and avr-gcc are not installed here')
def test_the_link_of_a_live_simavr_board_is_refused_to_a_python_board(tmp_path):
    link = tmp_path / 'ttyS'
    simavr = subprocess.Popen([sys.executable, '-m', 'fabrik_ros.boardsim', '--board', 'simavr',
                               '--link', str(link)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    second = None
    try:
        banner = simavr.stdout.readline()
        assert str(link) in banner, banner + simavr.stderr.read()
        second = _sim_device(link)
        try:
            out, err = second.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail('a python board started on the live simavr link')
        assert second.returncode == 1
        assert f'link {link} belongs to a live simulated board (pid {simavr.pid})' in err
    finally:
        for process in (second, simavr):
            if process is not None:
                _stop(process)
    assert not os.path.lexists(link) and not os.path.lexists(lock_path(str(link)))
