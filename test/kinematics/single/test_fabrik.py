"""General FABRIK chains, 2D and 3D, free and hinge-limited, through the same core."""

import cmath
import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from fabrik_ros.kinematics import (
    Chain,
    FabrikSolver,
    planar_angles,
    planar_points,
    solve_planar_chain,
    SolverOptions,
    StopReason,
    TargetError,
    Vec3,
)
from fabrik_ros.kinematics.single.fabrik import backward_pass, forward_pass

SOLVER = FabrikSolver(SolverOptions(tolerance_m=1e-6, max_iterations=200,
                                    min_improvement_m=1e-12))


def lengths_of(points) -> list[float]:
    return [abs(b - a) for a, b in zip(points, points[1:], strict=False)]


def reach_between(lengths, fraction: float) -> float:
    """Return a distance between the chain's shortest and longest reach."""
    shortest = max(0.0, 2.0 * max(lengths) - sum(lengths))
    return shortest + fraction * (sum(lengths) - shortest)


@settings(derandomize=True, max_examples=100, deadline=None)
@given(lengths=st.lists(st.floats(0.1, 2.0), min_size=2, max_size=12),
       heading=st.floats(-math.pi, math.pi), fraction=st.floats(0.1, 0.9))
def test_free_planar_chain_reaches_targets_keeping_bone_lengths(lengths, heading, fraction):
    chain = Chain.planar(lengths)
    target = cmath.rect(reach_between(lengths, fraction), heading)
    solution = SOLVER.solve(chain, target)
    assert solution.error_m < 1e-3
    assert lengths_of(solution.points) == pytest.approx(lengths, rel=1e-9)
    assert solution.points[0] == chain.base


@settings(derandomize=True, max_examples=100, deadline=None)
@given(lengths=st.lists(st.floats(0.1, 2.0), min_size=2, max_size=12),
       angles=st.lists(st.floats(-math.pi, math.pi), min_size=12, max_size=12))
def test_multi_start_reaches_any_fk_sampled_target_of_a_free_chain(lengths, angles):
    chain = Chain.planar(lengths)
    target = planar_points(chain, angles[:len(lengths)])[-1]
    solution = solve_planar_chain(chain, target, options=SOLVER.options)
    assert solution.error_m < 1e-3


@settings(derandomize=True, max_examples=100, deadline=None)
@given(count=st.integers(2, 8), data=st.data())
def test_hinge_limited_planar_chain_stays_within_limits(count, data):
    limits = [(-math.radians(a), math.radians(a))
              for a in data.draw(st.lists(st.floats(30.0, 170.0), min_size=count,
                                          max_size=count))]
    chain = Chain.planar([1.0] * count, limits)
    angles = [data.draw(st.floats(lo, hi)) for lo, hi in limits]
    target = planar_points(chain, angles)[-1]
    single = SOLVER.solve(chain, target, start=chain.stretched(1j))
    multi = solve_planar_chain(chain, target, options=SOLVER.options)
    for solution in (single, multi):
        angles = planar_angles(chain, solution.directions)
        for (low, high), angle in zip(limits, angles, strict=True):
            assert low - 1e-9 <= angle <= high + 1e-9
        assert math.isfinite(solution.error_m)
    assert multi.error_m < 1e-3


def test_unreachable_free_chain_stretches_straight_and_reports_not_reached():
    chain = Chain.planar([1.0, 2.0, 3.0, 1.0])
    solution = SOLVER.solve(chain, 10 + 10j)
    assert not solution.reached
    assert solution.stop_reason is StopReason.UNREACHABLE
    assert solution.iterations == 0
    assert solution.error_m == pytest.approx(abs(10 + 10j) - 7.0)
    heading = cmath.phase(10 + 10j)
    assert all(cmath.phase(d) == pytest.approx(heading) for d in solution.directions)


def test_unequal_segments_converge_like_the_paper_reports():
    chain = Chain.planar([1.0, 2.0, 3.0, 1.0])
    solver = FabrikSolver(SolverOptions(tolerance_m=0.01, max_iterations=50))
    rng = np.random.default_rng(11)
    worst = 0
    for _ in range(200):
        target = planar_points(chain, rng.uniform(-math.pi, math.pi, 4))[-1]
        solution = solver.solve(chain, target, start=chain.stretched(1j))
        assert solution.reached
        worst = max(worst, solution.iterations)
    assert worst <= 30


def test_straight_chain_leaves_a_target_on_its_own_axis():
    limited = Chain.planar([1.0, 1.0, 1.0], [(-2.5, 2.5)] * 3)
    assert SOLVER.solve(limited, 1.5 + 0j, start=limited.straight()).reached
    free = Chain.planar([1.0, 1.0, 1.0])
    assert SOLVER.solve(free, 1.5 + 0j).reached
    assert solve_planar_chain(free, 1.5 + 0j, seed=free.straight()).reached


def test_constrained_single_attempt_can_stall_where_the_multi_start_does_not():
    chain = Chain.planar([1.0, 1.0, 1.0], [(-1.0, 1.0)] * 3)
    target = planar_points(chain, [0.66, -0.18, 0.1])[-1]
    assert not SOLVER.solve(chain, target).reached
    assert solve_planar_chain(chain, target, options=SOLVER.options).reached


