"""TrajectoryExecutor without ROS: refusals, execution, tolerances, cancel, preemption."""

import math
from pathlib import Path
import subprocess
import sys
import warnings

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from fabrik_ros.driver.trajectory import (
    CANCELED,
    Ending,
    JointTolerance,
    MAX_POINTS,
    Outcome,
    REPLACED,
    TrajectoryExecutor,
    TrajectoryGoal,
    TrajectoryPoint,
    TrajectorySettings,
)
from fabrik_ros.kinematics import load_arm

ARM = load_arm(Path(__file__).parents[2] / 'config' / 'arm_6servo.yaml')
NAMES = tuple(ARM.joint_names)
HOME = tuple(float(a) for a in ARM.home)
SPEED = 1.5
SETTINGS = TrajectorySettings(path_tolerance_rad=0.2, goal_tolerance_rad=0.05,
                              goal_time_tolerance_s=0.5)


def _executor(**options):
    return TrajectoryExecutor(ARM.joints, [SPEED] * len(NAMES), options.pop('settings', SETTINGS),
                              aux_names=('gripper',))


def _moved(offset, joint=None):
    """Return HOME with ``offset`` added to one joint (all if None)."""
    return tuple(h + offset if joint in (None, name) else h
                 for name, h in zip(NAMES, HOME, strict=True))


def _goal(*points, names=NAMES, **options):
    return TrajectoryGoal(tuple(names), tuple(points), **options)


P = TrajectoryPoint
GOOD = _goal(P(1.0, _moved(0.3)), P(2.0, _moved(0.5)))


def _refusal(goal, *, now_s=0.0, current=HOME, executor=None):
    executor = executor or _executor()
    refusal = executor.check(goal, now_s=now_s, current=current)
    assert refusal is not None, 'refused'
    return refusal


# -- refusals at goal time -------------------------------------------------------------------

