"""Batch IK: vectorised answers as good as single solves, for reachable and unreachable targets."""

import math

import numpy as np
import pytest

from fabrik_ros.kinematics import Arm, TargetError
from test.kinematics.reference import tool_points


def fk_sampled(arm: Arm, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    low = [j.min_rad for j in arm.joints]
    high = [j.max_rad for j in arm.joints]
    return tool_points(arm, rng.uniform(low, high, size=(count, len(arm.joints))))


def test_batch_reaches_fk_sampled_targets_within_limits(any_arm: Arm):
    targets = fk_sampled(any_arm, 3000, seed=8)
    out = any_arm.ik_batch(targets)
    assert out.angles_rad.shape == (3000, len(any_arm.joints))
    assert np.all(out.residual_m < 1e-3)
    assert out.reached.mean() > 0.999
    low = np.array([j.min_rad for j in any_arm.joints])
    high = np.array([j.max_rad for j in any_arm.joints])
    assert np.all((out.angles_rad >= low) & (out.angles_rad <= high))
    assert np.allclose(tool_points(any_arm, out.angles_rad), out.positions_m, atol=1e-12)
    assert np.allclose(np.linalg.norm(out.positions_m - targets, axis=1), out.residual_m)


def test_batch_matches_single_solves_on_unreachable_targets(arm_4dof: Arm):
    rng = np.random.default_rng(9)
    targets = np.concatenate([rng.uniform(-0.6, 0.6, size=(40, 3)),
                              [[0.0, 0.0, 0.07], [0.0, 0.0, -0.3], [1.0, 0.0, 0.07]]])
    out = arm_4dof.ik_batch(targets)
    for target, error in zip(targets, out.residual_m, strict=True):
        assert error <= arm_4dof.ik(target).residual_m + 1e-3


def test_batch_behind_the_base_uses_the_over_the_top_branch(arm_4dof: Arm):
    out = arm_4dof.ik_batch([[-0.12, 0.03, 0.15], [-0.2, 0.0, 0.1]])
    assert out.reached.all()
    assert out.angles_rad[0, 0] == pytest.approx(math.atan2(-0.03, 0.12))


@pytest.mark.parametrize('bad', [np.zeros((3, 2)), np.zeros(3), [[0.1, 0.0, math.nan]]])
def test_batch_rejects_bad_shapes_and_non_finite_targets(arm_4dof: Arm, bad):
    with pytest.raises(TargetError):
        arm_4dof.ik_batch(bad)


@pytest.mark.filterwarnings('error')
def test_huge_targets_give_finite_residuals_without_warnings(arm_4dof: Arm):
    out = arm_4dof.ik_batch([[1e308, 1e308, 1e308], [-1e308, 5e307, -1e308], [1e-300, 0.0, 0.0]])
    assert np.all(np.isfinite(out.residual_m)) and np.all(np.isfinite(out.angles_rad))


def test_empty_batch_gives_empty_answers(arm_4dof: Arm):
    out = arm_4dof.ik_batch(np.zeros((0, 3)))
    assert out.angles_rad.shape == (0, 4) and out.residual_m.shape == (0,)
