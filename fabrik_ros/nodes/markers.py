"""RViz markers for an IK solution: the chain, its joints, the target, the tool's approach."""

from collections.abc import Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
import numpy as np
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from fabrik_ros.kinematics.aliases import FloatVector

NAMESPACE = 'fabrik'
CHAIN_ID, JOINTS_ID, TARGET_ID, WORKSPACE_ID = 0, 1, 2, 3
ASKED_APPROACH_ID, REACHED_APPROACH_ID = 4, 5

_CHAIN_COLOUR = ColorRGBA(r=0.9, g=0.9, b=0.9, a=1.0)
_JOINT_COLOUR = ColorRGBA(r=0.2, g=0.5, b=1.0, a=1.0)
_REACHED_COLOUR = ColorRGBA(r=0.1, g=0.9, b=0.1, a=0.9)
_UNREACHED_COLOUR = ColorRGBA(r=1.0, g=0.15, b=0.1, a=0.9)
_WORKSPACE_COLOUR = ColorRGBA(r=0.4, g=0.4, b=0.5, a=0.25)
# The asked approach amber, the tool's reached axis magenta: neither the green / red of the
# target nor the blue and white of the chain.
ASKED_APPROACH_COLOUR = ColorRGBA(r=1.0, g=0.7, b=0.0, a=1.0)
REACHED_APPROACH_COLOUR = ColorRGBA(r=0.9, g=0.1, b=0.9, a=1.0)
# Arrows a little longer than a hobby arm's gripper, so the angle between them shows.
_APPROACH_LENGTH_M = 0.06
_ARROW_SHAFT_M = 0.004
_ARROW_HEAD_M = 0.01
_WORKSPACE_THICKNESS_M = 0.002
_LINE_WIDTH_M = 0.008
_JOINT_DIAMETER_M = 0.02
_TARGET_DIAMETER_M = 0.03


def solution_markers(points_m: Sequence[FloatVector] | np.ndarray, target_m: FloatVector, *,
                     reached: bool, frame_id: str, stamp: Time,
                     approach: tuple[FloatVector, FloatVector] | None = None) -> MarkerArray:
    """Return the chain (LINE_STRIP), its joints (SPHERE_LIST), the target (SPHERE), approaches.

    The target is green when the solution reached it and red when it did not. For a pose
    target two ARROWs show the asked approach (amber, from the target) and the axis the tool
    reached (magenta, from the tool point); without one, both arrows are deleted, so a pose
    target's arrows do not stay behind a point target's solution.

    :param points_m: joint positions from the base to the tool point [m], one a row (as
        :meth:`~fabrik_ros.kinematics.Arm.fk` returns them)
    :param target_m: the requested point [m]
    :param approach: the asked approach and the tool's reached axis (unit directions, as
        :meth:`~fabrik_ros.kinematics.Arm.tool_axis` returns it), or None for a point target
    """
    chain = _marker(CHAIN_ID, Marker.LINE_STRIP, frame_id, stamp, _CHAIN_COLOUR)
    chain.scale.x = _LINE_WIDTH_M
    chain.points = [_point(p) for p in points_m]
    joints = _marker(JOINTS_ID, Marker.SPHERE_LIST, frame_id, stamp, _JOINT_COLOUR)
    joints.scale.x = joints.scale.y = joints.scale.z = _JOINT_DIAMETER_M
    joints.points = [_point(p) for p in points_m]
    colour = _REACHED_COLOUR if reached else _UNREACHED_COLOUR
    target = _marker(TARGET_ID, Marker.SPHERE, frame_id, stamp, colour)
    target.scale.x = target.scale.y = target.scale.z = _TARGET_DIAMETER_M
    target.pose.position = _point(target_m)
    asked = _marker(ASKED_APPROACH_ID, Marker.ARROW, frame_id, stamp, ASKED_APPROACH_COLOUR)
    tool = _marker(REACHED_APPROACH_ID, Marker.ARROW, frame_id, stamp, REACHED_APPROACH_COLOUR)
    if approach is None:
        asked.action = tool.action = Marker.DELETE
    else:
        _arrow(asked, target_m, approach[0])
        _arrow(tool, points_m[-1], approach[1])
    return MarkerArray(markers=[chain, joints, target, asked, tool])


def workspace_marker(radius_m: float, *, frame_id: str, stamp: Time) -> Marker:
    """Return a thin translucent disc on the base plane (z = 0) of the arm's reach.

    It gives RViz's Publish Point tool a surface to click on: points picked on its top face
    lie at z = 0 in the base frame.
    """
    disc = _marker(WORKSPACE_ID, Marker.CYLINDER, frame_id, stamp, _WORKSPACE_COLOUR)
    disc.scale.x = disc.scale.y = 2.0 * radius_m
    disc.scale.z = _WORKSPACE_THICKNESS_M
    disc.pose.position.z = -0.5 * _WORKSPACE_THICKNESS_M
    return disc


def _marker(marker_id: int, kind: int, frame_id: str, stamp: Time,
            colour: ColorRGBA) -> Marker:
    marker = Marker()
    marker.header.frame_id = frame_id
    marker.header.stamp = stamp
    marker.ns = NAMESPACE
    marker.id = marker_id
    marker.type = kind
    marker.action = Marker.ADD
    marker.pose.orientation.w = 1.0
    marker.color = colour
    return marker


def _arrow(marker: Marker, start_m: FloatVector, direction: FloatVector) -> None:
    """Make ``marker`` an arrow from ``start_m`` along the unit ``direction``."""
    marker.scale.x, marker.scale.y, marker.scale.z = _ARROW_SHAFT_M, _ARROW_HEAD_M, _ARROW_HEAD_M
    end = np.asarray(start_m, dtype=float) + _APPROACH_LENGTH_M * np.asarray(direction, float)
    marker.points = [_point(start_m), _point(end)]


def _point(p: FloatVector) -> Point:
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
