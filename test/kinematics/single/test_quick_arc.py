"""The even-arc closed form on floats answers exactly as the general solver does, or not at all."""

from pathlib import Path

import numpy as np
import pytest

from fabrik_ros.kinematics import Arm, load_arm
from fabrik_ros.kinematics.single.quick_arc import QuickArc

CONFIGS = sorted((Path(__file__).resolve().parents[3] / 'config').glob('*.yaml'))


def general(arm: Arm) -> Arm:
    """Return a copy of ``arm`` whose cold solves skip the float path."""
    copy = arm.with_options()
    object.__setattr__(copy, '_quick_answer', lambda target: None)
    return copy


@pytest.mark.parametrize('path', CONFIGS, ids=lambda p: p.stem)
def test_the_float_path_answers_as_the_general_solver(path: Path):
    arm = load_arm(path)
    slow = general(arm)
    rng = np.random.default_rng(7)
    low = np.array([j.min_rad for j in arm.joints])
    high = np.array([j.max_rad for j in arm.joints])
    answered = 0
    in_plane = np.array([1.0, 1.0 if arm.model.yaw is not None else 0.0, 1.0])
    for positions in rng.uniform(low, high, size=(300, len(arm.joints))):
        target = arm.fk(positions)[-1] + in_plane * rng.normal(scale=0.01, size=3)
        quick = arm._quick_answer(target)
        if quick is None:
            continue
        answered += 1
        expected = slow.ik(target)
        assert quick.reached and expected.reached
        assert np.allclose(quick.angles_rad, expected.angles_rad, atol=1e-9)
        assert np.allclose(quick.position_m, expected.position_m, atol=1e-9)
        assert quick.residual_m == pytest.approx(expected.residual_m, abs=1e-12)
        assert np.allclose(arm.fk(quick.angles_rad)[-1], quick.position_m, atol=1e-9)
    if path.stem != 'al5d':     # its elbow bends backwards: never an even arc
        assert answered > 50


def test_the_float_path_leaves_what_it_does_not_answer_to_the_solver(arm_4dof: Arm):
    quick = QuickArc(arm_4dof.planar, arm_4dof.model.yaw, 0.0, (0.0, 0.0, 0.0), 1e-4)
    assert quick.solve(5.0, 0.0, 0.0) is None          # beyond reach: the stretched pose
    assert quick.solve(0.0, 0.0, 0.07) is None         # on the shoulder itself
    assert arm_4dof._quick_answer(('a', 0.0, 0.0)) is None
    assert arm_4dof._quick_answer((float('nan'), 0.0, 0.0)) is None
    reached = arm_4dof.ik((0.15, 0.05, 0.12))
    assert reached.reached and reached.iterations == 0
