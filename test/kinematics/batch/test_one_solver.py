"""One solver: the batch path takes the single-target solver's steps, row by row (issue 13)."""

import numpy as np
import pytest

from fabrik_ros.kinematics import Arm, FabrikSolver, TargetError
from fabrik_ros.kinematics.batch import batch_attempts, batch_solve
from fabrik_ros.kinematics.batch.batch_attempts import iterate
from fabrik_ros.kinematics.single.fabrik import backward_pass, forward_pass
from fabrik_ros.kinematics.single.planar_arm import up_side
from test.kinematics.reference import tool_points


def row_of(pose: list, row: int) -> list[complex]:
    """Return one row of a pose held as arrays (a joint may be one value shared by all rows)."""
    return [complex(np.asarray(p).reshape(-1)[row if np.ndim(p) else 0]) for p in pose]


def in_limit_angles(arm: Arm, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    low = [j.min_rad for j in arm.joints]
    high = [j.max_rad for j in arm.joints]
    return rng.uniform(low, high, size=(count, len(arm.joints)))


def planar_targets(arm: Arm, count: int, seed: int) -> np.ndarray:
    """Return in-plane targets round the chain: inside its reach and a little beyond."""
    rng = np.random.default_rng(seed)
    chain = arm.planar.chain
    radius = rng.uniform(0.05, 1.2, count) * chain.total_length
    return chain.base + radius * np.exp(1j * rng.uniform(-np.pi, np.pi, count))


def test_passes_on_arrays_equal_the_passes_on_each_row(any_arm: Arm):
    planar = any_arm.planar
    targets = planar_targets(any_arm, 200, seed=1)
    sides = up_side(targets - planar.chain.base)
    starts = planar.arc_start(targets, -sides)
    moved = forward_pass(planar.chain, starts, targets, None)
    settled, directions = backward_pass(planar.chain, moved, None)
    for row, target in enumerate(targets):
        one = forward_pass(planar.chain, row_of(starts, row), complex(target), None)
        assert np.allclose(one, row_of(moved, row), rtol=0.0, atol=1e-12)
        points, turned = backward_pass(planar.chain, one, None)
        assert np.allclose(points, row_of(settled, row),
                           rtol=0.0, atol=1e-12)
        assert np.allclose(turned, row_of(directions, row), rtol=0.0, atol=1e-12)


@pytest.mark.parametrize('handed_over', [0, 8], ids=['numpy-only', 'last-rows-single'])
def test_batch_iterations_stop_where_the_single_solver_stops(any_arm: Arm, monkeypatch,
                                                             handed_over: int):
    monkeypatch.setattr(batch_attempts, 'SCALAR_ROWS', handed_over)
    planar, options = any_arm.planar, any_arm.options
    targets = planar_targets(any_arm, 150, seed=2)
    starts = planar.arc_start(targets, -up_side(targets - planar.chain.base))
    points, directions, error, iterations = iterate(planar.chain, starts, targets, options)
    solver = FabrikSolver(options)
    for row, target in enumerate(targets):
        one = solver.solve(planar.chain, complex(target), start=row_of(starts, row))
        assert one.iterations == iterations[row]
        assert one.error_m == pytest.approx(error[row], abs=1e-12)
        assert np.allclose(one.points, row_of(points, row), rtol=0.0, atol=1e-12)


@pytest.mark.parametrize('seeded', [False, True], ids=['cold', 'seeded'])
def test_batch_answers_equal_single_answers_with_the_same_work(any_arm: Arm, seeded: bool):
    angles = in_limit_angles(any_arm, 400, seed=3)
    targets = tool_points(any_arm, angles)
    seeds = None
    if seeded:
        low = np.array([j.min_rad for j in any_arm.joints])
        high = np.array([j.max_rad for j in any_arm.joints])
        noise = np.random.default_rng(4).normal(scale=0.1, size=angles.shape)
        seeds = np.clip(angles + noise, low, high)
    out = any_arm.ik_batch(targets, seeds)
    for row, target in enumerate(targets):
        single = any_arm.ik(target, None if seeds is None else seeds[row])
        assert single.iterations == out.iterations[row]
        assert np.allclose(single.angles_rad, out.angles_rad[row], rtol=0.0, atol=1e-9)
        assert single.residual_m == pytest.approx(out.residual_m[row], abs=1e-12)


def test_batch_matches_single_residuals_on_unreachable_targets(any_arm: Arm):
    targets = np.random.default_rng(5).uniform(-0.5, 0.5, size=(60, 3))
    out = any_arm.ik_batch(targets)
    for row, target in enumerate(targets):
        assert any_arm.ik(target).residual_m == pytest.approx(out.residual_m[row], abs=1e-6)


@pytest.mark.parametrize('seeds', [np.zeros((2, 3)), np.zeros((3, 4)), [[0.0, 0.0, np.nan, 0.0]]])
def test_batch_rejects_seeds_of_the_wrong_shape_or_not_finite(arm_4dof: Arm, seeds):
    with pytest.raises(TargetError) as raised:
        arm_4dof.ik_batch([[0.15, 0.0, 0.1]], seeds)
    assert 'seeds' in str(raised.value)


def test_vectorised_fabrik_rows_take_the_single_solvers_steps(any_arm: Arm, monkeypatch):
    """With every open row on the numpy path (none handed to the single solver one by one)."""
    monkeypatch.setattr(batch_solve, 'SCALAR_ROWS', 0)
    monkeypatch.setattr(batch_attempts, 'SCALAR_ROWS', 0)
    rng = np.random.default_rng(6)
    reachable = tool_points(any_arm, in_limit_angles(any_arm, 300, seed=7))
    targets = np.concatenate([reachable, rng.uniform(-0.4, 0.4, size=(40, 3))])
    out = any_arm.ik_batch(targets)
    for row, target in enumerate(targets):
        single = any_arm.ik(target)
        assert single.residual_m == pytest.approx(out.residual_m[row], abs=1e-9)
        if single.reached:
            assert single.iterations == out.iterations[row]
            assert np.allclose(single.angles_rad, out.angles_rad[row], rtol=0.0, atol=1e-9)
