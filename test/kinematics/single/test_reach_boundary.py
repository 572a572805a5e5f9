"""The reach boundary: exact membership and exact closest points, against dense sampling."""

import itertools
import math

from hypothesis import assume, given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from fabrik_ros.kinematics import Chain, planar_points
from fabrik_ros.kinematics.single.constraints import FREE, Hinge2D
from fabrik_ros.kinematics.single.planar_arm import PlanarArm
from fabrik_ros.kinematics.single.reach_boundary import (
    boundary_arcs,
    boundary_table,
    closest_on_arcs,
    closest_on_table,
    closest_pose,
    ReachRegion,
)


@st.composite
def chains(draw, max_joints: int = 3) -> Chain:
    """Draw a planar chain of 1-3 bones, each joint free or limited to a drawn range."""
    count = draw(st.integers(1, max_joints))
    lengths = [draw(st.floats(0.2, 1.0)) for _ in range(count)]
    constraints = []
    for _ in range(count):
        if draw(st.booleans()) and draw(st.booleans()):
            constraints.append(FREE)
            continue
        low = draw(st.floats(-math.pi, math.pi - 0.2))
        high = draw(st.floats(low + 0.1, math.pi))
        constraints.append(Hinge2D(low, high))
    return Chain(complex(draw(st.floats(-1, 1)), draw(st.floats(-1, 1))),
                 complex(math.cos(h := draw(st.floats(-3.0, 3.0))), math.sin(h)),
                 tuple(lengths), tuple(constraints))


def sampled_tips(chain: Chain, per_joint: int = 48) -> np.ndarray:
    """Return the tips of a dense grid over every joint range (all reachable points)."""
    grids = [np.linspace(c.min_rad, c.max_rad, per_joint) for c in chain.constraints]
    angles = np.array(list(itertools.product(*grids)))
    return planar_points(chain, list(angles.T))[-1]


@settings(max_examples=150, deadline=None)
@given(chain=chains(), data=st.data())
def test_a_target_out_of_reach_gets_a_nearest_point_no_reachable_point_beats(chain, data):
    reach = chain.total_length
    target = chain.base + complex(data.draw(st.floats(-1.3, 1.3)) * reach,
                                  data.draw(st.floats(-1.3, 1.3)) * reach)
    assume(not ReachRegion(chain).contains(target))
    pose = closest_pose(chain, boundary_arcs(chain), target, 1e-9)
    assert all(c.min_rad - 1e-9 <= a <= c.max_rad + 1e-9 for c, a in zip(
        chain.constraints, PlanarArm(chain).angles(pose.directions), strict=True))
    assert abs(pose.points[-1] - target) == pytest.approx(pose.error_m, abs=1e-12)
    assert np.abs(sampled_tips(chain) - target).min() >= pose.error_m - 1e-9


@settings(max_examples=150, deadline=None)
@given(chain=chains(), data=st.data())
def test_every_tip_of_a_pose_inside_the_limits_is_in_the_region(chain, data):
    assume(len(chain.lengths) >= 2)
    angles = [data.draw(st.floats(c.min_rad, c.max_rad)) for c in chain.constraints]
    tip = planar_points(chain, angles)[-1]
    # A tip on (or within rounding of) a boundary arc is the region's edge: no inside to test.
    assume(closest_on_arcs(boundary_arcs(chain), tip)[0] > 1e-7)
    assert ReachRegion(chain).contains(tip)


def test_a_chain_folded_back_onto_a_limit_at_pi_reads_pi_not_minus_pi():
    # The folded pose's phase reads -pi; the elbow's range is [0, pi].
    chain = Chain(0j, complex(math.cos(2.0), math.sin(2.0)), (1.0, 1.0),
                  (Hinge2D(0.0, 1.0), Hinge2D(0.0, math.pi)))
    pose = closest_pose(chain, boundary_arcs(chain), 2 + 0j, 1e-9)
    assert PlanarArm(chain).angles(pose.directions) == pytest.approx((0.0, math.pi))


def test_a_one_bone_chain_has_no_inside_and_every_answer_is_on_its_arc():
    chain = Chain.planar([1.0], [(0.0, math.pi / 2)])
    region = ReachRegion(chain)
    assert not region.contains(complex(math.cos(0.5), math.sin(0.5)))
    pose = closest_pose(chain, boundary_arcs(chain), -2 + 0.1j, 1e-9)
    assert pose.points[-1] == pytest.approx(1j)      # the arc's end nearer the target


@pytest.mark.parametrize('seed', range(3))
def test_arrays_of_targets_get_the_answers_single_targets_get(seed):
    chain = Chain.planar([0.5, 0.4, 0.2], [(0.0, math.pi), (-2.3, 2.3), (-1.5, 1.5)])
    rng = np.random.default_rng(seed)
    targets = rng.uniform(-1.2, 1.2, 400) + 1j * rng.uniform(-1.2, 1.2, 400)
    region, arcs = ReachRegion(chain), boundary_arcs(chain)
    inside = region.contains(targets)
    assert inside.tolist() == [region.contains(complex(t)) for t in targets]
    assert 0 < inside.sum() < len(targets)
    angles = closest_on_table(boundary_table(arcs), targets)
    tips = planar_points(chain, list(angles.T))[-1]
    nearest = [closest_on_arcs(arcs, complex(t))[0] for t in targets]
    assert np.allclose(np.abs(tips - targets), nearest, rtol=0.0, atol=1e-12)

