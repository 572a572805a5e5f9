"""Matching frames on the serial line to the targets that produced them (bench/)."""

from pathlib import Path
import sys

import pytest

BENCH = Path(__file__).resolve().parents[2] / 'bench'
sys.path.insert(0, str(BENCH))

from board_timing import Chunk, frames_from_chunks, set_pulses_of  # noqa: E402
from target_matching import match_frames, YawSweep  # noqa: E402

from fabrik_ros.kinematics import load_arm  # noqa: E402
from fabrik_ros.servo_io.protocols import native  # noqa: E402

CONFIG = Path(__file__).resolve().parents[2] / 'config' / 'arm_4dof.yaml'
BYTE_S = 10.0 / 115200


@pytest.fixture(scope='module')
def sweep() -> YawSweep:
    return YawSweep(load_arm(CONFIG))


def test_sweep_pulses_do_not_repeat_within_a_period(sweep):
    pulses = [sweep.pulse(i) for i in range(sweep.period)]
    assert len(set(pulses)) == sweep.period
    assert sweep.pulse(sweep.period + 5) == sweep.pulse(5)


def test_sweep_steps_stay_small_at_the_turns(sweep):
    pulses = [sweep.pulse(i) for i in range(2 * sweep.period)]
    assert max(abs(b - a) for a, b in zip(pulses[:-1], pulses[1:], strict=True)) <= sweep.step_us


def test_solving_the_sweep_gives_each_target_its_own_yaw_pulse(sweep):
    sweep.check()


def test_frames_match_newest_published_target_and_count_skipped_ones(sweep):
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
    assert [set_pulses_of(f.frame) for f in frames] == [(1500, 1600), (1700, 1800)]
    assert frames[0].first_byte_s == pytest.approx(5.0 + BYTE_S)
    assert frames[1].first_byte_s == pytest.approx(6.0 + (1 + len(first) - 9) * BYTE_S)
