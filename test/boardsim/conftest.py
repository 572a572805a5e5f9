"""A fixture that starts simulated boards on ptys behind symlinks, and always stops them."""

import pytest

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.servo_io import Protocol


@pytest.fixture
def sim_board(tmp_path):
    """Return a factory ``(protocol, **options) -> SimBoard`` behind a symlink in tmp_path."""
    boards = []

    def start(protocol=Protocol.NATIVE, **options):
        link_path = str(tmp_path / f'ttySIM{len(boards)}')
        board = SimBoard(protocol, link_path=link_path, **options).start()
        boards.append(board)
        return board

    yield start
    for board in boards:
        board.stop()
