"""ServoLink, the host side the servo_driver node uses, against the real firmware in simavr."""

import pytest

from fabrik_ros.boardsim.simavr_board import CHANNELS, SimavrBoard
from fabrik_ros.servo_io.link import ServoLink
from fabrik_ros.servo_io.protocols.native import BoardInfo, WatchdogAction

TARGETS_US = [1100, 1200, 1300, 1400, 1500, 1600]
WAIT_S = 10.0


def wait_for_targets(board: SimavrBoard, since_s: float) -> None:
    """Wait until every channel has pulsed its target three times after ``since_s``."""
    def done() -> bool:
        return all(len(board.pulses(ch, since_s)) >= 3 for ch in range(CHANNELS))

    board.wait_for(done, WAIT_S, 'three pulses on every channel')
    for channel, target in enumerate(TARGETS_US):
        widths = [p.width_us for p in board.pulses(channel, since_s)[-3:]]
        assert widths == pytest.approx([target] * 3, abs=2), channel


@pytest.mark.timeout(60)
def test_link_drives_the_pins_and_restores_them_after_a_board_reset(board: SimavrBoard):
    with ServoLink(board.port, channels=CHANNELS) as link:
        assert link.wait_ready(WAIT_S) == BoardInfo(1, CHANNELS, 'fabrik_servo_bridge')
        link.set_pulses(TARGETS_US)
        link.enable([True] * CHANNELS)
        link.sync(WAIT_S)
        wait_for_targets(board, board.now_s)

        board.reset()    # what a DTR pulse does to a real Uno: all detached, READY
        board.wait_for(lambda: board.reset_times_s, WAIT_S, 'the reset')
        reset_at = board.reset_times_s[-1]
        wait_for_targets(board, reset_at)
        assert link.stats().board_resets == 1


@pytest.mark.timeout(60)
def test_board_watchdog_detaches_once_the_link_goes_quiet(board: SimavrBoard):
    with ServoLink(board.port, channels=CHANNELS) as link:
        link.wait_ready(WAIT_S)
        link.set_watchdog(0.3, WatchdogAction.DETACH)
        link.set_pulses(TARGETS_US)
        link.enable([True] * CHANNELS)
        link.sync(WAIT_S)
        start = board.now_s
        # The link's keep-alive holds the watchdog off for well over its timeout.
        board.wait_sim_time(start + 1.0, WAIT_S)
        assert len(board.pulses(0, start)) >= 45
    closed_at = board.now_s
    board.wait_sim_time(closed_at + 0.5, WAIT_S)
    last_rise = max(p.rise_s for p in board.pulses(0))
    assert last_rise <= board.received[-1].time_s + 0.3 + 0.003
    assert board.pulses(0, last_rise + 0.021) == []
