"""Hypothesis pushes bad messages into real in-process nodes and bytes out of the board.

fabrik_ik and servo_driver run on the test's executor; the servo board is a TappedBoard on a
pty. After every bad message a good one follows on the same topic (DDS keeps one writer's
order), so when its effect shows, the bad one has been handled. The checks: the node handled
every message (solved exactly the good ones), stayed up, logged only WARN lines with a known
cause, no more than one per cause per throttle period, and no pulse outside the calibrated
range ever left the host or reached the board. Each test records how many inputs it tried.
"""

import importlib.util
import math
import time

from geometry_msgs.msg import Point, PointStamped, PoseStamped
from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
from nav_msgs.msg import Path
import numpy as np
import pytest
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient

from test.reliability import bad_messages as bad
from test.reliability.results import record
from test.reliability.rig import joint_state
from test.reliability.ros_log import by_cause, log_lines
from test.reliability.scenarios import pulses_outside_calibration

pytestmark = [pytest.mark.ros]

# Where tf2_ros is installed (a ROS install, not CI) a frame other than the base is looked up.
FRAME_REFUSAL = ('tf knows no frame' if importlib.util.find_spec('tf2_ros')
                 else "is not the arm's base frame")
IK_CAUSES = {'not finite': 'is not finite', 'wrong frame': FRAME_REFUSAL,
             'empty path': 'has no poses', 'unreachable': 'out of reach'}
DRIVER_CAUSES = {'lengths differ': 'lengths must match',
                 'no known joint': 'hold none of the joints',
                 'not finite': 'positions not finite',
                 'outside joint limits': 'outside the joint limits',
                 'pulse clamped': 'servo pulses clamped',
                 'unknown names': 'not in the arm file',
                 # The simulated board starved on a loaded host: lost and resumed, not a refusal.
                 'board starved': 'board silent, '}
IK_THROTTLE_S, DRIVER_THROTTLE_S = 2.0, 5.0
# A refused target shows only in the diagnostics (every 0.1 s), so each costs about that.
EXAMPLES = 120
JOINT_SENTINELS = ((0.1, 1.2, -0.5, 0.2), (-0.1, 1.4, -0.3, -0.2))


def _settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check_log(stderr: str, node: str, causes: dict[str, str], throttle_s: float,
               run_s: float) -> dict[str, int]:
    """Assert only throttled WARN lines of known causes; return the line count per cause."""
    lines = log_lines(stderr, node)
    severe = [line for line in lines if line.severity in ('ERROR', 'FATAL')]
    assert severe == [] and 'Traceback' not in stderr, severe or stderr
    groups = by_cause(lines, causes)
    assert '?' not in groups, f'warnings of no known cause: {groups["?"][:3]}'
    most = math.ceil(run_s / throttle_s) + 1
    for cause, found in groups.items():
        assert len(found) <= most, f'{len(found)} "{cause}" lines in {run_s:.1f} s (throttle)'
    return {cause: len(found) for cause, found in groups.items()}


def _commands_sane(rig) -> list[str]:
    """Return every joint_commands the IK node sent that is not finite or outside the limits."""
    wrong = []
    for msg in rig.commands_seen:
        for joint, angle in zip(rig.arm.joints, msg.position, strict=True):
            if not (math.isfinite(angle) and joint.clamp(angle) == angle):
                wrong.append(f'{list(msg.position)}')
    return wrong


