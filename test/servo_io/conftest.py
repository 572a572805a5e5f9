"""Fixtures that start links to simulated boards on ptys, and always close them."""

import pytest

from fabrik_ros.servo_io import LinkOptions, ServoLink
from test.boardsim.conftest import sim_board  # noqa: F401  (the boards the links talk to)

# Short timeouts so that recovery tests finish quickly; still far above a pty's latency.
FAST = LinkOptions(reply_timeout_s=0.05, handshake_timeout_s=1.0, handshake_interval_s=0.05,
                   backoff_min_s=0.02, backoff_max_s=0.1, poll_hz=20.0, path_check_s=0.05)


@pytest.fixture
def servo_link():
    """Return a factory ``(board, **options) -> ServoLink`` started on the board's symlink."""
    links = []

    def start(board, **options):
        options.setdefault('options', FAST)
        link = ServoLink(board.path, protocol=board.protocol, channels=board.channels,
                         **options).start()
        links.append(link)
        return link

    yield start
    for link in links:
        link.close()
