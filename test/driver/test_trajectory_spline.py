"""The trajectory's interpolation: through the points, continuous as the JTC's, exact peaks."""

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from fabrik_ros.driver.trajectory_spline import build_spline, peaks

JOINTS = 2
# Which derivatives the points give: positions only, with velocities, with accelerations.
KINDS = ('positions', 'velocities', 'accelerations')


@st.composite
def trajectories(draw, kind=None):
    """Return (start, times, positions, velocities, accelerations) of a valid trajectory."""
    count = draw(st.integers(1, 6))
    kind = kind or draw(st.sampled_from(KINDS))
    first = draw(st.sampled_from([0.0, 0.3, 1.0]))
    gaps = draw(st.lists(st.floats(0.05, 2.0), min_size=count - 1, max_size=count - 1))
    times = np.cumsum([first, *gaps])
    value = st.floats(-1.0, 1.0)
    positions = np.array(draw(st.lists(st.lists(value, min_size=JOINTS, max_size=JOINTS),
                                       min_size=count, max_size=count)))
    start = np.array(draw(st.lists(value, min_size=JOINTS, max_size=JOINTS)))
    velocities = accelerations = None
    if kind != 'positions':
        velocities = np.array(draw(st.lists(st.lists(value, min_size=JOINTS, max_size=JOINTS),
                                            min_size=count, max_size=count)))
        velocities[-1] = 0.0
    if kind == 'accelerations':
        accelerations = np.array(draw(st.lists(st.lists(value, min_size=JOINTS,
                                                        max_size=JOINTS),
                                               min_size=count, max_size=count)))
    return start, times, positions, velocities, accelerations


def _value(coefficients, local, order):
    """Return the ``order``-th derivative of one segment's polynomials at local times."""
    local = np.asarray(local, dtype=float)[..., None]
    total = np.zeros(local.shape[:-1] + (coefficients.shape[0],))
    for power in range(order, 6):
        factor = np.prod(np.arange(power - order + 1, power + 1))
        total = total + coefficients[:, power] * factor * local ** (power - order)
    return total


def _left_right(spline, at_s, order):
    """Return the ``order``-th derivative at a knot, from the segments either side."""
    index = int(np.searchsorted(spline.knots_s, at_s))
    left = spline.coefficients[index - 1]
    length = spline.knots_s[index] - spline.knots_s[index - 1]
    right = spline.coefficients[index] if index < len(spline.coefficients) else None
    return _value(left, length, order), None if right is None else _value(right, 0.0, order)


@settings(max_examples=200, deadline=None)
@given(trajectories())
def test_the_spline_passes_through_every_point_at_its_time(trajectory):
    start, times, positions, velocities, accelerations = trajectory
    spline = build_spline(start, times, positions, velocities, accelerations)
    for time_s, point in zip(times, positions, strict=True):
        assert spline.sample(time_s) == pytest.approx(point, abs=1e-9)
    assert spline.sample(-1.0) == pytest.approx(start), 'the start pose held before the start'
    assert spline.sample(times[-1] + 5.0) == pytest.approx(positions[-1]), 'the end held'


@settings(max_examples=200, deadline=None)
@given(trajectories())
def test_the_first_segment_starts_at_the_start_pose_at_rest(trajectory):
    start, times, positions, velocities, accelerations = trajectory
    spline = build_spline(start, times, positions, velocities, accelerations)
    if times[0] == 0.0:
        assert spline.sample(0.0) == pytest.approx(positions[0]), 'a first point at 0 is jumped to'
        return
    assert spline.sample(0.0) == pytest.approx(start)
    if velocities is not None:
        assert spline.sample_derivative(0.0, 1) == pytest.approx(np.zeros(JOINTS), abs=1e-9)
    if accelerations is not None:
        assert spline.sample_derivative(0.0, 2) == pytest.approx(np.zeros(JOINTS), abs=1e-9)