@pytest.mark.timeout(150)
def test_bad_targets_into_fabrik_ik_are_dropped_and_never_move_a_servo_out_of_range(make_rig,
                                                                                    capfd):
    rig = make_rig(ik=True)
    rig.wait_subscribed()
    pose_pub = rig.probe.create_publisher(PoseStamped, 'target_pose', 100)
    path_pub = rig.probe.create_publisher(Path, 'target_path', 100)
    rig.ros.spin_until(lambda: pose_pub.get_subscription_count() and
                       path_pub.get_subscription_count(), timeout_s=10.0,
                       what='fabrik_ik to subscribe target_pose and target_path')
    tried = {'target_point': 0, 'target_pose': 0, 'target_path': 0}
    expected = {'commands': len(rig.commands_seen), 'rejected': 0}
    started = time.monotonic()

    def rejected() -> int:
        return int(rig.last_values('fabrik_ik').get('rejected targets', -1))

    def send(publisher, msg, accepted: bool) -> None:
        # Target topics keep only the newest message, so each one is sent on its own and
        # waited for: a command if solved, else the refusal count in fabrik_ik's diagnostics.
        publisher.publish(msg)
        expected['commands'] += int(accepted)
        expected['rejected'] += int(not accepted)
        rig.ros.spin_until(lambda: len(rig.commands_seen) >= expected['commands']
                           and rejected() >= expected['rejected'], timeout_s=10.0,
                           what=lambda: f'fabrik_ik to handle {msg}: {len(rig.commands_seen)}'
                           f' of {expected["commands"]} commands, {rejected()} of '
                           f'{expected["rejected"]} refusals')

    @_settings(EXAMPLES)
    @given(bad.points())
    def points(case):
        tried['target_point'] += 1
        send(rig.points, *case)

    @_settings(EXAMPLES)
    @given(bad.poses())
    def poses(case):
        tried['target_pose'] += 1
        send(pose_pub, *case)

    @_settings(25)
    @given(bad.bad_paths())
    def paths(msg):
        tried['target_path'] += 1
        send(path_pub, msg, False)

    points()
    poses()
    paths()
    rig.ros.spin_until(lambda: rejected() == expected['rejected'], timeout_s=10.0,
                       what=lambda: f'fabrik_ik to count {expected["rejected"]} rejected '
                       f'targets: {rig.last_values("fabrik_ik")}')
    run_s = time.monotonic() - started
    assert len(rig.commands_seen) == expected['commands'], 'one command per good target'
    assert rejected() == expected['rejected'], 'one refusal per bad target'
    assert _commands_sane(rig) == []
    rig.wait_board_at(rig.commands_seen[-1].position, 'the last command fabrik_ik sent')
    lines = _check_log(capfd.readouterr().err, 'fabrik_ik', IK_CAUSES, IK_THROTTLE_S, run_s)
    assert lines.get('not finite', 0) + lines.get('wrong frame', 0) >= 1
    outside = pulses_outside_calibration(rig)
    record('bad_input.ik_targets', {
        'inputs_tried': sum(tried.values()), **{f'tried_{k}': v for k, v in tried.items()},
        'rejected': expected['rejected'], 'solved': expected['commands'],
        'run_s': run_s, 'warn_lines_by_cause': lines, 'pulses_outside_calibration':
        len(outside)})
    assert outside == []


@pytest.mark.timeout(150)
def test_bad_joint_commands_into_servo_driver_never_move_a_servo_out_of_range(make_rig, capfd):
    rig = make_rig()
    rig.wait_subscribed()
    tried = [0]
    started = time.monotonic()

    @_settings(400)
    @given(bad.joint_commands(rig.arm.joint_names))
    def commands(msg):
        tried[0] += 1
        sentinel = JOINT_SENTINELS[tried[0] % 2]
        rig.commands.publish(msg)
        rig.commands.publish(joint_state(rig.arm.joint_names, sentinel))
        rig.ros.spin_until(lambda: rig.driver.latest_command == sentinel, timeout_s=10.0,
                           what=lambda: f'servo_driver to take the good command after {msg}')

    commands()
    run_s = time.monotonic() - started
    rig.wait_board_at(JOINT_SENTINELS[tried[0] % 2], 'the last good command')
    lines = _check_log(capfd.readouterr().err, 'servo_driver', DRIVER_CAUSES,
                       DRIVER_THROTTLE_S, run_s)
    outside = pulses_outside_calibration(rig)
    record('bad_input.joint_commands', {
        'inputs_tried': tried[0], 'run_s': run_s, 'warn_lines_by_cause': lines,
        'board_moves': len(rig.board.moves), 'pulses_outside_calibration': len(outside)})
    assert {'lengths differ', 'no known joint', 'not finite'} <= set(lines), lines
    assert outside == []


