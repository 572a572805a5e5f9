"""fabrik_ik with sim_arm in one process: targets in, joint states out, bad input survived."""

import math
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PoseStamped
from nav_msgs.msg import Path
import numpy as np
import pytest
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from visualization_msgs.msg import Marker, MarkerArray

from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes import ik_node, path_intake
from fabrik_ros.nodes.ik_node import FabrikIkNode, STREAM_GAP_S
from fabrik_ros.nodes.path_intake import MAX_PATH_POSES
from fabrik_ros.nodes.sim_arm_node import SimArmNode
from test.cyclic_garbage import cyclic_garbage
from test.nodes.conftest import ARM_CONFIG

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

ARM = load_arm(ARM_CONFIG)
REACHABLE = (0.15, 0.05, 0.12)
TOOL_MM = 1e-3


def _point(xyz, frame_id='base_link') -> PointStamped:
    msg = PointStamped()
    msg.header.frame_id = frame_id
    msg.point.x, msg.point.y, msg.point.z = xyz
    return msg


def _tip(positions) -> np.ndarray:
    return ARM.fk(list(positions))[-1]


class Rig:
    """fabrik_ik (+ optionally sim_arm) and a probe that records what they publish."""

    def __init__(self, ros, arm_args, *, sim_arm=True, extra=()):
        args = [*arm_args, '-p', 'diagnostics_period_s:=0.1', *extra]
        self.ros = ros
        self.ik = ros.add(FabrikIkNode(context=ros.context, cli_args=args))
        if sim_arm:
            ros.add(SimArmNode(context=ros.context,
                               cli_args=[*arm_args, '-p', 'servo_speed_rad_s:=20.0']))
        self.probe = ros.probe()
        self.states, self.commands, self.markers, self.diagnostics = [], [], [], []
        self.probe.create_subscription(JointState, 'joint_states', self.states.append, 10)
        self.probe.create_subscription(JointState, 'joint_commands', self.commands.append, 10)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.probe.create_subscription(MarkerArray, 'ik_markers', self.markers.append, latched)
        self.probe.create_subscription(DiagnosticArray, '/diagnostics', self.diagnostics.append,
                                       10)
        self.publishers = {}

    def publisher(self, topic, msg_type):
        if topic not in self.publishers:
            publisher = self.probe.create_publisher(msg_type, topic, 10)
            self.ros.spin_until(lambda: publisher.get_subscription_count() > 0, timeout_s=10.0,
                                what=f'fabrik_ik to subscribe {topic}')
            self.publishers[topic] = publisher
        return self.publishers[topic]

    def publish(self, topic, msg_type, msg):
        self.publisher(topic, msg_type).publish(msg)

    def wait_for_commands(self, count):
        self.ros.spin_until(lambda: len(self.commands) >= count, timeout_s=10.0,
                            what=f'{count} joint_commands')
        return self.commands[count - 1]

    def latest_diagnostic(self, condition, what):
        def matching():
            return [s for a in self.diagnostics for s in a.status
                    if self.ros.ours(s) and condition(s)]
        self.ros.spin_until(matching, timeout_s=10.0, what=what)
        return matching()[-1]


def _values(status) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def test_point_target_ends_with_joint_states_whose_fk_is_within_1_mm(ros, arm_args):
    rig = Rig(ros, arm_args)
    rig.publish('target_point', PointStamped, _point(REACHABLE))
    ros.spin_until(lambda: rig.states and np.linalg.norm(
        _tip(rig.states[-1].position) - REACHABLE) < TOOL_MM, timeout_s=10.0,
        what='sim_arm to reach the target')
    command = rig.commands[-1]
    assert list(command.name) == list(ARM.joint_names)
    assert ARM.within_limits(command.position)
    markers = {m.id: m for m in rig.markers[-1].markers}
    assert [markers[i].type for i in (0, 1, 2)] == [Marker.LINE_STRIP, Marker.SPHERE_LIST,
                                                    Marker.SPHERE]
    assert markers[2].color.g > markers[2].color.r, 'a reached target is drawn green'
    assert len(markers[0].points) == len(ARM.joints) + 1


