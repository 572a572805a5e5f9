"""Closed-form answers: the even arc and the tool triangle, checked through forward kinematics."""

import math

import numpy as np
import pytest

from fabrik_ros.kinematics import Arm, StopReason
from fabrik_ros.kinematics.single.closed_form import closed_form, triangle_angles, within
from fabrik_ros.kinematics.single.planar_arm import side_of
from test.kinematics.reference import closest_distances, tool_points


def in_plane_targets(arm: Arm, count: int, seed: int) -> np.ndarray:
    """Return planar tool points of random in-limit pitch angles."""
    rng = np.random.default_rng(seed)
    hinges = arm.planar.chain.constraints
    angles = rng.uniform([h.min_rad for h in hinges], [h.max_rad for h in hinges],
                         size=(count, len(hinges)))
    return np.array([arm.planar.points(list(row))[-1] for row in angles])


def test_closed_form_poses_are_in_limits_and_on_target(any_arm: Arm):
    planar, tolerance = any_arm.planar, any_arm.options.tolerance_m
    answered = 0
    for target in in_plane_targets(any_arm, 300, seed=1):
        found = closed_form(planar, complex(target), 0, tolerance)
        if found is None:
            continue
        angles, tip = found
        answered += 1
        assert within(planar.chain, angles)
        assert abs(planar.points(angles)[-1] - tip) < 1e-12
        assert abs(tip - target) <= tolerance
    assert answered >= 0.9 * 300


@pytest.mark.parametrize('side', [1, -1])
def test_closed_form_keeps_the_asked_elbow_side(arm_4dof: Arm, side: int):
    planar = arm_4dof.planar
    for target in in_plane_targets(arm_4dof, 100, seed=2):
        found = closed_form(planar, complex(target), side, 1e-4)
        if found is not None:
            assert side_of(planar.points(found[0])) != -side


def test_triangle_places_the_tool_on_the_target_along_the_asked_direction(arm_4dof: Arm):
    chain = arm_4dof.planar.chain
    target = complex(0.15, 0.12)
    angles, reachable = triangle_angles(chain, target, -0.4, -1)
    assert reachable
    points = arm_4dof.planar.points(angles)
    assert abs(points[-1] - target) < 1e-12
    last = points[-1] - points[-2]
    assert math.atan2(last.imag, last.real) == pytest.approx(-0.4)


def test_targets_beyond_reach_get_the_chain_stretched_toward_them(arm_4dof: Arm):
    planar = arm_4dof.planar
    target = complex(1.0, 0.5)
    angles, tip = closed_form(planar, target, 0, 1e-4)
    aim = target - planar.chain.base
    assert angles[1:] == [0.0, 0.0]
    assert abs(tip - target) == pytest.approx(abs(aim) - planar.chain.total_length, abs=1e-12)


def test_no_stretched_answer_where_the_limits_forbid_pointing_at_the_target(arm_4dof: Arm):
    below_the_shoulder = complex(0.5, -0.5)  # the shoulder cannot point below the horizontal
    assert closed_form(arm_4dof.planar, below_the_shoulder, 0, 1e-4) is None


def test_stretched_answers_come_as_close_as_the_independent_search(arm_4dof: Arm):
    targets = np.array([[0.5, 0.1, 0.3], [0.2, -0.4, 0.5], [0.0, 0.6, 0.2]])
    closest = closest_distances(arm_4dof, targets)
    for target, distance in zip(targets, closest, strict=True):
        result = arm_4dof.ik(target)
        assert result.iterations == 0 and result.stop_reason is StopReason.UNREACHABLE
        assert result.residual_m == pytest.approx(distance, abs=1e-6)


def test_ik_answers_in_closed_form_with_no_iterations(arm_4dof: Arm):
    target = tool_points(arm_4dof, np.array([[0.2, 1.0, -0.6, 0.3]]))[0]
    result = arm_4dof.ik(target)
    assert result.iterations == 0 and result.stop_reason is StopReason.REACHED
    assert np.linalg.norm(arm_4dof.fk(result.angles_rad)[-1] - target) < 1e-4
    assert np.allclose(arm_4dof.fk(result.angles_rad)[-1], result.position_m, atol=1e-12)