@pytest.mark.parametrize('kind, continuous', [('positions', 0), ('velocities', 1),
                                              ('accelerations', 2)])
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_the_spline_is_continuous_at_the_knots_as_its_degree_promises(kind, continuous, data):
    start, times, positions, velocities, accelerations = data.draw(trajectories(kind))
    spline = build_spline(start, times, positions, velocities, accelerations)
    given_values = (positions, velocities, accelerations)
    for knot, time_s in enumerate(spline.knots_s[1:], start=1):
        point = knot - (len(spline.knots_s) - len(times))
        for order in range(continuous + 1):
            left, right = _left_right(spline, time_s, order)
            assert left == pytest.approx(given_values[order][point], abs=1e-7), (order, knot)
            if right is not None:
                assert right == pytest.approx(left, abs=1e-7), (order, knot)


def test_positions_only_interpolate_linearly():
    spline = build_spline(np.array([0.0]), np.array([1.0, 3.0]), np.array([[1.0], [0.0]]),
                          None, None)
    assert spline.sample(0.25)[0] == pytest.approx(0.25)
    assert spline.sample(2.0)[0] == pytest.approx(0.5)
    assert spline.sample_derivative(2.0, 1)[0] == pytest.approx(-0.5)


def test_a_point_without_velocities_makes_its_segments_linear():
    velocities = np.array([[0.5], [np.nan], [0.0]])
    spline = build_spline(np.array([0.0]), np.array([1.0, 2.0, 3.0]),
                          np.array([[1.0], [2.0], [2.0]]), velocities, None)
    assert spline.sample(1.5)[0] == pytest.approx(1.5), 'linear: point 1 gives no velocity'
    assert spline.sample_derivative(0.5, 2)[0] != 0.0, 'cubic from the start (v = 0) to point 0'


@settings(max_examples=200, deadline=None)
@given(trajectories())
def test_the_peaks_are_the_extremes_of_the_sampled_curve(trajectory):
    start, times, positions, velocities, accelerations = trajectory
    spline = build_spline(start, times, positions, velocities, accelerations)
    if not len(spline.coefficients):
        return
    found = peaks(spline)
    for segment in range(len(spline.coefficients)):
        grid = np.linspace(0.0, spline.knots_s[segment + 1] - spline.knots_s[segment], 2001)
        values = _value(spline.coefficients[segment], grid, 0)
        speeds = np.abs(_value(spline.coefficients[segment], grid, 1))
        assert np.all(values.max(axis=0) <= found.high[segment] + 1e-9)
        assert np.all(values.max(axis=0) >= found.high[segment] - 1e-4)
        assert np.all(values.min(axis=0) >= found.low[segment] - 1e-9)
        assert np.all(values.min(axis=0) <= found.low[segment] + 1e-4)
        assert np.all(speeds.max(axis=0) <= found.speed[segment] + 1e-9)
        assert np.all(speeds.max(axis=0) >= found.speed[segment] * (1 - 1e-3) - 1e-6)
        at = found.high_s[segment]
        assert spline.knots_s[segment] <= at.min() and at.max() <= spline.knots_s[segment + 1]


@settings(max_examples=200, deadline=None)
# A limit at zero, or at least a microradian: the hull's products of limits far below that
# (1e-273 rad) underflow, a range no joint has.
@given(trajectories(), st.just(0.0) | st.floats(1e-6, 1.5), st.floats(0.1, 5.0))
def test_the_hull_shortcut_decides_as_the_exact_peaks_do(trajectory, reach, speed):
    start, times, positions, velocities, accelerations = trajectory
    spline = build_spline(start, times, positions, velocities, accelerations)
    if not len(spline.coefficients):
        return
    low, high = np.full(JOINTS, -reach), np.full(JOINTS, reach)
    exact, quick = peaks(spline), peaks(spline, within=(low, high, np.full(JOINTS, speed)))
    assert np.array_equal((exact.low < low) | (exact.high > high),
                          (quick.low < low) | (quick.high > high))
    assert np.array_equal(exact.speed > speed, quick.speed > speed)
    outside = (exact.low < low) | (exact.high > high)
    assert np.array_equal(exact.low[outside], quick.low[outside]), 'exact where it matters'