def _joint_state(positions) -> JointState:
    msg = JointState()
    msg.name = list(ARM.joint_names)
    msg.position = [float(a) for a in positions]
    return msg


def test_a_target_stream_is_solved_from_the_last_answer_a_target_after_a_pause_from_the_arm(
        ros, arm_args):
    """Joint states lagging a stream must not make the redundant joints hop between poses.

    The arm reports its home pose (as servos still slewing toward the stream would report a
    pose behind it). Solved from that, the next target 1 mm on would swing the wrist by about
    half a radian (-1.18 -> -0.65 rad); solved from the previous answer it moves a little.
    After a pause longer than STREAM_GAP_S the reported pose seeds the solve again.
    """
    rig = Rig(ros, arm_args, sim_arm=False)
    rig.publish('target_point', PointStamped, _point(REACHABLE))
    first = np.array(rig.wait_for_commands(1).position)
    rig.publish('joint_states', JointState, _joint_state(ARM.home))
    ros.spin_until(lambda: rig.ik._joint_states is not None, timeout_s=10.0,
                   what='fabrik_ik to take the joint states')
    nearby = (REACHABLE[0], REACHABLE[1], REACHABLE[2] + 0.001)
    rig.publish('target_point', PointStamped, _point(nearby))
    second = np.array(rig.wait_for_commands(2).position)
    from_home = np.array(ARM.ik(nearby, list(ARM.home)).angles_rad)
    assert np.abs(from_home - first).max() > 0.3, 'the seeds lead to different poses'
    assert np.abs(second - first).max() < 0.05
    paused_until = time.monotonic() + STREAM_GAP_S + 0.2
    ros.spin_until(lambda: time.monotonic() > paused_until, timeout_s=10.0, what='a pause')
    rig.publish('target_point', PointStamped, _point(nearby))
    third = np.array(rig.wait_for_commands(3).position)
    assert np.abs(third - from_home).max() < 1e-3


def test_non_finite_and_wrong_frame_targets_are_dropped_and_the_node_keeps_serving(
        ros, arm_args):
    rig = Rig(ros, arm_args, sim_arm=False)
    bad = [_point((math.nan, 0.0, 0.1)), _point((0.1, 0.0, math.inf)),
           _point(REACHABLE, frame_id='world')]
    for count, msg in enumerate(bad, 1):   # one at a time: targets are latest-wins
        rig.publish('target_point', PointStamped, msg)
        rig.latest_diagnostic(lambda s, n=str(count): _values(s).get('rejected targets') == n,
                              f'diagnostics counting {count} rejected targets')
    # Bytes that are no PointStamped: the middleware drops them before the node sees them.
    rig.publisher('target_point', PointStamped).publish(b'\x00\x01\x00\x00' + b'\xff' * 12)
    rig.publish('target_point', PointStamped, _point(REACHABLE, frame_id=''))
    command = rig.wait_for_commands(1)
    assert np.linalg.norm(_tip(command.position) - REACHABLE) < TOOL_MM
    status = rig.latest_diagnostic(lambda s: s.level == b'\x00' and _values(s)['solves'] != '0',
                                   'OK diagnostics after the good target')
    assert _values(status)['rejected targets'] == '3'
    assert len(rig.commands) == 1, 'only the good target moved the arm'