REFUSED = {
    'no points': (_goal(), Outcome.INVALID_GOAL, 'the trajectory has no points'),
    'unknown joint': (_goal(P(1.0, HOME), names=(*NAMES[:4], 'wrist_rol')),
                      Outcome.INVALID_JOINTS, "joint 'wrist_rol' is not a joint of this arm "
                      "(its joints: ['base_yaw', 'shoulder', 'elbow', 'wrist_pitch', "
                      "'wrist_roll']); did you mean 'wrist_roll'?"),
    'the gripper': (_goal(P(1.0, (*HOME, 0.5)), names=(*NAMES, 'gripper')),
                    Outcome.INVALID_JOINTS, "gripper controller's action"),
    'a joint left out': (_goal(P(1.0, HOME[:4]), names=NAMES[:4]), Outcome.INVALID_JOINTS,
                         "the goal leaves out ['wrist_roll']: name every joint"),
    'duplicate names': (_goal(P(1.0, (*HOME, 0.0)), names=(*NAMES, 'elbow')),
                        Outcome.INVALID_JOINTS, "names ['elbow'] more than once"),
    'no names': (_goal(P(1.0, ()), names=()), Outcome.INVALID_JOINTS, 'joint_names is empty'),
    'too few positions': (_goal(P(1.0, HOME[:4])), Outcome.INVALID_GOAL,
                          'point 0 has 4 positions, must have 5'),
    'too few velocities': (_goal(P(1.0, HOME, (0.0,) * 4)), Outcome.INVALID_GOAL,
                           'point 0 has 4 velocities, must have 0 or 5'),
    'too many accelerations': (_goal(P(1.0, HOME, (0.0,) * 5, (0.0,) * 6)),
                               Outcome.INVALID_GOAL, 'point 0 has 6 accelerations'),
    'accelerations without velocities': (_goal(P(1.0, HOME, (), (0.0,) * 5)),
                                         Outcome.INVALID_GOAL, 'accelerations but no velocities'),
    'a NaN position': (_goal(P(1.0, (math.nan, *HOME[1:]))), Outcome.INVALID_GOAL,
                       'point 0 positions [nan,'),
    'an infinite velocity': (_goal(P(1.0, HOME, (math.inf, 0.0, 0.0, 0.0, 0.0))),
                             Outcome.INVALID_GOAL, 'velocities [inf,'),
    'a NaN time': (_goal(P(math.nan, HOME)), Outcome.INVALID_GOAL,
                   'point 0 time_from_start = nan s'),
    'a negative time': (_goal(P(-0.5, HOME)), Outcome.INVALID_GOAL,
                        'time_from_start = -0.5 s, must be finite and >= 0'),
    'times not increasing': (_goal(P(1.0, HOME), P(1.0, HOME)), Outcome.INVALID_GOAL,
                             'not strictly increasing: point 0 at 1 s, point 1 at 1 s'),
    'a point outside the limits': (_goal(P(1.0, HOME), P(5.0, _moved(1.4, 'shoulder'))),
                                   Outcome.INVALID_GOAL, 'point 1 puts shoulder at 2.9708 rad, '
                                   'outside its limits [0.2618, 2.8798] rad'),
    'moving at the end': (_goal(P(1.0, _moved(0.1), (0.0, 0.0, 0.1, 0.0, 0.0))),
                          Outcome.INVALID_GOAL, 'the last point gives elbow a velocity of 0.1 '
                          'rad/s: a trajectory must end at rest'),
    'ended in the past': (_goal(P(1.0, HOME), start_s=-3.0), Outcome.OLD_HEADER_TIMESTAMP,
                          'the trajectory ended 3.000 s ago'),
    'a NaN start': (_goal(P(1.0, HOME), start_s=math.nan), Outcome.INVALID_GOAL,
                    'the start time (header.stamp) is nan'),
    'too fast between points': (_goal(P(1.0, HOME), P(1.5, _moved(1.0, 'elbow'))),
                                Outcome.INVALID_GOAL, 'elbow would need 2.000 rad/s at 1.000 s '
                                '(between points 0 and 1); its limit is 1.500 rad/s'),
    'too fast from the start pose': (_goal(P(0.2, _moved(0.5, 'base_yaw'))),
                                     Outcome.INVALID_GOAL, 'base_yaw would need 2.500 rad/s at '
                                     '0.000 s (from the start pose to point 0)'),
    'a first point at time 0 away from the arm': (
        _goal(P(0.0, _moved(0.3, 'elbow')), P(2.0, _moved(0.3, 'elbow'))), Outcome.INVALID_GOAL,
        'the first point is at time 0 but elbow is 0.3000 rad away from it'),
    'a start long past, far from the arm': (
        _goal(P(1.0, HOME), P(3.0, _moved(1.0, 'elbow')), start_s=-1.0), Outcome.INVALID_GOAL,
        'the trajectory started 2.000 s ago (header.stamp): it asks for elbow at -1.0708 rad '
        'now, 0.5000 rad away from the arm'),
    'an unknown tolerance joint': (
        _goal(P(1.0, HOME), path_tolerance=(JointTolerance('knee', 0.1),)),
        Outcome.INVALID_JOINTS, "path_tolerance: joint 'knee'"),
    'a NaN tolerance': (_goal(P(1.0, HOME), goal_tolerance=(JointTolerance('elbow', math.nan),)),
                        Outcome.INVALID_GOAL, 'goal_tolerance of elbow = nan'),
    'a NaN goal time tolerance': (_goal(P(1.0, HOME), goal_time_tolerance_s=math.nan),
                                  Outcome.INVALID_GOAL, 'goal_time_tolerance = nan s'),
    'a long name': (_goal(P(1.0, (0.0,)), names=('x' * 300,)), Outcome.INVALID_JOINTS,
                    'at most 64 of at most 256 characters'),
}


@pytest.mark.parametrize('case', REFUSED)
def test_a_goal_is_refused_with_its_code_and_a_message_saying_why(case):
    goal, code, text = REFUSED[case]
    refusal = _refusal(goal, now_s=1.0)
    assert refusal.code is code
    assert text in refusal.message, refusal.message


