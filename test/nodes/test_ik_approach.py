"""fabrik_ik tells how far a pose target's tool axis ends from the asked approach (issue 24.1).

The two scenarios of the issue on arm_4dof, with use_pose_orientation: (0.15, 0, 0.12) asked
to point straight down (the wrist stops at its -90 deg limit, the tool about 8 deg off) and
(0.15, 0.05, 0.12) with the identity orientation (the tool's axis cannot leave the arm's
vertical plane, 18.4 deg from +x). The degrees in the log and on /diagnostics are checked
against the tool's axis computed here from the commanded joint positions (yaw, then the sum
of the pitches), not against the node's own arithmetic.
"""

import math

from geometry_msgs.msg import PointStamped, PoseStamped
from nav_msgs.msg import Path
import numpy as np
import pytest
from visualization_msgs.msg import Marker

from fabrik_ros.kinematics import JointKind
from fabrik_ros.nodes.ik_node import APPROACH_WARN_DEG
from fabrik_ros.nodes.markers import (
    ASKED_APPROACH_COLOUR,
    ASKED_APPROACH_ID,
    REACHED_APPROACH_COLOUR,
    REACHED_APPROACH_ID,
    TARGET_ID,
)
from test.nodes.test_ik_node import _path, _point, _values, ARM, Rig

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

DOWN = (0.0, 0.0, -1.0)
DOWN_AT = (0.15, 0.0, 0.12)
BESIDE_AT = (0.15, 0.05, 0.12)
ORIENTED = ['-p', 'use_pose_orientation:=true']


def _pose(xyz, quaternion_xyzw=(0.0, 0.0, 0.0, 1.0)) -> PoseStamped:
    pose = PoseStamped()
    pose.header.frame_id = 'base_link'
    pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = xyz
    q = pose.pose.orientation
    q.x, q.y, q.z, q.w = quaternion_xyzw
    return pose


# A quarter turn about +y turns the x axis onto -z: the tool points straight down.
POINTING_DOWN = (0.0, math.sqrt(0.5), 0.0, math.sqrt(0.5))


def _tool_axis(positions) -> np.ndarray:
    """Return the tool's axis of arm_4dof joint positions: yaw, then the pitches' sum."""
    yaw, pitch = 0.0, 0.0
    for joint, position in zip(ARM.joints, positions, strict=True):
        turned = joint.zero_rad + joint.direction * position
        if joint.kind is JointKind.YAW:
            yaw = turned
        else:
            pitch += turned
    return np.array([math.cos(pitch) * math.cos(yaw), math.cos(pitch) * math.sin(yaw),
                     math.sin(pitch)])


def _degrees_between(asked, axis) -> float:
    cosine = float(np.dot(asked, axis) / np.linalg.norm(asked) / np.linalg.norm(axis))
    return math.degrees(math.acos(max(-1.0, min(1.0, cosine))))


def _ik_log_lines(capfd) -> list[str]:
    return [line for line in capfd.readouterr().err.splitlines() if 'fabrik_ik' in line]


def test_a_pose_pointing_down_beyond_the_wrist_limit_is_warned_with_its_degrees(
        ros, arm_args, capfd):
    rig = Rig(ros, arm_args, sim_arm=False, extra=ORIENTED)
    rig.publish('target_pose', PoseStamped, _pose(DOWN_AT, POINTING_DOWN))
    command = rig.wait_for_commands(1)
    degrees = _degrees_between(DOWN, _tool_axis(command.position))
    assert degrees > APPROACH_WARN_DEG, 'the scenario: the wrist limit holds the tool off'
    wrist = ARM.joint_names.index('wrist')
    assert command.position[wrist] == pytest.approx(math.radians(-90.0))
    residual_mm = 1e3 * np.linalg.norm(ARM.fk(list(command.position))[-1] - DOWN_AT)
    status = rig.latest_diagnostic(lambda s: s.level == b'\x01', 'WARN diagnostics')
    assert float(_values(status)['last approach error [deg]']) == pytest.approx(degrees,
                                                                                abs=1e-4)
    assert f'the tool {degrees:.1f} deg from its approach' in status.message
    expected = (f'{ros.namespace}/target_pose (0.150, 0.000, 0.120) is reachable, but not along '
                f'the approach (0.000, 0.000, -1.000): moving to a pose with the tool '
                f'{degrees:.1f} deg from it')
    logged = _ik_log_lines(capfd)
    lines = [line for line in logged if expected in line]
    assert len(lines) == 1, logged
    assert lines[0].endswith(f'{degrees:.1f} deg from it, {residual_mm:.1f} mm from the target '
                             f'(wrist at its lower limit, -90.0 deg)')


