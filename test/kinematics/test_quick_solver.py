"""The float paths answer exactly as the general solver does, or leave the target to it."""

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from fabrik_ros.kinematics import Arm, Bend, load_arm
from fabrik_ros.kinematics.single.quick_arc import QuickArc

CONFIGS = sorted((Path(__file__).resolve().parents[2] / 'config').glob('*.yaml'))
NO_EVEN_ARC = {'al5d'}          # its elbow bends backwards: never an even arc


def general(arm: Arm) -> Arm:
    """Return a copy of ``arm`` whose solves never take the float paths.

    The general solver keeps the seed's step (its own first attempt from a seed), not the
    float path's choice of plane, reading of the seed and assembly of the answer around it.
    """
    copy = arm.with_options()
    none = SimpleNamespace(cold=lambda target: None, seeded=lambda target, seed: None,
                           step=copy._quick.step)
    object.__setattr__(copy, '_quick', none)
    return copy


def samples(arm: Arm, count: int, seed: int) -> np.ndarray:
    """Return (count, n_joints) positions within the limits."""
    low = np.array([j.min_rad for j in arm.joints])
    high = np.array([j.max_rad for j in arm.joints])
    return np.random.default_rng(seed).uniform(low, high, size=(count, len(arm.joints)))


def assert_same(quick, expected, arm: Arm) -> None:
    """Assert two answers agree, and the quick one's tool point is its angles' FK."""
    assert quick.reached and expected.reached and quick.iterations == expected.iterations == 0
    assert np.allclose(quick.angles_rad, expected.angles_rad, atol=1e-9)
    assert np.allclose(quick.position_m, expected.position_m, atol=1e-9)
    assert quick.residual_m == pytest.approx(expected.residual_m, abs=1e-12)
    assert arm.within_limits(quick.angles_rad)
    assert np.allclose(arm.fk(quick.angles_rad)[-1], quick.position_m, atol=1e-9)


@pytest.mark.parametrize('path', CONFIGS, ids=lambda p: p.stem)
def test_a_cold_solve_on_floats_answers_as_the_general_solver(path: Path):
    arm = load_arm(path)
    slow = general(arm)
    rng = np.random.default_rng(7)
    in_plane = np.array([1.0, 1.0 if arm.model.yaw is not None else 0.0, 1.0])
    answered = 0
    for positions in samples(arm, 300, 7):
        target = arm.fk(positions)[-1] + in_plane * rng.normal(scale=0.01, size=3)
        quick = arm._quick.cold(target) if arm.options.bend is Bend.ANY else None
        if quick is not None:
            answered += 1
            assert_same(quick, slow.ik(target), arm)
            assert_same(arm.ik(target), quick, arm)
    assert answered > 50 or path.stem in NO_EVEN_ARC or arm.options.bend is not Bend.ANY


@pytest.mark.parametrize('path', CONFIGS, ids=lambda p: p.stem)
def test_a_seeded_solve_on_floats_answers_as_the_general_solver(path: Path):
    arm = load_arm(path)
    slow = general(arm)
    rng = np.random.default_rng(8)
    answered = 0
    for positions in samples(arm, 200, 8):
        target = arm.fk(positions)[-1]
        seed = positions + rng.normal(scale=0.05, size=positions.shape)
        quick = arm._quick.seeded(target, seed) if arm.options.bend is Bend.ANY else None
        if quick is not None:
            answered += 1
            assert_same(quick, slow.ik(target, seed), arm)
            assert_same(arm.ik(target, seed), quick, arm)
    assert answered > 100 or arm.options.bend is not Bend.ANY


def test_an_elbow_preference_other_than_any_takes_the_general_solver(arm_4dof: Arm):
    """The float paths try the answers of bend any; the others are the general solver's."""
    up = arm_4dof.with_options(bend=Bend.UP)
    object.__setattr__(up, '_quick', SimpleNamespace(cold=None, seeded=None))  # never called
    assert up.ik((0.15, 0.05, 0.12)).reached
    assert up.ik((0.15, 0.05, 0.12), seed=arm_4dof.home).reached


def test_the_float_paths_leave_what_they_do_not_answer_to_the_solver(arm_4dof: Arm):
    arc = QuickArc(arm_4dof.planar, arm_4dof.model.yaw, 0.0, (0.0, 0.0, 0.0), 1e-4)
    assert arc.solve(5.0, 0.0, 0.0) is None          # beyond reach: the stretched pose
    assert arc.solve(0.0, 0.0, 0.07) is None         # on the shoulder itself
    quick = arm_4dof._quick
    for bad in (('a', 0.0, 0.0), (float('nan'), 0.0, 0.0), (1e300, 0.0, 0.0), (1.0, 2.0)):
        assert quick.cold(bad) is None and quick.seeded(bad, arm_4dof.home) is None
    near = list(arm_4dof.ik((0.15, 0.05, 0.12)).angles_rad)
    assert quick.seeded((0.151, 0.05, 0.12), near) is not None
    for seed in ([0.0, 0.0], near[:3] + [float('inf')], near[:3] + [float('nan')], 'abcd', None):
        assert quick.seeded((0.151, 0.05, 0.12), seed) is None
    assert quick.seeded((0.5, 0.0, 0.2), arm_4dof.home) is None     # out of reach
    far_seed = arm_4dof.ik((0.1, 0.1, 0.1)).angles_rad
    assert quick.seeded((-0.1, -0.1, 0.2), far_seed) is None    # no near answer


def test_a_stream_of_seeded_targets_moves_the_joints_by_little(arm_4dof: Arm):
    """Least motion: 1 mm steps along a line turn no joint by more than a few degrees."""
    answer = arm_4dof.ik((0.12, 0.0, 0.1))
    for step in range(1, 80):
        target = np.array([0.12, 0.0, 0.1]) + 0.001 * step * np.array([0.6, 0.64, -0.48])
        previous = answer.angles_rad
        answer = arm_4dof.ik(target, seed=previous)
        assert answer.reached
        assert np.max(np.abs(answer.angles_rad - previous)) < 0.05, step