def test_a_cubic_that_overshoots_a_limit_between_points_is_refused_naming_joint_and_time():
    top = ARM.joints[1].max_rad                       # shoulder
    goal = _goal(P(1.0, _moved(top - HOME[1] - 0.05, 'shoulder'), (0.0, 1.0, 0.0, 0.0, 0.0)),
                 P(2.0, _moved(top - HOME[1] - 0.05, 'shoulder'), (0.0,) * 5))
    refusal = _refusal(goal)
    assert refusal.code is Outcome.INVALID_GOAL
    assert refusal.message.startswith('shoulder would reach 2.9') and 'outside its limits' in \
        refusal.message
    assert 'between points 0 and 1 overshoots' in refusal.message
    assert ' at 1.3' in refusal.message, 'the time of the peak (1 + 1/3 s)'


def test_the_first_segment_is_checked_only_when_the_start_pose_is_known():
    goal = _goal(P(0.2, _moved(0.5, 'base_yaw')))
    assert _executor().check(goal, now_s=0.0) is None
    assert _executor().check(goal, now_s=0.0, current=HOME) is not None


def test_a_first_point_at_time_0_within_the_path_tolerance_is_jumped_to():
    executor = _executor()
    goal = _goal(P(0.0, _moved(0.1, 'elbow')), P(1.0, _moved(0.1, 'elbow')))
    assert executor.start('a', goal, now_s=10.0, current=HOME) is None
    assert executor.desired(10.0) == pytest.approx(_moved(0.1, 'elbow'))
    unchecked = _executor(settings=TrajectorySettings(path_tolerance_rad=-1.0))
    far = _goal(P(0.0, _moved(1.0, 'elbow')), P(1.0, _moved(1.0, 'elbow')))
    assert unchecked.check(far, now_s=0.0, current=HOME) is None, 'no path tolerance: accepted'


def test_too_many_points_are_refused_before_anything_is_built_from_them():
    goal = _goal(*(P(0.001 * (i + 1), HOME) for i in range(MAX_POINTS + 1)))
    refusal = _refusal(goal)
    assert refusal.code is Outcome.INVALID_GOAL and 'at most 10000' in refusal.message


def test_a_partial_goal_is_accepted_when_allowed_and_the_others_hold():
    executor = _executor(settings=TrajectorySettings(allow_partial_joints_goal=True))
    goal = _goal(P(1.0, (HOME[2] + 0.5,)), names=('elbow',))
    current = _moved(0.1)
    assert executor.start('a', goal, now_s=0.0, current=current) is None
    for time_s in (0.5, 1.0, 3.0):
        desired = executor.desired(time_s)
        assert desired[:2] == current[:2] and desired[3:] == current[3:]
    assert executor.desired(1.0)[2] == pytest.approx(HOME[2] + 0.5)


def test_a_speed_change_applies_to_the_next_goal():
    executor = _executor()
    goal = _goal(P(1.0, HOME), P(1.5, _moved(0.6, 'elbow')))
    assert executor.check(goal, now_s=0.0, current=HOME) is None
    executor.set_speeds([1.0] * 5)
    assert 'its limit is 1.000 rad/s' in executor.check(goal, now_s=0.0, current=HOME).message


# -- sampling --------------------------------------------------------------------------------

def test_a_future_start_holds_the_start_pose_until_then_and_the_end_is_held():
    executor = _executor()
    assert executor.start('a', _goal(P(1.0, _moved(0.3)), start_s=12.0), now_s=10.0,
                          current=HOME) is None
    assert executor.desired(11.9) == HOME
    assert executor.desired(12.5) == pytest.approx(_moved(0.15))
    assert executor.desired(20.0) == pytest.approx(_moved(0.3))


@st.composite
def _limit_testing_goals(draw):
    """Return goals of cubics near the elbow's limits: some overshoot, some do not."""
    joint = ARM.joints[2]
    count = draw(st.integers(1, 4))
    positions = draw(st.lists(st.floats(joint.max_rad - 0.4, joint.max_rad), min_size=count,
                              max_size=count))
    velocities = draw(st.lists(st.floats(-1.0, 1.0), min_size=count, max_size=count))
    velocities[-1] = 0.0
    gaps = draw(st.lists(st.floats(0.3, 1.5), min_size=count, max_size=count))
    times = np.cumsum(gaps)
    points = tuple(P(float(t), _moved(p - HOME[2], 'elbow'),
                     tuple(v if name == 'elbow' else 0.0 for name in NAMES))
                   for t, p, v in zip(times, positions, velocities, strict=True))
    return _goal(*points)