def test_unreachable_target_moves_to_the_closest_pose_and_says_so(ros, arm_args):
    rig = Rig(ros, arm_args, sim_arm=False)
    far = np.array([0.5, 0.0, 0.07])
    rig.publish('target_point', PointStamped, _point(tuple(far)))
    command = rig.wait_for_commands(1)
    reach = sum(link.length_m for link in ARM.links)
    shoulder = np.array([0.0, 0.0, ARM.shoulder_height_m])
    closest = np.linalg.norm(far - shoulder) - reach
    assert np.linalg.norm(_tip(command.position) - far) == pytest.approx(closest, abs=TOOL_MM)
    assert ARM.within_limits(command.position)
    status = rig.latest_diagnostic(lambda s: s.level == b'\x01', 'WARN diagnostics')
    assert 'out of reach' in status.message
    def target_marker():
        return [m for m in rig.markers[-1].markers if m.id == 2][0]
    rig.ros.spin_until(lambda: target_marker().color.r > target_marker().color.g,
                       timeout_s=10.0, what='the unreached target drawn red')


def test_runtime_solver_parameters_are_validated_with_a_reason(ros, arm_args):
    rig = Rig(ros, arm_args, sim_arm=False)
    refused = rig.ik.set_parameters([Parameter('solver.tolerance_m', value=-1.0),
                                     Parameter('solver.bend', value='sideways'),
                                     Parameter('geometry.tool_length_m', value=0.2)])
    accepted = rig.ik.set_parameters([Parameter('solver.tolerance_m', value=0.002),
                                      Parameter('solver.bend', value='up'),
                                      Parameter('solver.max_iterations', value=5)])
    assert [r.successful for r in refused] == [False, False, False]
    assert 'solver.tolerance_m = -1.0' in refused[0].reason
    assert "['any', 'up', 'down']" in refused[1].reason
    assert 'read-only' in refused[2].reason
    assert all(r.successful for r in accepted)
    assert rig.ik.get_parameter('solver.tolerance_m').value == 0.002
    rig.publish('target_point', PointStamped, _point(REACHABLE))
    command = rig.wait_for_commands(1)
    assert np.linalg.norm(_tip(command.position) - REACHABLE) < 0.002


def test_pose_orientation_sets_the_tool_approach_when_asked(ros, arm_args):
    rig = Rig(ros, arm_args, sim_arm=False, extra=['-p', 'use_pose_orientation:=true'])
    pose = PoseStamped()
    pose.pose.position.x, pose.pose.position.z = 0.16, 0.05
    # A quarter turn about +y turns the x axis onto -z: the tool points straight down.
    pose.pose.orientation.w = pose.pose.orientation.y = math.sqrt(0.5)
    rig.publish('target_pose', PoseStamped, pose)
    command = rig.wait_for_commands(1)
    points = ARM.fk(list(command.position))
    tool = (points[-1] - points[-2]) / np.linalg.norm(points[-1] - points[-2])
    assert np.linalg.norm(points[-1] - (0.16, 0.0, 0.05)) < TOOL_MM
    assert tool == pytest.approx((0.0, 0.0, -1.0), abs=1e-3)


def _path(waypoints) -> Path:
    path = Path()
    path.header.frame_id = 'base_link'
    for xyz in waypoints:
        pose = PoseStamped()
        pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = xyz
        path.poses.append(pose)
    return path


@pytest.mark.parametrize('waypoints', [
    [(0.15, -0.04, 0.10), (0.16, 0.0, 0.12), (0.15, 0.04, 0.10)],
    [(0.12, 0.08, 0.06)],
], ids=['three poses', 'one pose'])
def test_a_path_starts_at_the_tool_and_is_walked_to_its_last_pose(ros, arm_args, waypoints):
    """Regression: the tool jumped to the first waypoint in one step, then followed the path.

    Steps are taken on the ROS clock, so a late timer tick makes a longer step; only a stall
    of half the path's duration could make one step cover half the way to the first waypoint.
    """
    rig = Rig(ros, arm_args, sim_arm=False, extra=['-p', 'path_speed_m_s:=0.05',
                                                   '-p', 'path_rate_hz:=50.0'])
    rig.publish('target_point', PointStamped, _point(REACHABLE))
    rig.wait_for_commands(1)
    rig.publish('target_path', Path, _path(waypoints))
    ros.spin_until(lambda: rig.commands and np.linalg.norm(
        _tip(rig.commands[-1].position) - waypoints[-1]) < TOOL_MM, timeout_s=20.0,
        what='the path to end at its last pose')
    tips = np.array([_tip(c.position) for c in rig.commands])
    assert len(tips) >= 5, 'the path is solved at intermediate points'
    steps_m = np.linalg.norm(np.diff(tips, axis=0), axis=1)
    jump_m = np.linalg.norm(np.array(waypoints[0]) - REACHABLE)
    assert np.max(steps_m) < 0.5 * jump_m, f'a step of {np.max(steps_m):.3f} m: the tool jumped'


