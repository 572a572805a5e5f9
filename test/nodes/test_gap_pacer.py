"""GapPacer: side work right after targets while they stream, never just before one.

At its own rate; its timer takes over when they stop. Pure, times passed in.
"""

import math
import random

import pytest

from fabrik_ros.nodes.gap_pacer import GapPacer, GUARD_S

PERIOD_S = 0.05         # joint_states at 20 Hz


def _run(pacer: GapPacer, targets: list[float], end_s: float,
         timer_phase_s: float) -> list[tuple[float, str]]:
    """Feed targets and the work's timer ticks (its own grid) in time order; return the work."""
    ticks = [timer_phase_s + k * pacer.period_s
             for k in range(math.ceil(end_s / pacer.period_s) + 1)]
    events = sorted([(t, 'target') for t in targets] + [(t, 'timer') for t in ticks if t < end_s])
    work = []
    for at, source in events:
        if pacer.after_target(at) if source == 'target' else pacer.on_timer(at):
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
def test_while_targets_stream_the_work_follows_a_target_and_keeps_its_rate(rate_hz, phase_s):
    """The timer's phase is the one a commensurate stream would keep for a whole run."""
    targets = _stream(rate_hz, 0.0, 3.0)
    work = _run(GapPacer(PERIOD_S), targets, 3.0, timer_phase_s=phase_s)
    streaming = [source for at, source in work if targets[1] <= at <= targets[-1]]
    assert streaming and set(streaming) == {'target'}, 'no work from the timer'
    assert _rate(work, 0.5, 2.5) == pytest.approx(1 / PERIOD_S, rel=0.05)


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
