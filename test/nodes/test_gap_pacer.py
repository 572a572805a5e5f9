"""GapPacer: side work right after targets while they stream, never just before one.

At its own rate; its timer takes over when they stop. Pure, times passed in.
"""

import math
import random

import pytest

from fabrik_ros.nodes.gap_pacer import Action, FAST_S, GapPacer, GUARD_S, SETTLE_S

PERIOD_S = 0.05         # joint_states at 20 Hz


def _run(pacer: GapPacer, targets: list[float], end_s: float,
         timer_phase_s: float) -> list[tuple[float, str]]:
    """Feed targets, the work's timer ticks (its own grid) and the settle timer in time order.

    The settle timer is re-armed by each target that asks for it, as rclpy's Timer.reset()
    does, and fires once. Return when the work was done and by what.
    """
    ticks = [timer_phase_s + k * pacer.period_s
             for k in range(math.ceil(end_s / pacer.period_s) + 1)]
    events = sorted([(t, 'target') for t in targets] + [(t, 'timer') for t in ticks if t < end_s])
    work, settle_at = [], math.inf
    while events or settle_at < end_s:
        if events and events[0][0] <= settle_at:
            at, source = events.pop(0)
        else:
            at, source, settle_at = settle_at, 'settle', math.inf
        if source == 'target':
            action = pacer.after_target(at)
            if action is Action.SETTLE:
                settle_at = at + SETTLE_S
            done = action is Action.NOW
        else:
            done = pacer.on_settle(at) if source == 'settle' else pacer.on_timer(at)
        if done:
            work.append((at, source))
    return work


def _stream(rate_hz: float, start_s: float, end_s: float, jitter_s: float = 0.0002,
            seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    count = int((end_s - start_s) * rate_hz)
    return [start_s + k / rate_hz + rng.uniform(-jitter_s, jitter_s) for k in range(count)]


def _rate(work: list[tuple[float, str]], start_s: float, end_s: float) -> float:
    return sum(start_s <= at < end_s for at, _ in work) / (end_s - start_s)


def test_without_targets_the_timer_does_the_work_on_every_tick():
    work = _run(GapPacer(PERIOD_S), [], 2.0, timer_phase_s=0.013)
    assert [source for _, source in work] == ['timer'] * 40


@pytest.mark.parametrize('rate_hz', [20.0, 50.0, 200.0, 500.0])
@pytest.mark.parametrize('phase_s', [0.0, 0.0004, 0.0199, 0.031, 0.0499])
def test_while_targets_stream_they_carry_the_work_at_its_rate(rate_hz, phase_s):
    """The timer's phase is the one a commensurate stream would keep for a whole run."""
    targets = _stream(rate_hz, 0.0, 3.0)
    work = _run(GapPacer(PERIOD_S), targets, 3.0, timer_phase_s=phase_s)
    streaming = [source for at, source in work if targets[1] <= at <= targets[-1]]
    assert streaming and 'timer' not in streaming, 'no work from the timer'
    assert _rate(work, 0.5, 2.5) == pytest.approx(1 / PERIOD_S, rel=0.05)


@pytest.mark.parametrize('rate_hz', [2.0, 5.0, 10.0, 19.0, 20.0, 50.0])
@pytest.mark.parametrize('phase_s', [0.0, 0.0017, 0.0311, 0.0488])
def test_at_ordinary_rates_the_work_waits_for_the_target_to_settle(rate_hz, phase_s):
    """Not right after a target: it is still on its way through the other process and line."""
    targets = _stream(rate_hz, 0.0, 3.0)
    work = _run(GapPacer(PERIOD_S), targets, 3.0, timer_phase_s=phase_s)
    for at, _ in work:
        before = [t for t in targets if t <= at]
        assert not before or at - before[-1] >= SETTLE_S - 1e-9, f'work at {at:.4f} s'
    assert _rate(work, 0.5, 2.5) >= 0.8 / PERIOD_S


@pytest.mark.parametrize('rate_hz', [200.0, 500.0])
def test_when_targets_leave_no_gap_the_work_follows_the_one_nearest_its_due_time(rate_hz):
    assert 1 / rate_hz < FAST_S
    targets = _stream(rate_hz, 0.0, 3.0)
    work = _run(GapPacer(PERIOD_S), targets, 3.0, timer_phase_s=0.01)
    assert {source for at, source in work if at > targets[1]} == {'target'}


@pytest.mark.parametrize('rate_hz', [2.0, 5.0, 10.0, 19.0])
@pytest.mark.parametrize('phase_s', [0.0, 0.0017, 0.0311, 0.0488])
def test_targets_slower_than_the_work_never_find_the_timer_just_before_them(rate_hz, phase_s):
    targets = _stream(rate_hz, 0.0, 3.0)
    work = _run(GapPacer(PERIOD_S), targets, 3.0, timer_phase_s=phase_s)
    for at, source in work:         # from the third target on, two give the interval
        following = [t for t in targets[2:] if t > at]
        if source == 'timer' and following:
            assert following[0] - at > GUARD_S, f'timer work at {at:.4f} s, target after it'
    assert _rate(work, 0.5, 2.5) >= 0.8 / PERIOD_S


def test_once_the_stream_stops_the_timer_takes_over_after_a_period():
    targets = _stream(50.0, 0.0, 1.0)
    work = _run(GapPacer(PERIOD_S), targets, 2.0, timer_phase_s=0.007)
    first_timer = min(at for at, source in work if source == 'timer' and at > targets[1])
    assert targets[-1] < first_timer <= targets[-1] + 2 * PERIOD_S
    assert _rate(work, 1.2, 2.0) == pytest.approx(1 / PERIOD_S, rel=0.1)


@pytest.mark.parametrize('period_s', [0.0, -1.0, math.inf, math.nan])
def test_a_period_that_is_not_positive_and_finite_is_refused_with_its_value(period_s):
    with pytest.raises(ValueError, match='period_s'):
        GapPacer(period_s)


def test_a_fast_stream_leaves_work_to_the_next_target_while_other_work_follows_this_one():
    pacer = GapPacer(PERIOD_S)
    assert pacer.on_timer(0.0)                      # done; next due at PERIOD_S
    step_s = FAST_S / 2
    assert pacer.after_target(step_s) is Action.SETTLE      # the first: no interval yet
    for k in range(2, round(PERIOD_S / step_s)):
        assert pacer.after_target(k * step_s) is Action.NOTHING
    due_s = PERIOD_S
    assert pacer.after_target(due_s, free=False) is Action.NOTHING
    assert pacer.after_target(due_s + step_s) is Action.NOW
