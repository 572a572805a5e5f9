"""sim_arm serves FollowJointTrajectory and takes JointTrajectory as ros2_control's JTC does."""

import math

from control_msgs.msg import JointTolerance
import pytest
from rclpy.action import GoalResponse
from rclpy.duration import Duration as RosDuration
from sensor_msgs.msg import JointState

from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes.sim_arm_node import SimArmNode
from test.nodes.conftest import ARM_CONFIG
from test.nodes.trajectory_client import duration, goal, point, trajectory, TrajectoryClient
from test.reliability.message_fields import mutations

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]

ARM = load_arm(ARM_CONFIG)
NAMES = list(ARM.joint_names)
HOME = list(ARM.home)
SPEED = 3.0
POSE = [0.3, 1.2, -0.5, 0.2]
# The sim follows a trajectory no faster than its servo speed exactly: it ends where it goes.
AT = 1e-6


@pytest.fixture
def sim(ros, arm_args):
    ros.add(SimArmNode(context=ros.context, cli_args=[
        *arm_args, '-p', f'servo_speed_rad_s:={SPEED}', '-p', 'rate_hz:=50.0']))
    client = TrajectoryClient(ros)
    ros.spin_until(lambda: client.states, timeout_s=30.0, what='the first joint_states')
    yield client
    client.close()


def _away(base_yaw: float, t_s: float):
    """Return a goal that turns base_yaw to ``base_yaw`` over ``t_s``, the rest at home."""
    return goal(NAMES, [point(t_s, [base_yaw, *HOME[1:]])])


def test_a_goal_is_accepted_followed_and_succeeds_at_its_last_point(sim):
    result = sim.run(goal(NAMES, [point(0.5, [0.15, 1.4, -0.25, 0.1]), point(1.0, POSE)]))
    assert result[:2] == ('SUCCEEDED', 0), result
    sim.wait_at(NAMES, POSE, AT, 'the arm at the last point')
    assert sim.feedback, 'no feedback while the goal ran'
    feedback = sim.feedback[-1]
    assert list(feedback.joint_names) == NAMES
    assert len(feedback.desired.positions) == len(feedback.actual.positions) == len(NAMES)
    assert len(feedback.error.positions) == len(NAMES)
    if hasattr(feedback, 'index'):       # Kilted's control_msgs: the point executed towards
        assert {f.index for f in sim.feedback} <= {0, 1} and sim.feedback[-1].index == 1
    moving = [s.position[0] for s in sim.states if 0.0 < s.position[0] < POSE[0]]
    assert len(moving) >= 5, 'the arm followed the trajectory, it did not jump'


def test_a_goal_in_another_joint_order_is_matched_by_name(sim):
    order = [2, 0, 3, 1]
    result = sim.run(goal([NAMES[i] for i in order], [point(0.6, [POSE[i] for i in order])]))
    assert result[:2] == ('SUCCEEDED', 0), result
    sim.wait_at(NAMES, POSE, AT, 'the arm at the goal')


def _future_stamp(sim, seconds):
    return (sim.node.get_clock().now() + RosDuration(seconds=seconds)).to_msg()


def _refusals():
    last = HOME[:]
    fast = [1.5, *HOME[1:]]
    beyond = [*HOME[:3], ARM.joints[3].max_rad + 0.2]
    cases = {
        'unknown joint': (['base_yaw', 'shoulder', 'elbw', 'wrist'], [point(1.0, last)],
                          'INVALID_JOINTS'),
        'missing joint': (NAMES[:3], [point(1.0, last[:3])], 'INVALID_JOINTS'),
        'no points': (NAMES, [], 'INVALID_GOAL'),
        'times not increasing': (NAMES, [point(1.0, last), point(1.0, last)], 'INVALID_GOAL'),
        'sizes that do not match': (NAMES, [point(1.0, last[:3])], 'INVALID_GOAL'),
        'position beyond a limit': (NAMES, [point(1.0, beyond)], 'INVALID_GOAL'),
        'too fast': (NAMES, [point(0.1, fast)], 'INVALID_GOAL'),
        'a velocity at the last point': (NAMES, [point(1.0, last, [0.5, 0.0, 0.0, 0.0])],
                                         'INVALID_GOAL'),
        'not a number': (NAMES, [point(1.0, [math.nan, *HOME[1:]])], 'INVALID_GOAL'),
    }
    return cases


