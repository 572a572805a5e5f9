"""The firmware's fast pulse frame (SET_FRAME) in simavr, measured on its pins.

Every time below is simulated time from the harness log (cycle counts at 16 MHz), so the
checks hold however fast the machine runs the simulation.
"""

import pytest

from fabrik_ros.boardsim.simavr_board import CHANNELS, Pulse, SimavrBoard
from fabrik_ros.servo_io.protocols import native
from fabrik_ros.servo_io.protocols.native import Command, Frame, NackError, Reply, WatchdogAction
from test.hardware.frame_host import FrameHost
from test.hardware.test_simavr_hil import (
    ack,
    command_time_s,
    enable,
    nack,
    pulses_after,
    reply_time_s,
    set_pulses,
    WAIT_S,
    WIDTH_TOLERANCE_US,
)

SLOTTED_S = 0.020
TICK_S = 0.5e-6          # Timer1 resolution
EDGE_S = 1.0e-6          # an edge lands within a tick of its own, so a period within two


def set_frame(host: FrameHost, period_us: int) -> Frame:
    return host.request(native.encode_set_frame(host.next_seq(), period_us))


def periods(pulses: list[Pulse]) -> list[float]:
    return [b.rise_s - a.rise_s for a, b in zip(pulses, pulses[1:], strict=False)]


def assert_widths(by_channel: dict[int, list[Pulse]], targets: list[int],
                  period_s: float | None = None) -> None:
    """Check every pulse of each channel has its target's width (and, if given, period)."""
    for channel, pulses in by_channel.items():
        widths = [p.width_us for p in pulses]
        assert widths == pytest.approx([targets[channel]] * len(widths), abs=WIDTH_TOLERANCE_US)
        if period_s is not None:
            assert periods(pulses) == pytest.approx([period_s] * (len(pulses) - 1), abs=EDGE_S)


def fast_pulses(board: SimavrBoard, host: FrameHost, period_us: int, channels: list[int],
                count: int) -> dict[int, list[Pulse]]:
    """Switch to fast frames; return ``count`` pulses of each channel from the first one."""
    reply = set_frame(host, period_us)
    assert ack(reply, Command.SET_FRAME)
    applied = reply_time_s(board, reply)
    # The slotted frame in progress runs to its end; fast frames start after it.
    since = applied + SLOTTED_S
    return {ch: pulses_after(board, ch, since, count) for ch in channels}


@pytest.mark.timeout(30)
def test_fast_frame_pulses_every_enabled_pin_together_every_period(board: SimavrBoard,
                                                                   host: FrameHost):
    targets = [500, 1000, 1234, 1500, 2000, 2500]
    assert ack(set_pulses(host, targets), Command.SET_PULSES)
    assert ack(enable(host, 0b110111), Command.ENABLE)       # channel 3 detached
    pulses_after(board, 5, command_time_s(board, host), 1)
    by_channel = fast_pulses(board, host, 5000, [0, 1, 2, 4, 5], 40)
    assert_widths(by_channel, targets, 0.005)
    # One edge raises every pin: the same frames, the same rise times.
    rises = [p.rise_s for p in by_channel[0]]
    for pulses in by_channel.values():
        assert [p.rise_s for p in pulses] == pytest.approx(rises, abs=EDGE_S)
    assert board.pulses(3) == []


@pytest.mark.timeout(30)
def test_equal_widths_fall_together_and_close_ones_in_order(board: SimavrBoard,
                                                            host: FrameHost):
    # Two equal pairs; 1501 falls with 1500 (1 us apart, folded); 1503 on its own edge, 1.5 us
    # after the handler drove the one before: the falls it must drive back to back.
    targets = [1500, 1501, 1500, 1503, 2000, 2000]
    assert ack(set_pulses(host, targets), Command.SET_PULSES)
    assert ack(enable(host, 0b111111), Command.ENABLE)
    by_channel = fast_pulses(board, host, 2800, list(range(CHANNELS)), 60)
    assert_widths(by_channel, targets, 0.0028)
    for a, b in ((0, 2), (4, 5)):
        assert ([p.width_us for p in by_channel[a]] ==
                pytest.approx([p.width_us for p in by_channel[b]], abs=TICK_S * 1e6))
    assert all(p.width_us < q.width_us
               for p, q in zip(by_channel[1], by_channel[3], strict=True))


@pytest.mark.timeout(30)
def test_a_chain_of_widths_2us_apart_falls_one_by_one_within_the_bound(board: SimavrBoard,
                                                                      host: FrameHost):
    # Every fall 2 us after the one before: the handler's ~2 us per fall must not add up.
    targets = [1510, 1508, 1506, 1504, 1502, 1500]
    assert ack(set_pulses(host, targets), Command.SET_PULSES)
    assert ack(enable(host, 0b111111), Command.ENABLE)
    by_channel = fast_pulses(board, host, 4000, list(range(CHANNELS)), 30)
    assert_widths(by_channel, targets)
    for wider, narrower in zip(range(CHANNELS - 1), range(1, CHANNELS), strict=True):
        assert all(p.width_us > q.width_us for p, q in
                   zip(by_channel[wider], by_channel[narrower], strict=True))


