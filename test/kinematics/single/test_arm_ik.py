"""Arm IK through an independent FK round trip: reach, limits, closest point, continuity."""

import math

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from fabrik_ros.kinematics import Arm, Bend, StopReason, TargetError
from test.kinematics.conftest import shipped_params
from test.kinematics.reference import closest_distances, tool_points

SETTINGS = settings(derandomize=True, max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def joint_angles(arm: Arm):
    """Return a strategy of angle vectors within the arm's limits."""
    return st.tuples(*(st.floats(j.min_rad, j.max_rad) for j in arm.joints)).map(np.array)


def assert_within_limits(arm: Arm, angles: np.ndarray) -> None:
    for joint, angle in zip(arm.joints, angles, strict=True):
        assert joint.min_rad <= angle <= joint.max_rad, (joint.name, angle)


@SETTINGS
@given(data=st.data())
def test_fk_sampled_targets_are_reached_within_limits(any_arm: Arm, data):
    angles = data.draw(joint_angles(any_arm))
    target = tool_points(any_arm, angles[None])[0]
    result = any_arm.ik(target)
    assert result.residual_m < 1e-3
    assert_within_limits(any_arm, result.angles_rad)
    assert np.allclose(tool_points(any_arm, result.angles_rad[None])[0], result.position_m)
    assert np.linalg.norm(result.position_m - target) == pytest.approx(result.residual_m,
                                                                        abs=1e-12)


# Up to 1e300, so that the true distance to the target is a finite float too.
COORDINATE = st.one_of(st.floats(-1.0, 1.0), st.floats(-1e300, 1e300))


@SETTINGS
@pytest.mark.filterwarnings('error')
@given(target=st.tuples(*[COORDINATE] * 3))
def test_any_finite_target_gives_angles_within_limits_and_no_nan(arm_4dof: Arm, target):
    result = arm_4dof.ik(target)
    assert np.all(np.isfinite(result.angles_rad)) and math.isfinite(result.residual_m)
    assert_within_limits(arm_4dof, result.angles_rad)
    assert result.reached == (result.residual_m <= arm_4dof.options.tolerance_m)


@pytest.mark.filterwarnings('error')
@pytest.mark.parametrize('target', [(1.7e308, 0.0, 1.7e308), (-1e308, 1e308, -1e308),
                                    (5e-324, -1.7976931348623157e308, 0.0)])
def test_a_target_near_the_float_maximum_stretches_toward_it_without_overflow(arm_4dof: Arm,
                                                                              target):
    """Regression: complex abs() of such a target raised OverflowError inside the solver."""
    single = arm_4dof.ik(target)
    batch = arm_4dof.ik_batch([target] * 12)
    for angles in (single.angles_rad, *batch.angles_rad):
        assert np.all(np.isfinite(angles))
        assert_within_limits(arm_4dof, angles)
    assert not single.reached and not np.any(batch.reached)
    same_line = arm_4dof.ik(np.array(target) / np.max(np.abs(target)) * 1e9)
    assert np.allclose(single.position_m, same_line.position_m, atol=1e-6), \
        'a far target is answered by its direction, as one 1e9 m away on the same line'


def test_fk_rows_are_joints_then_tool(arm_4dof: Arm):
    points = arm_4dof.fk(arm_4dof.home)
    assert points.shape == (5, 3)
    assert np.allclose(points[:, 2], [0.0, 0.07, 0.175, 0.273, 0.333])
    stretched = arm_4dof.fk([0.0, 0.0, 0.0, 0.0])
    assert np.allclose(stretched[-1], [0.263, 0.0, 0.07])


def test_unreachable_targets_land_on_the_closest_reachable_point(arm_4dof: Arm):
    rng = np.random.default_rng(3)
    directions = rng.normal(size=(12, 3))
    far = directions / np.linalg.norm(directions, axis=1)[:, None] * 0.4 + [0.0, 0.0, 0.07]
    below = np.column_stack([rng.uniform(-0.2, 0.2, (6, 2)), np.full(6, -0.25)])
    near_shoulder = [[0.0, 0.0, 0.07], [0.005, -0.004, 0.072]]
    targets = np.concatenate([far, below, near_shoulder])
    closest = closest_distances(arm_4dof, targets)
    for target, best in zip(targets, closest, strict=True):
        result = arm_4dof.ik(target)
        assert not result.reached
        assert result.stop_reason is not StopReason.REACHED
        # Exact: the reference is a search, so it can only come out a little farther.
        assert best - 1e-6 <= result.residual_m <= best + 1e-9, (target, result.residual_m, best)
        assert_within_limits(arm_4dof, result.angles_rad)


def test_target_beyond_reach_stretches_the_arm_toward_it(arm_4dof: Arm):
    result = arm_4dof.ik((1.0, 0.0, 0.07))
    assert not result.reached
    assert np.allclose(result.angles_rad, [0.0, 0.0, 0.0, 0.0], atol=1e-4)
    assert result.residual_m == pytest.approx(1.0 - 0.263, abs=1e-4)


@pytest.mark.parametrize('bad', [(math.nan, 0.0, 0.1), (0.1, math.inf, 0.1), (0.1, 0.2)])
def test_unusable_target_raises_value_error(arm_4dof: Arm, bad):
    with pytest.raises(ValueError) as caught:
        arm_4dof.ik(bad)
    assert isinstance(caught.value, TargetError)
    assert 'target' in str(caught.value)


@pytest.mark.parametrize('target', [(-0.12, 0.03, 0.15), (-0.2, -0.05, 0.1), (-0.05, 0.0, 0.3)])
def test_target_behind_the_base_is_reached_over_the_top(arm_4dof: Arm, target):
    result = arm_4dof.ik(target)
    assert result.reached
    assert_within_limits(arm_4dof, result.angles_rad)
    facing = math.atan2(-target[1], -target[0])
    assert result.angles_rad[0] == pytest.approx(facing, abs=1e-9)
    elbow_x = arm_4dof.fk(result.angles_rad)[2, 0]
    assert elbow_x * target[0] <= 0.0 or result.angles_rad[1] > math.pi / 2


def test_wide_yaw_arm_faces_the_target_unless_the_seed_faces_away():
    arm = Arm.from_params(shipped_params('arm_6servo.yaml'))
    target = (-0.05, 0.2, 0.15)
    facing = math.atan2(0.2, -0.05)
    assert arm.ik(target).angles_rad[0] == pytest.approx(facing)
    seed = arm.home.copy()
    seed[0], seed[1] = facing - math.pi, math.radians(150.0)
    over_the_top = arm.ik(target, seed=seed)
    assert over_the_top.reached
    assert over_the_top.angles_rad[0] == pytest.approx(facing - math.pi)


def test_yaw_limited_arm_answers_outside_its_yaw_range_with_the_closest_point(any_arm: Arm):
    target = np.array([-0.05, -0.25, 0.05])
    result = any_arm.ik(target)
    best = closest_distances(any_arm, target[None])[0]
    assert result.residual_m <= best + 1e-3
    assert result.reached == (best < any_arm.options.tolerance_m and result.reached)


def test_moving_target_with_seed_never_flips_the_elbow(arm_4dof: Arm):
    steps = np.linspace(0.0, 2.0 * math.pi, 400)
    path = np.column_stack([0.16 + 0.04 * np.cos(steps), 0.05 * np.sin(steps),
                            0.12 + 0.04 * np.sin(2 * steps)])
    for bend in (Bend.UP, Bend.DOWN):
        angles = arm_4dof.ik(path[0], bend=bend).angles_rad
        elbow_sign = np.sign(angles[2])
        for target in path[1:]:
            result = arm_4dof.ik(target, seed=angles)
            assert result.reached
            assert np.max(np.abs(result.angles_rad - angles)) < math.radians(10.0)
            assert np.sign(result.angles_rad[2]) == elbow_sign
            angles = result.angles_rad


def test_seeded_solve_of_a_reached_pose_stays_put(arm_4dof: Arm):
    seed = np.radians([20.0, 60.0, -40.0, -30.0])
    target = tool_points(arm_4dof, seed[None])[0]
    result = arm_4dof.ik(target, seed=seed)
    assert result.iterations == 0
    assert np.allclose(result.angles_rad, seed)


@pytest.mark.parametrize('bend, sign', [(Bend.UP, -1.0), (Bend.DOWN, 1.0)])
def test_bend_preference_picks_the_elbow_side(arm_4dof: Arm, bend, sign):
    # Both elbow branches reach this target within the limits (checked by dense sampling).
    result = arm_4dof.ik((0.12, 0.0, 0.25), bend=bend)
    assert result.reached
    assert np.sign(result.angles_rad[2]) == sign


def test_bend_preference_yields_when_only_the_other_side_reaches(arm_4dof: Arm):
    # Shoulder >= 0 leaves only elbow-up poses for this target.
    result = arm_4dof.ik((0.17, 0.0, 0.12), bend=Bend.DOWN)
    assert result.reached
    assert result.angles_rad[2] < 0.0


def test_bend_from_options_applies_when_no_argument_given(arm_4dof: Arm):
    down = arm_4dof.with_options(bend=Bend.DOWN)
    assert down.ik((0.12, 0.0, 0.25)).angles_rad[2] > 0.0
    assert arm_4dof.options.bend is Bend.ANY


def test_pole_point_turns_the_elbow_toward_it(arm_4dof: Arm):
    target = (0.12, 0.0, 0.25)
    above = arm_4dof.ik(target, pole=(0.1, 0.0, 0.5))
    below = arm_4dof.ik(target, pole=(0.1, 0.0, -0.5))
    assert above.reached and below.reached
    assert arm_4dof.fk(above.angles_rad)[2, 2] > arm_4dof.fk(below.angles_rad)[2, 2]


def test_approach_direction_fixes_the_tool_segment(arm_4dof: Arm):
    down = (0.0, 0.0, -1.0)
    result = arm_4dof.ik((0.15, 0.02, 0.05), approach=down)
    assert result.reached
    assert result.approach_error_rad < 1e-6
    points = arm_4dof.fk(result.angles_rad)
    assert np.allclose((points[-1] - points[-2]) / 0.06, down, atol=1e-6)


def test_impossible_approach_is_reported_not_hidden(arm_4dof: Arm):
    result = arm_4dof.ik((0.25, 0.0, 0.07), approach=(-1.0, 0.0, 0.0))
    assert result.approach_error_rad > 1.0
    assert_within_limits(arm_4dof, result.angles_rad)


def test_roll_joint_keeps_the_seed_angle(any_arm: Arm):
    seed = np.array([j.clamp(0.3) for j in any_arm.joints])
    result = any_arm.ik(any_arm.fk(seed)[-1], seed=seed)
    for index, joint in enumerate(any_arm.joints):
        if joint.kind.value == 'roll':
            assert result.angles_rad[index] == pytest.approx(0.3)


def test_seed_with_wrong_length_is_rejected(arm_4dof: Arm):
    with pytest.raises(TargetError) as caught:
        arm_4dof.ik((0.1, 0.0, 0.1), seed=[0.0, 0.0])
    assert 'seed has 2 values, need 4' in str(caught.value)