@pytest.mark.parametrize('case', list(_refusals()), ids=str)
def test_a_goal_that_cannot_be_followed_is_refused_with_a_warning(sim, case):
    names, points, code = _refusals()[case]
    handle = sim.send(goal(names, points))
    assert not handle.accepted
    sim.ros.spin_until(lambda: sim.warnings(f'refused ({code})'), timeout_s=30.0,
                       what=lambda: f'the WARN line refused ({code}): {[m.msg for m in sim.logs]}')
    assert sim.wait_still(NAMES) == pytest.approx(HOME), 'a refused goal moved the arm'


def test_a_goal_too_fast_for_the_sim_names_its_speed_parameter(sim):
    assert not sim.send(goal(NAMES, [point(0.1, [1.5, *HOME[1:]])])).accepted
    sim.ros.spin_until(lambda: sim.warnings(f'its limit is {SPEED:.3f} rad/s (servo_speed_rad_s)'),
                       timeout_s=30.0, what=lambda: [m.msg for m in sim.logs])


def test_a_goal_whose_stamp_ends_in_the_past_is_refused(sim):
    request = _away(0.3, 1.0)
    request.trajectory.header.stamp = _future_stamp(sim, -10.0)
    assert not sim.send(request).accepted
    sim.ros.spin_until(lambda: sim.warnings('refused (OLD_HEADER_TIMESTAMP)'), timeout_s=30.0,
                       what='the WARN line of the old stamp')


def test_a_multi_dof_trajectory_is_refused(sim):
    request = _away(0.3, 1.0)
    request.multi_dof_trajectory.joint_names = ['floating']
    assert not sim.send(request).accepted
    sim.ros.spin_until(lambda: sim.warnings('multi_dof_trajectory'), timeout_s=30.0,
                       what='the WARN line naming multi_dof_trajectory')


def test_a_future_stamp_waits_before_the_arm_moves(sim):
    request = _away(0.4, 0.5)
    request.trajectory.header.stamp = _future_stamp(sim, 1.0)
    handle = sim.send(request)
    assert handle.accepted
    assert sim.result(handle)[:2] == ('SUCCEEDED', 0)
    first_move = next(s for s in sim.states if s.position[0] > 1e-6)
    sent = request.trajectory.header.stamp
    moved_at = first_move.header.stamp.sec + first_move.header.stamp.nanosec * 1e-9
    assert moved_at >= sent.sec + sent.nanosec * 1e-9 - 0.05, 'the arm moved before the stamp'


def test_a_second_goal_replaces_the_first(sim):
    first = sim.send(_away(1.2, 4.0))
    assert first.accepted
    sim.ros.spin_until(lambda: sim.positions(NAMES)[0] > 0.1, timeout_s=30.0,
                       what='the first goal to move the arm')
    second = sim.send(goal(NAMES, [point(1.0, POSE)]))
    assert second.accepted
    status, code, message = sim.result(first)
    assert status in ('ABORTED', 'CANCELED') and message, (status, code, message)
    assert sim.result(second)[:2] == ('SUCCEEDED', 0)
    sim.wait_at(NAMES, POSE, AT, 'the arm at the second goal')


def test_a_cancel_holds_the_arm_where_it_is(sim):
    handle = sim.send(_away(1.2, 4.0))
    assert handle.accepted
    sim.ros.spin_until(lambda: sim.positions(NAMES)[0] > 0.2, timeout_s=30.0,
                       what='the goal to move the arm')
    at_cancel = sim.positions(NAMES)[0]
    sim.cancel(handle)
    assert sim.result(handle)[0] == 'CANCELED'
    held = sim.wait_still(NAMES)
    assert at_cancel <= held[0] < 1.0, 'the arm stopped near where it was'
    assert held[1:] == pytest.approx(HOME[1:])


def test_a_joint_command_takes_the_arm_over_and_aborts_the_goal(sim):
    handle = sim.send(_away(1.2, 4.0))
    assert handle.accepted
    sim.ros.spin_until(lambda: sim.positions(NAMES)[0] > 0.1, timeout_s=30.0,
                       what='the goal to move the arm')
    commands = sim.node.create_publisher(JointState, 'joint_commands', 10)
    sim.ros.spin_until(lambda: commands.get_subscription_count() > 0, timeout_s=30.0,
                       what='sim_arm to subscribe joint_commands')
    commands.publish(JointState(name=['base_yaw'], position=[-0.2]))
    status, _, message = sim.result(handle)
    assert status == 'ABORTED' and 'joint_commands' in message
    sim.wait_at(NAMES[:1], [-0.2], AT, 'the arm at the joint command')


