"""Matching frames on the serial line to the targets that produced them (bench/)."""

from pathlib import Path
import sys

import pytest

BENCH = Path(__file__).resolve().parents[2] / 'bench'
sys.path.insert(0, str(BENCH))

from board_timing import Chunk, frames_from_chunks, pulse_of  # noqa: E402
from target_matching import match_frames, staleness, YawSweep  # noqa: E402

from fabrik_ros.kinematics import load_arm  # noqa: E402
from fabrik_ros.servo_io import Protocol  # noqa: E402
from fabrik_ros.servo_io.protocols import maestro, native, ssc32  # noqa: E402

CONFIG = Path(__file__).resolve().parents[2] / 'config' / 'arm_4dof.yaml'
BYTE_S = 10.0 / 115200


@pytest.fixture(scope='module')
def load():
    return load_arm(CONFIG)


@pytest.fixture(scope='module')
def sweep(load) -> YawSweep:
    return YawSweep(load)


def test_a_held_target_carries_no_new_pulse_and_is_never_matched(sweep):
    hold = next(i for i in range(1, 20) if sweep.is_hold(i))
    stamps = [0.001 * i for i in range(hold + 2)]
    match = match_frames([(0.001 * hold + 0.0005, sweep.pulse(hold))], stamps, 0, sweep)
    assert list(match.latency_s) == [hold - 1]


def test_sweep_pulses_do_not_repeat_within_a_period_except_where_held(sweep):
    moving = [sweep.pulse(i) for i in range(sweep.period) if not sweep.is_hold(i)]
    assert len(set(moving)) == len(moving) == 2 * sweep.per_ramp
    assert all(sweep.pulse(i) == sweep.pulse(i - 1) for i in range(1, sweep.period)
               if sweep.is_hold(i))
    assert sweep.pulse(sweep.period + 5) == sweep.pulse(5)


def test_sweep_stays_within_the_shipped_speed_limit_at_500_hz(sweep):
    rad_per_us = sweep.arm.servo_map.to_angles([1501, 1500, 1500, 1500])[sweep.joint] - \
        sweep.arm.servo_map.to_angles([1500, 1500, 1500, 1500])[sweep.joint]
    travel_us = sum(abs(sweep.pulse(i + 1) - sweep.pulse(i)) for i in range(sweep.period))
    assert travel_us * abs(rad_per_us) * 500 / sweep.period < 1.5


def test_sweep_steps_stay_small_at_the_turns(sweep):
    pulses = [sweep.pulse(i) for i in range(2 * sweep.period)]
    assert max(abs(b - a) for a, b in zip(pulses[:-1], pulses[1:], strict=True)) <= sweep.step_us


def test_solving_the_sweep_gives_each_target_its_own_yaw_pulse(sweep):
    sweep.check()


def test_frames_match_newest_published_target_and_count_skipped_ones(load):
    sweep = YawSweep(load, hold_every=0, step_us=6, per_ramp=200)
    stamps = [10.0 + 0.001 * i for i in range(10)]
    frames = [(10.0025, sweep.pulse(2)),    # carries target 2
              (10.0026, sweep.pulse(2)),    # the same again: nothing new
              (10.0061, sweep.pulse(6)),    # targets 3..5 were coalesced
              (10.0062, sweep.pulse(7)),    # target 7 is not published yet
              (10.0095, sweep.pulse(9))]
    match = match_frames(frames, stamps, 0, sweep)
    assert sorted(match.latency_s) == [2, 6, 9]
    assert match.latency_s[2] == pytest.approx(0.0005)
    assert match.latency_s[9] == pytest.approx(0.0005)
    assert match.unmatched_frames == 2


def test_a_frame_never_matches_a_target_older_than_the_previous_match(sweep):
    stamps = [0.001 * i for i in range(sweep.period + 3)]
    old = sweep.pulse(1)
    frames = [(0.0015, old), (0.001 * (sweep.period + 2), old)]
    match = match_frames(frames, stamps, 0, sweep)
    assert sorted(match.latency_s) == [1, sweep.period + 1]


def test_frames_are_stamped_with_their_first_byte_arrival():
    first = native.encode_set_pulses(1, [1500, 1600], 10)
    second = native.encode_set_pulses(2, [1700, 1800], 10)
    data = b'\x00' + first + second
    chunks = [Chunk(5.0, data[:9]), Chunk(6.0, data[9:])]
    frames = frames_from_chunks(chunks, 115200)
    assert [pulse_of(f.frame, 1) for f in frames] == [1600, 1800]
    assert frames[0].first_byte_s == pytest.approx(5.0 + BYTE_S)
    assert frames[1].first_byte_s == pytest.approx(6.0 + (1 + len(first) - 9) * BYTE_S)


def test_ssc32_and_maestro_commands_are_stamped_from_their_first_byte():
    move = ssc32.encode_group_move({0: 1500, 1: 1600}, time_ms=20)
    poll = ssc32.encode_query_pulse_widths([0, 1])
    frames = frames_from_chunks([Chunk(1.0, poll + move)], 115200, Protocol.SSC32)
    assert [pulse_of(f.frame, 1) for f in frames] == [None, 1600]
    assert frames[1].first_byte_s == pytest.approx(1.0 + len(poll) * BYTE_S)
    data = (maestro.encode_set_target(1, 1400) + maestro.encode_set_speed(0, 7)
            + maestro.encode_set_target(0, 1500))
    frames = frames_from_chunks([Chunk(2.0, data)], 115200, Protocol.MAESTRO)
    assert [pulse_of(f.frame, 0) for f in frames] == [None, None, 1500]
    assert frames[2].first_byte_s == pytest.approx(2.0 + 4 * BYTE_S)    # from its Set Speed


def test_staleness_waits_for_the_frame_that_carries_a_target_or_a_newer_one(load):
    sweep = YawSweep(load, hold_every=0, step_us=6, per_ramp=200)
    stamps = [0.001 * i for i in range(6)]
    frames = [(0.0015, sweep.pulse(1)), (0.0045, sweep.pulse(4))]    # 2 and 3 coalesced
    match = match_frames(frames, stamps, 0, sweep)
    assert staleness(match, stamps, 0, sweep, 1) == pytest.approx([0.0005, 0.0025, 0.0015,
                                                                  0.0005])