def test_a_degenerate_orientation_is_normalised_or_refused_and_never_stops_the_node(
        ros, arm_args):
    """Regression: x = 1e-160 made the approach axis NaN and the solver's error killed the node."""
    rig = Rig(ros, arm_args, sim_arm=False, extra=['-p', 'use_pose_orientation:=true'])
    tiny = PoseStamped()
    tiny.header.frame_id = 'base_link'
    tiny.pose.position.x, tiny.pose.position.z = 0.2, 0.05
    tiny.pose.orientation.w, tiny.pose.orientation.x = 0.0, 1e-160   # x axis unchanged: +x
    rig.publish('target_pose', PoseStamped, tiny)
    command = rig.wait_for_commands(1)
    points = ARM.fk(list(command.position))
    assert np.linalg.norm(points[-1] - (0.2, 0.0, 0.05)) < TOOL_MM
    tool = (points[-1] - points[-2]) / np.linalg.norm(points[-1] - points[-2])
    assert tool == pytest.approx((1.0, 0.0, 0.0), abs=1e-3)
    zero = PoseStamped()
    zero.pose.position.x, zero.pose.position.z = 0.2, 0.05
    zero.pose.orientation.w = 0.0
    rig.publish('target_pose', PoseStamped, zero)
    rig.latest_diagnostic(lambda s: _values(s).get('rejected targets') == '1',
                          'the all-zero quaternion refused')
    rig.publish('target_point', PointStamped, _point(REACHABLE))
    rig.wait_for_commands(2)


def test_warnings_name_the_topic_used_and_which_part_of_a_target_is_out_of_reach(
        ros, arm_args, capfd):
    rig = Rig(ros, arm_args, sim_arm=False, extra=['-p', 'use_pose_orientation:=true',
                                                   '-r', 'target_point:=clicks',
                                                   '-r', 'target_pose:=goals'])
    rig.publish('clicks', PointStamped, _point((math.nan, 0.0, 0.1)))
    rig.latest_diagnostic(lambda s: _values(s).get('rejected targets') == '1',
                          'the NaN target refused')
    backwards = PoseStamped()
    backwards.pose.position.x, backwards.pose.position.z = 0.2, 0.05
    backwards.pose.orientation.w, backwards.pose.orientation.z = 0.0, 1.0   # x axis -> -x
    rig.publish('goals', PoseStamped, backwards)
    rig.wait_for_commands(1)
    rig.publish('goals', PoseStamped, _pose_at((0.6, 0.0, 0.05)))
    rig.wait_for_commands(2)
    err = capfd.readouterr().err
    assert f'{ros.namespace}/clicks: position (nan, 0.0, 0.1) is not finite' in err
    assert f'{ros.namespace}/goals (0.200, 0.000, 0.050) is reachable, but not along the ' \
           'approach (-1.000, 0.000, 0.000)' in err
    assert f'{ros.namespace}/goals (0.600, 0.000, 0.050) is out of reach' in err


def _pose_at(xyz) -> PoseStamped:
    pose = PoseStamped()
    pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = xyz
    return pose