@settings(max_examples=100, deadline=None)
@given(_limit_testing_goals())
def test_an_accepted_trajectory_never_leaves_the_joint_limits(goal):
    executor = _executor(settings=TrajectorySettings(path_tolerance_rad=-1.0))
    near_the_limit = _moved(ARM.joints[2].max_rad - 0.2 - HOME[2], 'elbow')
    if executor.start('a', goal, now_s=0.0, current=near_the_limit) is not None:
        return
    end = goal.points[-1].time_from_start_s
    for time_s in np.linspace(0.0, end, 200):
        for joint, position in zip(ARM.joints, executor.desired(float(time_s)), strict=True):
            assert joint.min_rad - 1e-9 <= position <= joint.max_rad + 1e-9, (joint.name, time_s)


# -- execution -------------------------------------------------------------------------------

def _run(executor, end_s, actual_of, *, start_s=0.0, step_s=0.02):
    """Tick from ``start_s`` to ``end_s`` (or the goal's end): desired, then update.

    :return: the time of the last tick
    """
    ticks = 0
    now = start_s
    while now <= end_s + 1e-9 and executor.active_goal is not None:
        now = start_s + ticks * step_s
        desired = executor.desired(now)
        executor.update(now, actual_of(now, desired), True)
        ticks += 1
    return now


def test_a_followed_trajectory_succeeds_at_its_end():
    executor = _executor()
    executor.start('a', GOOD, now_s=0.0, current=HOME)
    now = _run(executor, 5.0, lambda now, desired: desired)
    (end,) = executor.take_ends()
    assert (end.goal_id, end.ending, end.code) == ('a', Ending.SUCCEEDED, Outcome.SUCCESSFUL)
    assert now == pytest.approx(2.0), 'at the first tick from the end on'
    assert executor.desired(now) is None, 'a success leaves nothing to hold'


def test_a_joint_that_falls_behind_aborts_the_goal_on_the_path_tolerance_and_holds():
    executor = _executor()
    executor.start('a', GOOD, now_s=0.0, current=HOME)

    given = []

    def stuck(now, desired):
        given.append((*desired[:2], HOME[2], *desired[3:]))   # the elbow does not move
        return given[-1]
    now = _run(executor, 5.0, stuck)
    (end,) = executor.take_ends()
    assert (end.ending, end.code) == (Ending.ABORTED, Outcome.PATH_TOLERANCE_VIOLATED)
    assert end.message.startswith('path tolerance violated at 0.')
    assert 'elbow desired -1.3668' in end.message and 'measured -1.5708 rad' in end.message
    assert 'the tolerance 0.2000 rad' in end.message and 'base_yaw' not in end.message
    hold = executor.desired(now)
    assert hold == given[-1], 'held where the arm is'
    assert executor.desired(now) is None, 'the hold is given once'


def test_a_joint_short_of_the_goal_ends_goal_tolerance_violated_after_the_grace():
    executor = _executor()
    executor.start('a', GOOD, now_s=0.0, current=HOME)

    def short(now, desired):
        return (*desired[:2], desired[2] - 0.1, *desired[3:])  # within the path tolerance
    now = _run(executor, 5.0, short)
    (end,) = executor.take_ends()
    assert (end.ending, end.code) == (Ending.ABORTED, Outcome.GOAL_TOLERANCE_VIOLATED)
    assert now == pytest.approx(2.52), 'once the 0.5 s of grace have passed'
    assert end.message.startswith('goal tolerance not met 0.52')
    assert 'elbow desired -1.0708 rad, measured -1.1708 rad, error +0.1000' in end.message