def test_a_pose_whose_approach_leaves_the_arms_plane_is_warned_though_its_point_is_reached(
        ros, arm_args, capfd):
    rig = Rig(ros, arm_args, sim_arm=False, extra=ORIENTED)
    rig.publish('target_pose', PoseStamped, _pose(BESIDE_AT))
    command = rig.wait_for_commands(1)
    assert np.linalg.norm(ARM.fk(list(command.position))[-1] - BESIDE_AT) < 1e-4
    degrees = _degrees_between((1.0, 0.0, 0.0), _tool_axis(command.position))
    beside = math.degrees(math.atan2(BESIDE_AT[1], BESIDE_AT[0]))   # the plane's azimuth
    assert degrees == pytest.approx(beside, abs=0.01), 'met within the plane, no more'
    status = rig.latest_diagnostic(lambda s: s.level == b'\x01', 'WARN diagnostics')
    assert status.message == f'last target reached, but the tool {degrees:.1f} deg from its ' \
                             'approach'
    assert float(_values(status)['last approach error [deg]']) == pytest.approx(degrees,
                                                                                abs=1e-4)
    expected = (f'{ros.namespace}/target_pose (0.150, 0.050, 0.120) is reachable, but not along '
                f'the approach (1.000, 0.000, 0.000): moving to a pose with the tool '
                f"{degrees:.1f} deg from it ({beside:.1f} deg of it lie outside the arm's "
                f"vertical plane, which the tool's axis cannot leave)")
    lines = _ik_log_lines(capfd)
    assert [line for line in lines if expected in line], lines


def test_a_pose_kept_along_its_approach_but_short_of_its_point_says_so(ros, arm_args, capfd):
    """(0.1, 0, 0.05) is reachable, but not with the tool along +x: the tool stays along it."""
    rig = Rig(ros, arm_args, sim_arm=False, extra=ORIENTED)
    rig.publish('target_pose', PoseStamped, _pose((0.1, 0.0, 0.05)))
    command = rig.wait_for_commands(1)
    assert _degrees_between((1.0, 0.0, 0.0), _tool_axis(command.position)) < 1e-3
    short_mm = 1e3 * np.linalg.norm(ARM.fk(list(command.position))[-1] - (0.1, 0.0, 0.05))
    assert short_mm > 1.0
    logged = _ik_log_lines(capfd)
    assert [line for line in logged if line.endswith(
        '(0.100, 0.000, 0.050) is reachable, but not along the approach (1.000, 0.000, 0.000): '
        f'moving to a pose along it, {short_mm:.1f} mm from the target')], logged


def test_a_met_approach_is_not_warned_and_a_point_target_reports_none_asked(
        ros, arm_args, capfd):
    rig = Rig(ros, arm_args, sim_arm=False, extra=ORIENTED)
    rig.publish('target_pose', PoseStamped, _pose((0.16, 0.0, 0.05), POINTING_DOWN))
    command = rig.wait_for_commands(1)
    assert _degrees_between(DOWN, _tool_axis(command.position)) < 1e-3
    status = rig.latest_diagnostic(lambda s: _values(s)['solves'] == '1', 'diagnostics')
    assert status.level == b'\x00'
    assert float(_values(status)['last approach error [deg]']) < 1e-3
    rig.publish('target_point', PointStamped, _point(BESIDE_AT))
    rig.wait_for_commands(2)
    status = rig.latest_diagnostic(lambda s: _values(s)['solves'] == '2', 'diagnostics')
    assert (status.level, _values(status)['last approach error [deg]']) == (b'\x00',
                                                                          'none asked')
    assert not [line for line in _ik_log_lines(capfd) if 'WARN' in line]