def test_without_interactive_markers_the_node_runs_without_the_3d_target(ros, arm_args):
    try:
        import interactive_markers  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip('interactive_markers is installed here: the fallback path is not taken')
    rig = Rig(ros, arm_args, sim_arm=False)
    assert not rig.ik.serves_interactive_target
    rig.publish('target_point', PointStamped, _point(REACHABLE))
    rig.wait_for_commands(1)


def test_a_burst_of_targets_leaves_only_the_newest_solved(ros, arm_args):
    rig = Rig(ros, arm_args, sim_arm=False)
    rig.publish('target_point', PointStamped, _point(REACHABLE))
    rig.wait_for_commands(1)
    burst = [(0.12 + 0.001 * i, 0.0, 0.12) for i in range(50)]
    for xyz in burst:   # all published before fabrik_ik gets a turn to spin
        rig.publish('target_point', PointStamped, _point(xyz))
    rig.ros.spin_until(lambda: np.linalg.norm(_tip(rig.commands[-1].position) - burst[-1])
                       < TOOL_MM, timeout_s=10.0, what='the newest target to be solved')
    rig.publish('target_point', PointStamped, _point(REACHABLE))   # after the whole burst
    rig.ros.spin_until(lambda: np.linalg.norm(_tip(rig.commands[-1].position) - REACHABLE)
                       < TOOL_MM, timeout_s=10.0, what='the target after the burst')
    assert len(rig.commands) - 2 <= 3, f'{len(rig.commands) - 2} of 50 queued targets solved'