def test_the_goal_tolerances_of_the_goal_override_the_defaults():
    executor = _executor()
    goal = _goal(*GOOD.points, goal_tolerance=(JointTolerance('elbow', 0.2),),
                 path_tolerance=(JointTolerance('elbow', -1.0),), goal_time_tolerance_s=-1.0)
    executor.start('a', goal, now_s=0.0, current=HOME)
    _run(executor, 1.0, lambda now, desired: (*desired[:2], HOME[2], *desired[3:]))
    assert executor.take_ends() == [], 'no path tolerance for the elbow'
    _run(executor, 3.0, lambda now, desired: (*desired[:2], desired[2] - 0.15, *desired[3:]),
         start_s=1.0)
    (end,) = executor.take_ends()
    assert end.ending is Ending.SUCCEEDED, '0.15 is within the goal tolerance 0.2'


def test_without_a_goal_time_tolerance_the_goal_waits_for_the_joints():
    executor = _executor(settings=TrajectorySettings(goal_time_tolerance_s=0.0))
    executor.start('a', GOOD, now_s=0.0, current=HOME)
    _run(executor, 60.0, lambda now, desired: (*desired[:2], desired[2] - 0.1, *desired[3:]))
    assert executor.take_ends() == [] and executor.active_goal == 'a'
    executor.update(61.0, GOOD.points[-1].positions, True)
    assert executor.take_ends()[0].ending is Ending.SUCCEEDED


def test_a_cancel_holds_where_the_arm_is():
    executor = _executor()
    executor.start('a', GOOD, now_s=0.0, current=HOME)
    _run(executor, 0.5, lambda now, desired: desired)
    assert not executor.cancel('other', now_s=0.5)
    where = _moved(0.07)
    assert executor.cancel('a', now_s=0.5, actual=where)
    (end,) = executor.take_ends()
    assert (end.ending, end.code, end.message) == (Ending.CANCELED, Outcome.SUCCESSFUL, CANCELED)
    assert executor.desired(0.52) == where and executor.desired(0.54) is None
    assert executor.active_goal is None and executor.feedback(0.6, HOME) is None


def test_a_new_goal_replaces_the_running_one_which_ends_aborted():
    executor = _executor()
    executor.start('a', GOOD, now_s=0.0, current=HOME)
    _run(executor, 0.5, lambda now, desired: desired)
    refused = _goal(P(1.0, HOME[:3]))
    assert executor.start('b', refused, now_s=0.5, current=HOME) is not None
    assert executor.active_goal == 'a', 'a refused goal leaves the running one running'
    here = executor.desired(0.5)
    assert executor.start('b', _goal(P(1.0, HOME)), now_s=0.5, current=here) is None
    (end,) = executor.take_ends()
    assert (end.goal_id, end.ending, end.code, end.message) == (
        'a', Ending.ABORTED, Outcome.INVALID_GOAL, REPLACED)
    assert executor.active_goal == 'b'
    assert executor.desired(0.5) == pytest.approx(here), 'starts where the old one was'


def test_an_abort_by_the_host_ends_the_goal_with_its_message_and_holds_or_not():
    executor = _executor()
    executor.start('a', GOOD, now_s=0.0, current=HOME)
    executor.update(0.2, _moved(0.01), True)
    executor.abort('servos detached (~/enable false)')
    (end,) = executor.take_ends()
    assert (end.ending, end.code, end.message) == (Ending.ABORTED, Outcome.INVALID_GOAL,
                                                   'servos detached (~/enable false)')
    assert executor.desired(0.3) == _moved(0.01), 'held at the last actual pose'
    executor.start('b', GOOD, now_s=1.0, current=HOME)
    executor.abort('replaced by a joint_commands message', hold=False)
    assert executor.desired(1.1) is None
    executor.abort('nothing runs')
    assert [e.goal_id for e in executor.take_ends()] == ['b']


