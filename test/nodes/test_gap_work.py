"""GapWork: a node's side work after streamed targets, on a real rclpy executor and timers."""

import time

import pytest

from fabrik_ros.nodes.gap_pacer import SETTLE_S
from fabrik_ros.nodes.gap_work import GapWork

PERIODS_S = {'states': 0.05, 'diagnostics': 0.2}


def _stream(ros, rate_hz: float, seconds: float):
    """Stream targets from a timer at ``rate_hz``; return the targets' and the work's times.

    Each piece also has its own timer, which asks its pacer, as the nodes wire them. Work done
    by the target's own call is noted with that target's number.
    """
    node = ros.probe('gap_work')
    gap_work = GapWork(node)
    targets: list[float] = []
    work: list[tuple[str, float, int]] = []
    inside = [-1]           # the target whose after_target call is running, -1: none

    def piece(name: str):
        def done() -> None:
            work.append((name, time.monotonic(), inside[0]))
        return done

    def own_timer(pacer, done):
        def tick() -> None:         # rclpy would hand a callback with arguments a TimerInfo
            if pacer.on_timer(time.monotonic()):
                done()
        return tick

    for name, period_s in PERIODS_S.items():
        done = piece(name)
        node.create_timer(period_s, own_timer(gap_work.add(period_s, done), done))

    def target() -> None:
        targets.append(time.monotonic())
        inside[0] = len(targets) - 1
        gap_work.after_target()
        inside[0] = -1

    node.create_timer(1.0 / rate_hz, target)
    end_s = time.monotonic() + seconds
    ros.spin_until(lambda: time.monotonic() > end_s, timeout_s=seconds + 10.0,
                   what=f'{seconds} s of targets at {rate_hz} Hz')
    return targets, work


@pytest.mark.parametrize('rate_hz', [20.0, 50.0])
def test_at_ordinary_rates_every_piece_waits_for_the_target_to_settle(ros, rate_hz):
    targets, work = _stream(ros, rate_hz, 1.5)
    assert {name for name, _, _ in work} == set(PERIODS_S), f'work done: {work}'
    for name, at, _ in work:
        before = [t for t in targets if t <= at]
        assert not before or at - before[-1] >= SETTLE_S - 1e-4, (
            f'{name} {1e3 * (at - before[-1]):.2f} ms after a target')


def test_when_targets_leave_no_gap_at_most_one_piece_follows_each(ros):
    targets, work = _stream(ros, 250.0, 1.5)
    followed = [index for _, _, index in work if index >= 0]
    assert followed, f'no work right after a target: {work}'
    assert len(followed) == len(set(followed)), 'two pieces after one target'
    assert {name for name, _, _ in work} == set(PERIODS_S), f'work done: {work}'