def test_markers_show_the_newest_solution_at_most_30_times_a_second(ros, arm_args):
    rig = Rig(ros, arm_args, sim_arm=False)
    arrivals = []
    rig.probe.create_subscription(
        MarkerArray, 'ik_markers', lambda msg: arrivals.append((time.monotonic(), msg)),
        QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    targets = [(0.15, 0.002 * i - 0.05, 0.12) for i in range(50)]
    for count, xyz in enumerate(targets, 1):
        rig.publish('target_point', PointStamped, _point(xyz))
        rig.wait_for_commands(count)

    def newest_drawn():
        if not arrivals:      # on a busy machine the first array may still be on its way
            return False
        tip = [[p.x, p.y, p.z] for p in arrivals[-1][1].markers[0].points][-1]
        return np.linalg.norm(np.array(tip) - newest) < TOOL_MM
    newest = _tip(rig.commands[-1].position)
    rig.ros.spin_until(newest_drawn, timeout_s=10.0, what='markers of the newest solution')
    assert len(arrivals) < 1 + len(targets), 'one marker array per solve'
    # Counted against the span of their stamps (taken as each is published), not their arrival
    # gaps: DDS can deliver two arrays back to back on a busy machine. A 30 Hz timer fires at
    # most once per period boundary, so n arrays span at least n - 2 periods. Solves quicker
    # than a period may leave only the newest array after the latched one: span 0, n <= 2.
    stamps = [Time.from_msg(msg.markers[0].header.stamp).nanoseconds * 1e-9
              for _, msg in arrivals[1:]]
    span_s = stamps[-1] - stamps[0] if stamps else 0.0
    assert len(stamps) <= 30.0 * span_s + 2, f'{len(stamps)} marker arrays in {span_s:.3f} s'


def test_a_command_sink_gets_each_joint_command_as_published(ros, arm_args):
    handed = []
    ros.add(FabrikIkNode(context=ros.context, cli_args=arm_args,
                         command_sink=handed.append))
    probe = ros.probe()
    commands = []
    probe.create_subscription(JointState, 'joint_commands', commands.append, 10)
    publisher = probe.create_publisher(PointStamped, 'target_point', 10)
    ros.spin_until(lambda: publisher.get_subscription_count() > 0, timeout_s=10.0,
                   what='fabrik_ik to subscribe target_point')
    publisher.publish(_point(REACHABLE))
    ros.spin_until(lambda: commands, timeout_s=10.0, what='the published joint command')
    assert handed == [tuple(commands[0].position)]


def test_each_joint_command_carries_its_own_target_and_a_fresh_stamp(ros, arm_args):
    rig = Rig(ros, arm_args, sim_arm=False)
    targets = [REACHABLE, (0.12, -0.06, 0.1), (0.17, 0.0, 0.06)]
    for count, target in enumerate(targets, start=1):
        rig.publish('target_point', PointStamped, _point(target))
        rig.wait_for_commands(count)
    stamps = [Time.from_msg(c.header.stamp).nanoseconds for c in rig.commands]
    assert stamps == sorted(set(stamps)) and stamps[0] > 0, 'a new stamp on every command'
    for command, target in zip(rig.commands, targets, strict=True):
        assert list(command.name) == list(ARM.joint_names)
        assert np.linalg.norm(_tip(command.position) - target) < TOOL_MM
        assert command.header.frame_id == '' and not command.velocity and not command.effort


def _line_path(poses: int) -> Path:
    """Return a target_path of ``poses`` poses along a 6 cm line in front of the arm."""
    return _path([(0.13, -0.03 + 0.06 * i / (poses - 1), 0.08) for i in range(poses)])


def test_a_path_above_the_size_limit_is_refused_in_one_line_and_one_at_the_limit_is_followed(
        ros, arm_args, capfd):
    """Issue 22 (5): a 100,000-pose path held fabrik_ik for 10 s; over MAX_PATH_POSES: refused."""
    rig = Rig(ros, arm_args, sim_arm=False, extra=['-p', 'path_speed_m_s:=2.0'])
    too_long = _line_path(MAX_PATH_POSES + 1)
    rig.publish('target_path', Path, too_long)
    rig.publish('target_path', Path, too_long)
    rig.latest_diagnostic(lambda s: _values(s).get('rejected targets') == '2',
                          'both long paths refused')
    rig.publish('target_point', PointStamped, _point(REACHABLE))
    rig.wait_for_commands(1)
    assert len(rig.commands) == 1, 'a refused path moves nothing'
    at_limit = _line_path(MAX_PATH_POSES)
    rig.publish('target_path', Path, at_limit)
    end = (0.13, 0.03, 0.08)
    ros.spin_until(lambda: np.linalg.norm(_tip(rig.commands[-1].position) - end) < TOOL_MM,
                   timeout_s=20.0, what='the path at the limit to be followed to its end')
    refusal = (f'{ros.namespace}/target_path has {MAX_PATH_POSES + 1} poses, more than the '
               f'{MAX_PATH_POSES} a path may have')
    err = capfd.readouterr().err
    assert err.count(refusal) == 1, err
    assert f'following {ros.namespace}/target_path ({MAX_PATH_POSES} poses)' in err


class _Gate:
    """Hold path preparations on the worker until the test opens the gate (or 10 s pass)."""

    def __init__(self, prepare):
        self._prepare = prepare
        self.started, self.opened, self.finished = (threading.Event(), threading.Event(),
                                                    threading.Event())
        self.timed_out = False

    def __call__(self, request):
        self.started.set()
        self.timed_out = not self.opened.wait(timeout=10.0)
        try:
            return self._prepare(request)
        finally:
            self.finished.set()


def test_a_point_after_a_maximal_path_is_answered_while_the_path_is_prepared_and_wins(
        ros, arm_args, monkeypatch, capfd):
    """Issue 22 (5): a point published after a big path waited until the path was prepared.

    The preparation is held at a gate until the point's command has come: an implementation
    that prepares in the executor's thread keeps the gate shut until it times out, and the
    point is not answered before that (or the gate is found to have timed out).
    """
    gate = _Gate(path_intake.prepare_path)
    monkeypatch.setattr(path_intake, 'prepare_path', gate)
    rig = Rig(ros, arm_args, sim_arm=False)
    rig.publish('target_path', Path, _line_path(MAX_PATH_POSES))
    ros.spin_until(gate.started.is_set, timeout_s=20.0, what='the path preparation to start')
    rig.publish('target_point', PointStamped, _point(REACHABLE))
    try:
        command = rig.wait_for_commands(1)
    finally:
        gate.opened.set()
    assert not gate.timed_out, 'the path preparation held the executor until its gate timed out'
    assert np.linalg.norm(_tip(command.position) - REACHABLE) < TOOL_MM
    ros.spin_until(gate.finished.is_set, timeout_s=20.0, what='the path preparation to end')
    diagnostics = len(rig.diagnostics)     # 0.1 s apart: two more span two path timer ticks
    ros.spin_until(lambda: len(rig.diagnostics) >= diagnostics + 2, timeout_s=10.0,
                   what='two more diagnostics')
    assert len(rig.commands) == 1, 'the path, superseded by the point, is not followed'
    assert 'following' not in capfd.readouterr().err


def test_a_target_stream_leaves_no_reference_cycles(ros, arm_args):
    """Each target's objects are freed when it is done (see test/cyclic_garbage.py).

    Not by a collection that would pause the next target.
    """
    rig = Rig(ros, arm_args, sim_arm=False)
    targets = [_point(np.add(REACHABLE, (0.0, 0.002 * (i % 10), 0.0))) for i in range(60)]
    rig.publish('target_point', PointStamped, targets[0])
    rig.wait_for_commands(1)
    with cyclic_garbage() as found:
        for count, target in enumerate(targets[1:], start=2):
            rig.publish('target_point', PointStamped, target)
            rig.wait_for_commands(count)
    assert found[0] == 0


def test_markers_are_drawn_only_for_readers_and_a_late_reader_gets_the_newest_solution(
        ros, arm_args, monkeypatch):
    drawn, ticks = [], []
    solution = ik_node.solution_markers
    monkeypatch.setattr(ik_node, 'solution_markers',
                        lambda *a, **k: drawn.append(1) or solution(*a, **k))
    on_timer = FabrikIkNode._on_marker_timer
    monkeypatch.setattr(FabrikIkNode, '_on_marker_timer',
                        lambda self: ticks.append(1) or on_timer(self))
    ros.add(FabrikIkNode(context=ros.context, cli_args=arm_args))
    probe = ros.probe()
    commands = []
    probe.create_subscription(JointState, 'joint_commands', commands.append, 10)
    publisher = probe.create_publisher(PointStamped, 'target_point', 10)
    ros.spin_until(lambda: publisher.get_subscription_count() > 0, timeout_s=10.0,
                   what='fabrik_ik to subscribe target_point')
    start = len(drawn)                # the home pose, latched at start
    targets = [(0.15, 0.002 * i - 0.02, 0.12) for i in range(20)]
    for count, xyz in enumerate(targets, 1):
        publisher.publish(_point(xyz))
        ros.spin_until(lambda n=count: len(commands) >= n, timeout_s=10.0,
                       what=f'{count} joint commands')
    ticked = len(ticks)       # the marker timer finds nobody to draw the newest solution for
    ros.spin_until(lambda: len(ticks) > ticked, timeout_s=10.0, what='a marker timer tick')
    assert len(drawn) == start, 'markers drawn for nobody'
    newest = _tip(commands[-1].position)
    arrays, reached = [], []
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    probe.create_subscription(MarkerArray, 'ik_markers', arrays.append, latched)
    probe.create_subscription(Bool, 'target_reached', reached.append, latched)

    def newest_drawn() -> bool:
        tips = [[[p.x, p.y, p.z] for p in a.markers[0].points][-1] for a in arrays]
        return any(np.linalg.norm(np.array(tip) - newest) < TOOL_MM for tip in tips)
    ros.spin_until(lambda: newest_drawn() and reached, timeout_s=10.0,
                   what='the newest solution drawn for the late reader')
    assert len(drawn) - start == 1, 'only the newest solution is drawn, once'