def test_feedback_gives_the_goal_joints_in_the_goal_order_and_the_point_ahead():
    executor = _executor(settings=TrajectorySettings(allow_partial_joints_goal=True))
    goal = _goal(P(1.0, (HOME[2] + 0.2, HOME[0] + 0.2)), P(2.0, (HOME[2] + 0.4, HOME[0] + 0.4)),
                 names=('elbow', 'base_yaw'))
    executor.start('a', goal, now_s=0.0, current=HOME)
    goal_id, feedback = executor.feedback(1.5, HOME)
    assert goal_id == 'a' and feedback.joint_names == ('elbow', 'base_yaw')
    assert feedback.desired == pytest.approx((HOME[2] + 0.3, HOME[0] + 0.3))
    assert feedback.actual == (HOME[2], HOME[0])
    assert feedback.error == pytest.approx((0.3, 0.3))
    assert [executor.feedback(t, HOME)[1].index for t in (0.5, 1.5, 2.5)] == [0, 1, 2]


def test_a_wrong_sized_pose_from_the_host_is_a_bug_said_at_once():
    with pytest.raises(ValueError) as raised:
        _executor().start('a', GOOD, now_s=0.0, current=HOME[:3])
    assert 'must hold 5 finite positions' in str(raised.value)


def test_settings_refuse_non_finite_values():
    with pytest.raises(ValueError) as raised:
        TrajectorySettings(path_tolerance_rad=math.nan)
    assert 'path_tolerance_rad = nan, must be finite' in str(raised.value)
    with pytest.raises(ValueError):
        TrajectorySettings(goal_time_tolerance_s=-1.0)


_BLOCKER = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'rclpy' or name.split('.')[0].endswith('_msgs'):
            raise ImportError(f'blocked: {name}')
sys.meta_path.insert(0, Block())
import fabrik_ros.driver.trajectory
print('imported')
"""


@pytest.mark.timeout(60)
def test_the_trajectory_core_imports_with_rclpy_and_the_message_packages_blocked():
    result = subprocess.run([sys.executable, '-c', _BLOCKER], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == 'imported'


def test_a_start_just_past_is_sampled_from_where_it_is_now():
    executor = _executor()
    goal = _goal(P(1.0, _moved(0.3)), start_s=9.9)
    assert executor.start('a', goal, now_s=10.0, current=HOME) is None
    assert executor.desired(10.0) == pytest.approx(_moved(0.03))


# -- numbers too large to follow ----------------------------------------------------------

def test_an_acceleration_that_overflows_the_curve_is_refused_not_followed():
    zero = (0.0,) * len(NAMES)
    huge = (1e308, *zero[1:])
    goal = _goal(P(1.0, HOME, zero, huge), P(2.0, HOME, zero, zero))
    refusal = _refusal(goal)
    assert refusal.code is Outcome.INVALID_GOAL
    assert 'cannot be computed' in refusal.message


_EXTREME = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                     st.sampled_from([0.0, 1e-300, 1e300, -1e308, 1e308]))


@settings(max_examples=200, deadline=None)
@given(times=st.lists(st.floats(min_value=1e-9, max_value=1e6), min_size=1, max_size=4,
                      unique=True),
       velocity=_EXTREME, acceleration=_EXTREME, offset=_EXTREME)
def test_whatever_numbers_a_goal_holds_an_accepted_one_is_sampled_within_the_limits(
        times, velocity, acceleration, offset):
    times = sorted(times)
    zero = (0.0,) * len(NAMES)
    points = [P(t, _moved(0.0), (velocity, *zero[1:]), (acceleration, *zero[1:]))
              for t in times[:-1]]
    points.append(P(times[-1], _moved(offset, NAMES[0]) if abs(offset) < 1.0 else HOME, zero,
                    zero))
    executor = _executor()
    with warnings.catch_warnings():
        warnings.simplefilter('error')      # no overflow warning on the way to an answer
        refused = executor.start('g', _goal(*points), now_s=0.0, current=HOME)
    if refused is not None:
        return
    for t in np.linspace(0.0, times[-1] + 0.1, 50):
        pose = executor.desired(float(t))
        assert pose is not None and all(math.isfinite(p) for p in pose), (t, pose)
        assert all(j.min_rad - 1e-9 <= p <= j.max_rad + 1e-9
                   for j, p in zip(ARM.joints, pose, strict=True)), pose