@pytest.mark.timeout(150)
def test_garbage_from_the_board_never_stops_the_driver_or_moves_a_servo_out_of_range(make_rig):
    rig = make_rig()
    rig.wait_subscribed()
    tried = [0]

    @_settings(120)
    @given(bad.garbage)
    def garbage(noise):
        tried[0] += 1
        sentinel = JOINT_SENTINELS[tried[0] % 2]
        rig.board.inject(noise)
        rig.commands.publish(joint_state(rig.arm.joint_names, sentinel))
        rig.ros.spin_until(lambda: not rig.board.noise_pending, timeout_s=10.0,
                           what='the garbage to go out ahead of a reply')
        rig.wait_board_at(sentinel, f'the board to follow the driver after {noise!r}')

    garbage()
    values = rig.last_values()
    outside = pulses_outside_calibration(rig)
    record('bad_input.board_garbage', {
        'inputs_tried': tried[0], 'link_timeouts': int(values['timeouts']),
        'link_retries': int(values['retries']), 'reconnects': int(values['reconnects']),
        'board resets seen': int(values['board resets']),
        'pulses_outside_calibration': len(outside)})
    assert outside == []


def _set_remote(rig, client, name: str, value):
    """Set one parameter through the node's set_parameters service; return the result."""
    future = client.set_parameters([Parameter(name, value=value)])
    rig.ros.spin_until(future.done, timeout_s=10.0, what=f'set_parameters {name} = {value!r}')
    return future.result().results[0]


def _remote_client(rig, node_name: str) -> AsyncParameterClient:
    client = AsyncParameterClient(rig.probe, f'{rig.ros.namespace}/{node_name}')
    rig.ros.spin_until(client.services_are_ready, timeout_s=10.0,
                       what=f'the parameter services of {node_name}')
    return client


RUNTIME_RULES = {
    # name: (strategy of values, rule a value must meet to be accepted)
    'solver.tolerance_m': (bad.numbers, lambda v: math.isfinite(v) and v > 0),
    'solver.min_improvement_m': (bad.numbers, lambda v: math.isfinite(v) and v >= 0),
    'solver.max_iterations': (st.integers(-5, 10 ** 12), lambda v: v >= 1),
    'solver.bend': (st.sampled_from(['any', 'up', 'down', 'sideways', '', 'UP']), None),
}


@pytest.mark.timeout(120)
def test_bad_runtime_parameters_are_refused_with_a_reason_and_fabrik_ik_keeps_solving(
        make_rig):
    rig = make_rig(ik=True)
    rig.wait_subscribed()
    client = _remote_client(rig, 'fabrik_ik')
    tried, refused, findings = [0], [0], []

    @_settings(300)
    @given(st.sampled_from(sorted(RUNTIME_RULES)).flatmap(
        lambda name: st.tuples(st.just(name), RUNTIME_RULES[name][0])))
    def runtime(case):
        name, value = case
        tried[0] += 1
        result = _set_remote(rig, client, name, value)
        rule = RUNTIME_RULES[name][1]
        refused[0] += not result.successful
        if result.successful and rule is not None and not rule(value):
            findings.append(f'{name} = {value!r} accepted')
        if not result.successful and name not in result.reason and 'type' not in result.reason:
            findings.append(f'{name} = {value!r} refused without naming it: {result.reason}')

    runtime()
    # Put sane options back, then the node must still solve.
    for name, value in (('solver.tolerance_m', 1e-4), ('solver.max_iterations', 30),
                        ('solver.min_improvement_m', 1e-7), ('solver.bend', 'any')):
        assert _set_remote(rig, client, name, value).successful
    before = len(rig.commands_seen)
    rig.points.publish(PointStamped(point=Point(x=0.15, y=0.0, z=0.12)))
    rig.ros.spin_until(lambda: len(rig.commands_seen) > before, timeout_s=10.0,
                       what='fabrik_ik to solve after the parameter storm')
    assert np.all(np.isfinite(rig.commands_seen[-1].position))
    record('bad_input.ik_runtime_parameters', {'inputs_tried': tried[0],
                                               'refused': refused[0], 'findings': findings})
    assert findings == []


DRIVER_RUNTIME = {
    'home_move_time_s': (bad.numbers, lambda v: math.isfinite(v) and 0.0 <= v <= 60.0),
    'max_speed_rad_s': (st.lists(bad.numbers, max_size=6),
                        lambda v: len(v) == 4 and all(0.0 < x <= 100.0 for x in v)),
    'on_shutdown': (st.sampled_from(['hold', 'detach', 'explode', '']), None),
}


