"""The solver's first try: most targets answered without an iteration, as the search would."""

from pathlib import Path

import numpy as np
import pytest

from fabrik_ros.kinematics import Arm, Bend, load_arm, TargetError

CONFIGS = sorted((Path(__file__).resolve().parents[2] / 'config').glob('*.yaml'))
NO_EVEN_ARC = {'al5d'}          # its elbow bends backwards: never an even arc


def samples(arm: Arm, count: int, seed: int) -> np.ndarray:
    """Return (count, n_joints) positions within the limits."""
    low = np.array([j.min_rad for j in arm.joints])
    high = np.array([j.max_rad for j in arm.joints])
    return np.random.default_rng(seed).uniform(low, high, size=(count, len(arm.joints)))


def assert_sound(result, target, arm: Arm) -> None:
    """Assert an answer reaches ``target`` within limits and reports its angles' tool point."""
    assert result.reached and result.residual_m <= arm.options.tolerance_m
    assert arm.within_limits(result.angles_rad)
    assert np.allclose(arm.fk(result.angles_rad)[-1], result.position_m, atol=1e-9)
    assert result.residual_m == pytest.approx(np.linalg.norm(result.position_m - target),
                                              abs=1e-12)


def elbow_bend(arm: Arm, angles) -> float:
    """Return the sine of the elbow's bend (the second pitch joint's geometric angle).

    Its sign is the elbow's branch; near 0 the elbow is straight or folded back on itself.
    """
    elbow = arm.model.pitch_index[1]
    return float(np.sin(arm.joints[elbow].geometric(float(angles[elbow]))))


@pytest.mark.parametrize('path', CONFIGS, ids=lambda p: p.stem)
def test_most_cold_targets_are_answered_by_the_first_try(path: Path):
    arm = load_arm(path)
    rng = np.random.default_rng(7)
    in_plane = np.array([1.0, 1.0 if arm.model.yaw is not None else 0.0, 1.0])
    first_try = 0
    for positions in samples(arm, 300, 7):
        target = arm.fk(positions)[-1] + in_plane * rng.normal(scale=0.01, size=3)
        result = arm.ik(target)
        if result.reached and result.iterations == 0:
            first_try += 1
            assert_sound(result, target, arm)
    assert first_try > 50 or path.stem in NO_EVEN_ARC


@pytest.mark.parametrize('path', CONFIGS, ids=lambda p: p.stem)
def test_a_seed_near_its_target_is_moved_onto_it_on_its_elbow_branch(path: Path):
    """Bend any: the seed's steps answer at once and never flip the elbow."""
    arm = load_arm(path).with_options(bend=Bend.ANY)
    rng = np.random.default_rng(8)
    stepped = 0
    for positions in samples(arm, 200, 8):
        seed = positions + rng.normal(scale=0.02, size=positions.shape)
        seed = np.clip(seed, [j.min_rad for j in arm.joints], [j.max_rad for j in arm.joints])
        target = arm.fk(positions)[-1]
        result = arm.ik(target, seed)
        assert result.reached
        if result.iterations == 0:
            stepped += 1
            assert_sound(result, target, arm)
            bend = elbow_bend(arm, seed)
            if abs(bend) > 0.05:        # clearly bent: the answer bends the same way
                assert np.sign(elbow_bend(arm, result.angles_rad)) == np.sign(bend)
    assert stepped > 100


def test_an_elbow_preference_other_than_any_is_met(arm_4dof: Arm):
    for bend in (Bend.UP, Bend.DOWN):
        arm = arm_4dof.with_options(bend=bend)
        assert arm.ik((0.15, 0.05, 0.12)).reached
        assert arm.ik((0.15, 0.05, 0.12), seed=arm_4dof.home).reached


def test_what_the_first_try_cannot_answer_goes_on_to_the_search(arm_4dof: Arm):
    far = arm_4dof.ik((5.0, 0.0, 0.0))
    assert not far.reached and far.iterations == 0       # stretched toward it: the closest
    near = arm_4dof.ik((0.15, 0.05, 0.12))
    far_seed = arm_4dof.ik((0.1, 0.1, 0.1)).angles_rad
    assert arm_4dof.ik((-0.1, -0.1, 0.2), far_seed).reached      # no near answer: searched
    assert arm_4dof.ik((0.151, 0.05, 0.12), near.angles_rad).iterations == 0
    for bad in (('a', 0.0, 0.0), (float('nan'), 0.0, 0.0), (1.0, 2.0)):
        with pytest.raises(TargetError):
            arm_4dof.ik(bad)
        with pytest.raises(TargetError):
            arm_4dof.ik(bad, arm_4dof.home)
    for seed in ([0.0, 0.0], list(near.angles_rad[:3]) + [float('inf')],
                 list(near.angles_rad[:3]) + [float('nan')]):
        with pytest.raises(TargetError):
            arm_4dof.ik((0.151, 0.05, 0.12), seed)
    with pytest.raises(ValueError):
        arm_4dof.ik((0.151, 0.05, 0.12), 'abcd')


def test_a_seed_a_hair_outside_its_limits_is_clamped(arm_4dof: Arm):
    near = arm_4dof.ik((0.15, 0.05, 0.12)).angles_rad.copy()
    near[0] = arm_4dof.joints[0].max_rad + 1e-7
    assert arm_4dof.ik((0.151, 0.05, 0.12), near).reached
    assert arm_4dof.ik((0.151, 0.05, 0.12), near[None, :]).reached     # one row: read flat


def test_a_stream_of_seeded_targets_moves_the_joints_by_little(arm_4dof: Arm):
    """Least motion: 1 mm steps along a line turn no joint by more than a few degrees."""
    answer = arm_4dof.ik((0.12, 0.0, 0.1))
    for step in range(1, 80):
        target = np.array([0.12, 0.0, 0.1]) + 0.001 * step * np.array([0.6, 0.64, -0.48])
        previous = answer.angles_rad
        answer = arm_4dof.ik(target, seed=previous)
        assert answer.reached and answer.iterations == 0
        assert np.max(np.abs(answer.angles_rad - previous)) < 0.05, step


@pytest.mark.parametrize('name', ['arm_4dof', 'so101'])
def test_a_stream_seeded_with_its_own_answers_answers_as_a_fresh_arm_would(name: str):
    """Seeded with the last answer (a tuple, as a node keeps it), every answer is sound.

    The next step starts from what the last one knew of that answer; a fresh arm, which
    reads the seed, gives the same angles, and a list seed (not the tuple kept) the same.
    """
    path = Path(__file__).resolve().parents[2] / 'config' / f'{name}.yaml'
    arm, fresh = load_arm(path), load_arm(path)
    start = samples(arm, 1, 11)[0]
    seed = tuple(float(a) for a in arm.ik(arm.fk(start)[-1]).angles_rad)
    for step in range(1, 60):
        target = arm.fk(start + 0.003 * step)[-1]
        answer = arm.ik(target, seed)
        assert_sound(answer, target, arm)
        assert answer.iterations == 0
        again = load_arm(path).ik(target, seed)
        assert np.allclose(answer.angles_rad, again.angles_rad, rtol=0.0, atol=1e-12)
        assert np.allclose(answer.angles_rad, fresh.ik(target, list(seed)).angles_rad,
                           rtol=0.0, atol=1e-12)
        seed = tuple(float(a) for a in answer.angles_rad)
