"""WarmUp: the target path warmed once before each streamed target, on real rclpy timers."""

import math
import time

import pytest

from fabrik_ros.nodes.gap_pacer import FAST_S
from fabrik_ros.nodes.warm_up import LEAD_S, SLOWEST_S, warm_up_delay_s, WarmUp


@pytest.mark.parametrize('interval_s', [FAST_S, 0.02, 0.05, SLOWEST_S])
def test_a_stream_is_warmed_up_its_lead_before_the_next_target(interval_s):
    assert warm_up_delay_s(interval_s) == pytest.approx(interval_s - LEAD_S)


@pytest.mark.parametrize('interval_s', [0.0, 0.002, FAST_S * 0.99, SLOWEST_S * 1.01, math.inf])
def test_fast_streams_and_lone_targets_are_not_warmed_up(interval_s):
    assert math.isnan(warm_up_delay_s(interval_s))


def _stream(ros, rate_hz: float, seconds: float, enough=lambda warmed: False,
            linger_s: float = 0.3):
    """Stream targets from a timer for ``seconds`` or until ``enough(warmed)``.

    Return the targets' and the warm-ups' times. How many gaps a warm-up fits depends on how
    evenly a busy machine runs the timers, so the tests stream until they have enough.
    """
    node = ros.probe('warm_up')
    targets: list[float] = []
    warmed: list[float] = []
    warm_up = WarmUp(node, lambda: warmed.append(time.monotonic()))
    end_s = time.monotonic() + seconds

    def target() -> None:
        nonlocal end_s
        if time.monotonic() < end_s:
            targets.append(time.monotonic())
            warm_up.after_target()
            if enough(warmed):
                end_s = time.monotonic()

    node.create_timer(1.0 / rate_hz, target)
    ros.spin_until(lambda: time.monotonic() > end_s + linger_s, timeout_s=seconds + 10.0,
                   what=f'{seconds} s of targets at {rate_hz} Hz')
    return targets, warmed


@pytest.mark.parametrize('rate_hz', [20.0, 50.0])
def test_at_ordinary_rates_each_gap_ends_with_one_warm_up(ros, rate_hz):
    targets, warmed = _stream(ros, rate_hz, 10.0, enough=lambda warmed: len(warmed) >= 10)
    assert len(warmed) >= 10, f'{len(warmed)} warm-ups for {len(targets)} targets'
    for at in warmed:
        before = max(t for t in targets if t < at)
        assert at - before >= 0.5 / rate_hz, 'not right after a target: before the next'
    gaps_warmed = [max(t for t in targets if t < at) for at in warmed]
    assert len(gaps_warmed) == len(set(gaps_warmed)), 'once per gap'
    after_last = [at for at in warmed if at > targets[-1]]
    assert len(after_last) <= 1, 'the stream stopped: at most the one warm-up it expected'


def test_a_fast_stream_is_not_warmed_up(ros):
    targets, warmed = _stream(ros, 500.0, 0.5)
    assert len(targets) > 50
    # A busy machine may hold the timer back past FAST_S now and then: only such a gap, the
    # interval before the last target, may bring a warm-up.
    for at in warmed:
        last = max(i for i, t in enumerate(targets) if t < at)
        assert last > 0 and targets[last] - targets[last - 1] > FAST_S - 0.001, (
            'a warm-up in a fast stream')



def test_upstream_warm_ups_replace_the_timers_once_per_gap_and_only_in_a_stream(ros):
    node = ros.probe('warm_up_upstream')
    targets: list[float] = []
    warmed: list[tuple[float, bool]] = []      # (when, by the upstream's call)
    from_upstream = False
    warm_up = WarmUp(node, lambda: warmed.append((time.monotonic(), from_upstream)))
    warm_up.upstream_warms_up()
    assert not warmed, 'no target yet: no stream to warm up for'
    interval_s = 0.05

    def upstream() -> None:     # well before this node's own timer would run (LEAD_S)
        nonlocal from_upstream
        upstream_timer.cancel()
        from_upstream = True
        warm_up.upstream_warms_up()
        warm_up.upstream_warms_up()      # a second (or hostile) message in the same gap
        from_upstream = False

    upstream_timer = node.create_timer(interval_s - 4 * LEAD_S, upstream)
    upstream_timer.cancel()

    def target() -> None:
        targets.append(time.monotonic())
        warm_up.after_target()
        upstream_timer.reset()

    def per_gap() -> list[list[bool]]:
        gaps = list(zip(targets, targets[1:], strict=False))
        return [[by for at, by in warmed if before < at < after] for before, after in gaps]

    node.create_timer(interval_s, target)
    # A busy machine may run the upstream's timer after this node's own now and then: stream
    # until ten gaps were warmed by the upstream.
    ros.spin_until(lambda: sum(runs == [True] for runs in per_gap()) >= 10 or len(targets) >= 200,
                   timeout_s=20.0, what='ten gaps warmed by the upstream')
    assert all(len(runs) <= 1 for runs in per_gap()), f'once per gap: {per_gap()}'
    assert sum(runs == [True] for runs in per_gap()) >= 10, per_gap()