@pytest.mark.timeout(30)
def test_limits_still_refuse_and_clamp_in_fast_frames(board: SimavrBoard, host: FrameHost):
    set_pulses(host, [2400, 600])
    assert ack(enable(host, 0b11), Command.ENABLE)
    assert ack(set_frame(host, 3000), Command.SET_FRAME)
    limits = native.encode_set_limits(host.next_seq(), [(1000, 2000), (700, 2300)])
    assert ack(host.request(limits), Command.SET_LIMITS)
    since = command_time_s(board, host)
    assert [p.width_us for p in pulses_after(board, 0, since + 0.02, 10)] == pytest.approx(
        [2000] * 10, abs=WIDTH_TOLERANCE_US)
    assert [p.width_us for p in pulses_after(board, 1, since + 0.02, 10)] == pytest.approx(
        [700] * 10, abs=WIDTH_TOLERANCE_US)
    assert nack(set_pulses(host, [2100, 1500]), Command.SET_PULSES, NackError.OUT_OF_RANGE)
    beyond = native.encode_set_limits(host.next_seq(), [(1000, 2701)])
    assert nack(host.request(beyond), Command.SET_LIMITS, NackError.OUT_OF_RANGE)
    assert nack(set_frame(host, 2599), Command.SET_FRAME, NackError.OUT_OF_RANGE)
    after = command_time_s(board, host)
    widths = [p.width_us for p in board.pulses(since_s=since + 0.02)]
    assert widths and min(widths) >= 700 - WIDTH_TOLERANCE_US
    assert max(widths) <= 2000 + WIDTH_TOLERANCE_US
    kept = pulses_after(board, 0, after, 10)
    assert [p.width_us for p in kept] == pytest.approx([2000] * 10, abs=WIDTH_TOLERANCE_US)
    assert periods(kept) == pytest.approx([0.003] * 9, abs=EDGE_S)


@pytest.mark.timeout(30)
def test_switching_frames_never_cuts_a_pulse(board: SimavrBoard, host: FrameHost):
    targets = [1100, 2300, 1700]
    set_pulses(host, targets)
    assert ack(enable(host, 0b111), Command.ENABLE)
    start = command_time_s(board, host)
    for period_us in (4000, 0, 2800, 20000, 0):
        reply = set_frame(host, period_us)
        assert ack(reply, Command.SET_FRAME)
        board.wait_sim_time(reply_time_s(board, reply) + 0.06, WAIT_S)
    for channel, target in enumerate(targets):
        widths = [p.width_us for p in board.pulses(channel, start)]
        assert len(widths) > 20
        assert widths == pytest.approx([target] * len(widths), abs=WIDTH_TOLERANCE_US)
    # Back in slotted frames: 50 Hz, staggered by slot.
    since = board.now_s
    last = [pulses_after(board, ch, since, 3) for ch in range(3)]
    assert periods(last[0]) == pytest.approx([SLOTTED_S] * 2, abs=EDGE_S)
    next_slot = pulses_after(board, 1, last[0][0].rise_s, 1)[0]
    assert next_slot.rise_s - last[0][0].rise_s == pytest.approx(0.003, abs=EDGE_S)


@pytest.mark.timeout(30)
def test_a_move_steps_every_fast_frame(board: SimavrBoard, host: FrameHost):
    set_pulses(host, [1000])
    enable(host, 0b1)
    assert ack(set_frame(host, 5000), Command.SET_FRAME)
    board.wait_sim_time(command_time_s(board, host) + 0.03, WAIT_S)
    reply = set_pulses(host, [2000], move_ms=400)
    assert ack(reply, Command.SET_PULSES)
    start = reply_time_s(board, reply)
    pulses = pulses_after(board, 0, start, 90)

    def planned_us(time_s: float) -> float:
        return min(2000.0, 1000.0 + 2500.0 * max(0.0, time_s - start))

    # As in slotted frames, a pulse takes the width computed at most 2 ms before it starts,
    # only now there is a new pulse, one step further on, every 5 ms.
    for pulse in pulses:
        assert (planned_us(pulse.rise_s - 0.002) - WIDTH_TOLERANCE_US <= pulse.width_us <=
                planned_us(pulse.rise_s) + WIDTH_TOLERANCE_US), pulse
    moving = [p.width_us for p in pulses if p.width_us < 2000 - WIDTH_TOLERANCE_US]
    assert len(moving) >= 75
    steps = [b - a for a, b in zip(moving, moving[1:], strict=False)]
    assert max(steps) <= 2500.0 * 0.005 + 2500.0 * 0.002 + WIDTH_TOLERANCE_US
    assert sum(steps) / len(steps) == pytest.approx(2500.0 * 0.005, rel=0.1)


@pytest.mark.timeout(30)
def test_watchdog_detach_and_reset_end_fast_frames(board: SimavrBoard, host: FrameHost):
    set_pulses(host, [1500, 1500])
    enable(host, 0b11)
    assert ack(set_frame(host, 4000), Command.SET_FRAME)
    timeout = native.encode_set_timeout(host.next_seq(), 150, WatchdogAction.DETACH)
    reply = host.request(timeout)
    assert ack(reply, Command.SET_TIMEOUT)
    silent_from = reply_time_s(board, reply)
    board.wait_sim_time(silent_from + 0.3, WAIT_S)
    last_rise = max(p.rise_s for p in board.pulses(0))
    assert silent_from + 0.150 - 0.004 <= last_rise <= silent_from + 0.152
    assert board.high_mask == 0
    # A reset forgets the fast frame: analog servos get 50 Hz again after any reset.
    board.reset()
    host.wait_frame(lambda f: f.cmd == Reply.READY, WAIT_S)
    set_pulses(host, [1500])
    assert ack(enable(host, 0b1), Command.ENABLE)
    pulses = pulses_after(board, 0, command_time_s(board, host), 4)
    assert periods(pulses) == pytest.approx([SLOTTED_S] * 3, abs=EDGE_S)
