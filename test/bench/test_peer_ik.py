"""The peer comparison (bench/): its docs/performance.md table; checks where RTB is installed."""

from dataclasses import replace
from pathlib import Path
import sys

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / 'bench'
sys.path.insert(0, str(BENCH))

from readme_tables import peer_table  # noqa: E402

from fabrik_ros.kinematics import load_arm  # noqa: E402

CONFIG = Path(__file__).resolve().parents[2] / 'config' / 'arm_4dof.yaml'


def _figures(median_us: float) -> dict:
    return {'targets': 10, 'success_rate': 1.0, 'us_median': median_us, 'us_p90': 2 * median_us,
            'us_p99': 3 * median_us, 'error_p99_m': 1e-5}


def _arm_report() -> dict:
    return {'peer_model': 'ETS built from the loaded arm', 'fk_error_max_m': 1e-16,
            'peer_best_call': "ets.ik_LM(method='chan', k=0.2), q0 = middle of the limits",
            'single': {'ours': _figures(20.0), 'rtb best call': _figures(15.0),
                       'rtb ik_LM default call': _figures(40.0)},
            'stream': {'ours, seeded': _figures(60.0),
                       'rtb best call, q0 = previous': _figures(10.0)},
            'median_ratio': 20.0 / 15.0, 'stream_median_ratio': 6.0}


def _results(arms: dict) -> dict:
    row = {'solves_per_s': 1.0, 'solves_per_cpu_s': 1.0, 'success_rate': 1.0}
    return {'peer_ik': {'arms': arms,
                        'unreachable': {'us_median': 100.0, 'us_p99': 200.0,
                                        'closest_within_1mm_rate': 1.0},
                        'batch': [{'targets': 1000, 'cold': row, 'seeded': row}]}}


def test_every_arm_shows_both_target_kinds_each_solver_and_its_ratios():
    lines = peer_table(_results({'arm_4dof': _arm_report(), 'so101': _arm_report()}))
    for arm in ('arm_4dof', 'so101'):
        rows = [line for line in lines if line.startswith(f'| {arm} |')]
        assert [row.split(' | ')[2] for row in rows] == [
            'ours', 'rtb best call', 'rtb ik_LM default call', 'ours, seeded',
            'rtb best call, q0 = previous']
        note = next(line for line in lines if line.startswith(f'- {arm}:'))
        assert '1.33 on random targets, 6.00 in the stream (goal <= 0.5)' in note
        assert "ets.ik_LM(method='chan', k=0.2)" in note


def test_a_skipped_arm_shows_why_and_no_rows():
    lines = peer_table(_results({'arm_4dof': _arm_report(),
                                 'so101': {'skipped': 'load_arm(so101.yaml): refused'}}))
    assert not [line for line in lines if line.startswith('| so101 |')]
    assert '- so101: skipped, load_arm(so101.yaml): refused' in lines


def test_results_of_the_older_peer_bench_ask_for_a_rerun():
    lines = peer_table({'peer_ik': {'peer': 'roboticstoolbox-python', 'single': {}}})
    assert lines == ['(peer figures written by an older bench/peer_ik.py: re-run `make bench`)']


def test_the_peer_model_is_refused_when_it_is_not_the_arm():
    pytest.importorskip('roboticstoolbox')
    import peer_ik
    arm = load_arm(CONFIG)
    rng = np.random.default_rng(1)
    peer = peer_ik.built_peer(arm)
    _, agreement = peer_ik.check_models(arm, peer, peer_ik.BUILT_TOLERANCE_M, rng, count=50)
    assert agreement['fk_error_max_m'] <= peer_ik.BUILT_TOLERANCE_M
    shorter = peer_ik.built_peer(_shortened(arm))
    with pytest.raises(RuntimeError, match='disagrees with arm.fk'):
        peer_ik.check_models(arm, shorter, peer_ik.BUILT_TOLERANCE_M, rng, count=50)


def test_the_stream_steps_under_a_millimetre_and_runs_on_between_waypoints():
    pytest.importorskip('roboticstoolbox')
    import peer_ik
    arm = load_arm(CONFIG)
    peer = peer_ik.built_peer(arm)
    stream = peer_ik.stream_targets(peer, peer_ik.arm_limits(arm), np.random.default_rng(3), 600)
    steps = np.linalg.norm(np.diff(stream, axis=0), axis=1)
    assert len(stream) == 600
    assert steps.max() <= peer_ik.STREAM_STEP_M
    assert np.median(steps) > 0.5 * peer_ik.STREAM_STEP_M


def _shortened(arm):
    """Return ``arm`` with its first link 1 mm shorter."""
    first, *rest = arm.links
    return replace(arm, links=(replace(first, length_m=first.length_m - 1e-3), *rest))


def test_a_short_stream_alternates_both_solvers_and_counts_no_elbow_flip():
    """Both follow 40 nearby targets from their previous answers; the report has the ratio."""
    pytest.importorskip('roboticstoolbox')
    import peer_ik
    arm = load_arm(CONFIG)
    peer = peer_ik.built_peer(arm)
    limits = peer_ik.arm_limits(arm)
    call = peer_ik.peer_calls(peer)[3]          # ik_LM chan, k 0.2
    stream = peer_ik.stream_targets(peer, limits, np.random.default_rng(5), 40)
    report = peer_ik.stream_run(arm, peer, call, limits, stream)
    ours, theirs = report['ours, seeded'], report['rtb best call, q0 = previous']
    assert ours['targets'] == theirs['targets'] == 39
    assert ours['success_rate'] == theirs['success_rate'] == 1.0
    assert ours['elbow_flips'] == 0
    assert ours['us_median'] > 0.0 and theirs['us_median'] > 0.0


def test_an_elbow_flip_is_counted_and_a_crossing_through_straight_is_not():
    pytest.importorskip('roboticstoolbox')
    import peer_ik
    arm = load_arm(CONFIG)
    index = arm.model.pitch_index[1]
    joint = arm.joints[index]

    def pose(bend_rad: float) -> np.ndarray:
        angles = np.array(arm.home, dtype=float)
        angles[index] = joint.position(bend_rad)
        return angles

    flip = [pose(0.6), pose(0.5), pose(-0.5)]
    through_straight = [pose(0.2), pose(0.01), pose(-0.02), pose(-0.2)]
    assert peer_ik.elbow_flips(arm, flip) == 1
    assert peer_ik.elbow_flips(arm, through_straight) == 0