@pytest.mark.timeout(120)
def test_bad_runtime_parameters_are_refused_and_servo_driver_keeps_driving(make_rig):
    rig = make_rig()
    rig.wait_subscribed()
    client = _remote_client(rig, 'servo_driver')
    tried, refused, findings = [0], [0], []

    @_settings(200)
    @given(st.sampled_from(sorted(DRIVER_RUNTIME)).flatmap(
        lambda name: st.tuples(st.just(name), DRIVER_RUNTIME[name][0])))
    def runtime(case):
        name, value = case
        if name == 'max_speed_rad_s' and not value:
            return          # an empty list has no parameter type; nothing to send
        tried[0] += 1
        result = _set_remote(rig, client, name, value)
        rule = DRIVER_RUNTIME[name][1]
        refused[0] += not result.successful
        if result.successful and rule is not None and not rule(value):
            findings.append(f'{name} = {value!r} accepted')

    runtime()
    for name, value in (('home_move_time_s', 0.2), ('max_speed_rad_s', [20.0] * 4)):
        assert _set_remote(rig, client, name, value).successful
    rig.commands.publish(joint_state(rig.arm.joint_names, JOINT_SENTINELS[0]))
    rig.wait_board_at(JOINT_SENTINELS[0], 'the driver to follow after the parameter storm')
    outside = pulses_outside_calibration(rig)
    record('bad_input.driver_runtime_parameters', {
        'inputs_tried': tried[0], 'refused': refused[0], 'findings': findings,
        'pulses_outside_calibration': len(outside)})
    assert findings == []
    assert outside == []


@pytest.mark.timeout(60)
def test_fabrik_ik_logs_one_line_for_each_cause_even_within_the_throttle_period(make_rig,
                                                                               capfd):
    rig = make_rig(ik=True)
    rig.wait_subscribed()
    capfd.readouterr()
    started = time.monotonic()
    handled = 0
    for _ in range(2):
        for frame, x in (('', math.nan), ('world', 0.15), ('', 5.0)):
            msg = PointStamped(point=Point(x=x, y=0.0, z=0.1))
            msg.header.frame_id = frame
            rig.points.publish(msg)
            handled += 1
            rig.ros.spin_until(lambda n=handled: _ik_handled(rig) >= n, timeout_s=10.0,
                               what=f'fabrik_ik to handle {msg}')
    elapsed = time.monotonic() - started
    groups = by_cause(log_lines(capfd.readouterr().err, 'fabrik_ik'), IK_CAUSES)
    counts = {cause: len(lines) for cause, lines in groups.items()}
    assert set(counts) == {'not finite', 'wrong frame', 'unreachable'}, counts
    most = 1 if elapsed < IK_THROTTLE_S else math.ceil(elapsed / IK_THROTTLE_S) + 1
    assert max(counts.values()) <= most, (counts, elapsed)


def _ik_handled(rig) -> int:
    """Return the targets fabrik_ik solved or refused, from its diagnostics."""
    values = rig.last_values('fabrik_ik')
    return int(values.get('solves', 0)) + int(values.get('rejected targets', 0))


@pytest.mark.timeout(60)
def test_servo_driver_logs_one_clear_line_for_each_cause(make_rig, capfd):
    rig = make_rig()
    rig.wait_subscribed()
    names = list(rig.arm.joint_names)
    capfd.readouterr()
    rig.commands.publish(joint_state(names, [0.1, 0.2]))                  # lengths differ
    rig.commands.publish(joint_state(['gripper', 'thumb'], [0.1, 0.2]))   # unknown joints
    rig.commands.publish(joint_state(names, [math.nan, 1.0, 0.0, 0.0]))   # not finite
    rig.commands.publish(joint_state(names, JOINT_SENTINELS[0]))
    rig.ros.spin_until(lambda: rig.driver.latest_command == JOINT_SENTINELS[0],
                       timeout_s=10.0, what='servo_driver to handle the commands')
    lines = [line.message for line in log_lines(capfd.readouterr().err, 'servo_driver')
             if line.severity == 'WARN']
    assert len(lines) == 3, lines
    assert 'length' in lines[0] and 'gripper' in lines[1] and 'nan' in lines[2], lines