def test_the_topic_runs_a_trajectory_and_an_empty_one_stops_and_holds(sim):
    sim.publish(trajectory(NAMES, [point(1.0, POSE)]))
    sim.wait_at(NAMES, POSE, AT, 'the arm at the published trajectory')
    sim.publish(trajectory(NAMES, [point(4.0, [-1.0, *POSE[1:]])]))
    sim.ros.spin_until(lambda: sim.positions(NAMES)[0] < POSE[0] - 0.1, timeout_s=30.0,
                       what='the second trajectory to move the arm')
    sim.publish(trajectory(NAMES, []))
    held = sim.wait_still(NAMES)
    assert -1.0 < held[0] < POSE[0] - 0.1


def test_the_topic_refuses_what_the_action_refuses(sim):
    sim.publish(trajectory(['base_yaw', 'shoulder', 'elbw', 'wrist'], [point(1.0, HOME)]))
    sim.ros.spin_until(lambda: sim.warnings('refused (INVALID_JOINTS)'), timeout_s=30.0,
                       what='the WARN line of the refused trajectory')
    assert 'joint_trajectory' in sim.warnings('refused (INVALID_JOINTS)')[0]
    assert sim.wait_still(NAMES) == pytest.approx(HOME)


def test_a_stream_on_the_topic_replaces_each_trajectory_without_a_warning(sim):
    for index in range(5):
        sim.publish(trajectory(NAMES, [point(1.0, [0.1 * (index + 1), *HOME[1:]])]))
        past = 0.1 * index + 0.02
        sim.ros.spin_until(lambda past=past: sim.positions(NAMES)[0] > past,
                           timeout_s=30.0, what='the stream to move the arm')
    sim.wait_at(NAMES, [0.5, *HOME[1:]], AT, 'the arm at the last trajectory of the stream')
    assert not [m.msg for m in sim.logs if m.level >= 30], 'a replaced trajectory warned'


def test_every_field_extreme_of_a_goal_is_refused_or_taken_and_never_leaves_the_limits(ros,
                                                                                       arm_args):
    """Each numeric field of a full goal at each extreme of its type, straight to the callback.

    As test/reliability/test_every_option.py does for the subscriptions: the goal callback
    answers every one (no exception), and what it accepts stays within the joint limits.
    """
    node = ros.add(SimArmNode(context=ros.context, cli_args=[
        *arm_args, '-p', f'servo_speed_rad_s:={SPEED}']))
    request = goal(NAMES, [point(0.5, [0.1, 1.4, -0.2, 0.1], [0.1] * 4, [0.0] * 4),
                           point(1.0, POSE, [0.0] * 4, [0.0] * 4)])
    request.path_tolerance = [JointTolerance(name='elbow', position=0.1, velocity=0.0,
                                             acceleration=0.0)]
    request.goal_tolerance = [JointTolerance(name='wrist', position=0.05, velocity=0.0,
                                             acceleration=0.0)]
    request.goal_time_tolerance = duration(0.5)
    answers = {}
    for description, mutated in mutations(request):
        response = node._actions._on_goal(mutated)
        answers[response] = answers.get(response, 0) + 1
        if response is GoalResponse.ACCEPT:
            points = mutated.trajectory.points
            assert all(ARM.within_limits(list(p.positions)) for p in points), description
    assert answers.get(GoalResponse.REJECT) and answers.get(GoalResponse.ACCEPT), answers


def test_a_partial_goal_is_taken_when_allowed_and_the_other_joints_hold(ros, arm_args):
    ros.add(SimArmNode(context=ros.context, cli_args=[
        *arm_args, '-p', f'servo_speed_rad_s:={SPEED}', '-p', 'allow_partial_joints_goal:=true']))
    client = TrajectoryClient(ros)
    try:
        result = client.run(goal(['elbow'], [point(0.5, [0.7])]))
        assert result[:2] == ('SUCCEEDED', 0), result
        client.wait_at(NAMES, [HOME[0], HOME[1], 0.7, HOME[3]], AT, 'the elbow moved alone')
    finally:
        client.close()