def test_hinge_never_snaps_across_its_forbidden_arc():
    chain = Chain.planar([1.0, 1.0], [(-0.1, 0.1), (-math.radians(170), math.radians(170))])
    for angle in np.linspace(-math.pi, math.pi, 73):
        solution = SOLVER.solve(chain, cmath.rect(0.5, angle), start=chain.straight())
        limits = [(-0.1, 0.1), (-math.radians(170), math.radians(170))]
        got_angles = planar_angles(chain, solution.directions)
        for (low, high), got in zip(limits, got_angles, strict=True):
            assert low - 1e-9 <= got <= high + 1e-9


def test_constrained_pass_pair_leaves_a_pose_within_limits():
    chain = Chain.planar([1.0, 1.0, 1.0], [(0.0, 1.0), (-0.5, 0.5), (-0.5, 0.5)])
    points = forward_pass(chain, chain.straight(), -2 + 1j, None)
    points, directions = backward_pass(chain, points, None)
    for (low, high), angle in zip([(0.0, 1.0), (-0.5, 0.5), (-0.5, 0.5)],
                                  planar_angles(chain, directions), strict=True):
        assert low - 1e-12 <= angle <= high + 1e-12


@settings(derandomize=True, max_examples=100, deadline=None)
@given(lengths=st.lists(st.floats(0.1, 2.0), min_size=2, max_size=10),
       direction=st.tuples(*[st.floats(-1.0, 1.0)] * 3), fraction=st.floats(0.1, 0.9))
def test_free_spatial_chain_reaches_targets_inside_its_reach(lengths, direction, fraction):
    heading = Vec3(*direction)
    if abs(heading) < 1e-3:
        heading = Vec3(0.0, 0.0, 1.0)
    chain = Chain.spatial(lengths)
    target = heading / abs(heading) * reach_between(lengths, fraction)
    start = [Vec3(0.0, 0.0, 0.0)]
    for index, length in enumerate(lengths):
        turn = 0.3 * (index + 1)
        start.append(start[-1] + Vec3(math.cos(turn), math.sin(turn), 0.2) * (length / 1.02))
    solution = SOLVER.solve(chain, target, start=start)
    assert solution.error_m < 1e-3
    assert lengths_of(solution.points) == pytest.approx(lengths, rel=1e-9)


def test_spatial_hinge_chain_keeps_bones_normal_to_the_axis_and_within_limits():
    axis = (0.0, 1.0, 0.0)
    chain = Chain.spatial([1.0, 1.0, 1.0], hinges=[(axis, -1.0, 1.0)] * 3)
    target = Vec3(1.0 + math.cos(0.5) + math.cos(0.2), 0.0, -math.sin(0.5) - math.sin(0.2))
    solution = SOLVER.solve(chain, target)
    assert solution.reached
    previous = chain.base_direction
    for direction in solution.directions:
        assert abs(direction.dot(Vec3(*axis))) < 1e-9
        turn = math.atan2(previous.cross(direction).dot(Vec3(*axis)), previous.dot(direction))
        assert -1.0 - 1e-9 <= turn <= 1.0 + 1e-9
        previous = direction


def test_spatial_target_off_the_hinge_plane_keeps_the_chain_in_its_plane():
    chain = Chain.spatial([1.0, 1.0], hinges=[((0.0, 0.0, 1.0), -2.0, 2.0)] * 2)
    solution = SOLVER.solve(chain, Vec3(1.0, 0.5, 0.7))
    assert not solution.reached
    assert all(p.z == pytest.approx(0.0) for p in solution.points)
    assert solution.error_m >= 0.7


def test_tip_direction_fixes_the_last_bone():
    chain = Chain.planar([1.0, 1.0, 1.0])
    solution = SOLVER.solve(chain, 1.0 + 1.0j, tip_direction=1j, start=chain.stretched(1j))
    assert solution.reached
    assert solution.directions[-1] == pytest.approx(1j)


@pytest.mark.parametrize('target', [complex(math.nan, 0.0), complex(0.0, math.inf)])
def test_non_finite_target_is_a_value_error(target):
    with pytest.raises(ValueError) as caught:
        SOLVER.solve(Chain.planar([1.0]), target)
    assert isinstance(caught.value, TargetError)
    assert 'target' in str(caught.value)


def test_stall_ends_an_unreachable_constrained_solve_early_keeping_the_best_pose():
    chain = Chain.planar([1.0, 1.0], [(-0.2, 0.2), (-0.2, 0.2)])
    solver = FabrikSolver(SolverOptions(tolerance_m=1e-6, max_iterations=500))
    solution = solver.solve(chain, -2 + 0j)
    assert solution.stop_reason is StopReason.STALLED
    assert solution.iterations < 500
    assert not solution.reached


def test_iteration_cap_is_reported():
    chain = Chain.planar([1.0, 2.0, 3.0, 1.0])
    solver = FabrikSolver(SolverOptions(tolerance_m=1e-12, max_iterations=1,
                                        min_improvement_m=0.0))
    solution = solver.solve(chain, 6.9 + 0.5j, start=chain.stretched(1j))
    assert solution.stop_reason is StopReason.CAP
    assert solution.iterations == 1


@pytest.mark.parametrize('bad', [[], [1.0, 0.0], [1.0, math.nan]])
def test_chain_rejects_bad_lengths(bad):
    with pytest.raises(ValueError):
        Chain.planar(bad)