def _markers_by_id(rig):
    return {m.id: m for m in rig.markers[-1].markers}


def test_markers_show_the_asked_and_the_reached_approach_and_drop_them_for_a_point(
        ros, arm_args):
    rig = Rig(ros, arm_args, sim_arm=False, extra=ORIENTED)
    rig.publish('target_pose', PoseStamped, _pose(BESIDE_AT))
    command = rig.wait_for_commands(1)
    tool_point = ARM.fk(list(command.position))[-1]
    rig.ros.spin_until(lambda: rig.markers and ASKED_APPROACH_ID in _markers_by_id(rig)
                       and _markers_by_id(rig)[ASKED_APPROACH_ID].action == Marker.ADD,
                       timeout_s=10.0, what='the approach arrows')
    markers = _markers_by_id(rig)
    asked, reached = markers[ASKED_APPROACH_ID], markers[REACHED_APPROACH_ID]
    assert (asked.type, reached.type) == (Marker.ARROW, Marker.ARROW)
    def rgb(colour):
        return (colour.r, colour.g, colour.b)
    assert rgb(asked.color) == pytest.approx(rgb(ASKED_APPROACH_COLOUR))
    assert rgb(reached.color) == pytest.approx(rgb(REACHED_APPROACH_COLOUR))
    assert len({rgb(asked.color), rgb(reached.color), rgb(markers[TARGET_ID].color)}) == 3

    def arrow(marker):
        start, end = (np.array([p.x, p.y, p.z]) for p in marker.points)
        return start, (end - start) / np.linalg.norm(end - start)
    start, direction = arrow(asked)
    assert start == pytest.approx(BESIDE_AT) and direction == pytest.approx((1.0, 0.0, 0.0))
    start, direction = arrow(reached)
    assert start == pytest.approx(tool_point, abs=1e-9)
    assert direction == pytest.approx(_tool_axis(command.position), abs=1e-9)
    rig.publish('target_point', PointStamped, _point(DOWN_AT))
    rig.wait_for_commands(2)
    rig.ros.spin_until(
        lambda: _markers_by_id(rig)[ASKED_APPROACH_ID].action == Marker.DELETE
        and _markers_by_id(rig)[REACHED_APPROACH_ID].action == Marker.DELETE,
        timeout_s=10.0, what='the arrows deleted for a point target')


@pytest.mark.parametrize('use_orientation, why', [
    ('true', 'a path steers the tool point only; use_pose_orientation applies to target_pose'),
    ('false', 'use_pose_orientation is false'),
])
def test_a_path_says_its_orientations_are_not_used(ros, arm_args, capfd, use_orientation,
                                                   why):
    rig = Rig(ros, arm_args, sim_arm=False,
              extra=['-p', f'use_pose_orientation:={use_orientation}',
                     '-p', 'path_speed_m_s:=1.0'])
    waypoints = [(0.15, -0.02, 0.10), (0.15, 0.02, 0.10)]
    path: Path = _path(waypoints)
    for pose in path.poses:          # pointing down: not followed, and said so
        pose.pose.orientation.y = pose.pose.orientation.w = math.sqrt(0.5)
    rig.publish('target_path', Path, path)
    rig.ros.spin_until(lambda: rig.commands and np.linalg.norm(
        ARM.fk(list(rig.commands[-1].position))[-1] - waypoints[-1]) < 1e-3, timeout_s=20.0,
        what='the path to end at its last pose')
    lines = [line for line in _ik_log_lines(capfd) if 'following' in line]
    assert len(lines) == 1
    assert lines[0].endswith(f"its poses' orientations are not used ({why})")
    assert not [line for line in _ik_log_lines(capfd) if 'approach' in line]
