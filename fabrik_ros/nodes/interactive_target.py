"""A draggable 3D target in RViz, served where the interactive_markers package is installed.

RViz's Publish Point tool cannot set a height and its 2D Goal Pose lies at z = 0; an
interactive marker with three move axes can go anywhere. ``interactive_markers`` is not on
PyPI, so the IK node asks :func:`serve_interactive_target` and runs without it when it is
missing.
"""

from collections.abc import Callable
import math
from typing import Optional

from geometry_msgs.msg import Point
from rclpy.node import Node
from visualization_msgs.msg import (
    InteractiveMarker,
    InteractiveMarkerControl,
    InteractiveMarkerFeedback,
    Marker,
)

MARKER_NAME = 'target'
# The server's topics are <node>/target/update, .../feedback and the get_interactive_markers
# service; config/rviz/fabrik.rviz shows the namespace /fabrik_ik/target.
TOPIC_NAMESPACE = '~/target'
_DIAMETER_M = 0.03

MoveCallback = Callable[[tuple[float, float, float]], None]


def serve_interactive_target(node: Node, *, frame_id: str, start_m: tuple[float, float, float],
                             on_move: MoveCallback) -> Optional[object]:
    """Serve a sphere with x/y/z move handles; call ``on_move`` with each dragged position [m].

    :return: the InteractiveMarkerServer, or None (logged once) without interactive_markers
    """
    try:
        from interactive_markers import InteractiveMarkerServer
    except ImportError:
        node.get_logger().info(
            'interactive_markers is not installed: no draggable 3D target in RViz; use '
            'target_point, target_pose or target_path (RViz Publish Point / 2D Goal Pose)')
        return None
    server = InteractiveMarkerServer(node, TOPIC_NAMESPACE)

    def feedback(message: InteractiveMarkerFeedback) -> None:
        if message.event_type == InteractiveMarkerFeedback.POSE_UPDATE:
            p = message.pose.position
            on_move((p.x, p.y, p.z))

    server.insert(_target_marker(frame_id, start_m), feedback_callback=feedback)
    server.applyChanges()
    return server


def _target_marker(frame_id: str, start_m: tuple[float, float, float]) -> InteractiveMarker:
    marker = InteractiveMarker()
    marker.header.frame_id = frame_id
    marker.name = MARKER_NAME
    marker.description = 'IK target (drag)'
    marker.scale = 0.08
    marker.pose.position = Point(x=start_m[0], y=start_m[1], z=start_m[2])
    marker.pose.orientation.w = 1.0
    marker.controls.append(_sphere_control())
    for name, axis in (('move_x', (1.0, 0.0, 0.0)), ('move_y', (0.0, 0.0, 1.0)),
                       ('move_z', (0.0, 1.0, 0.0))):
        marker.controls.append(_axis_control(name, axis))
    return marker


def _sphere_control() -> InteractiveMarkerControl:
    """Return the visible sphere, draggable in the camera plane."""
    sphere = Marker(type=Marker.SPHERE)
    sphere.scale.x = sphere.scale.y = sphere.scale.z = _DIAMETER_M
    sphere.color.r, sphere.color.g, sphere.color.b, sphere.color.a = 1.0, 0.6, 0.0, 0.9
    control = InteractiveMarkerControl()
    control.name = 'move_3d'
    control.interaction_mode = InteractiveMarkerControl.MOVE_3D
    control.always_visible = True
    control.orientation.w = 1.0
    control.markers.append(sphere)
    return control


def _axis_control(name: str, axis: tuple[float, float, float]) -> InteractiveMarkerControl:
    """Return an arrow pair moving along one axis.

    A control moves along the x axis of its orientation. A quarter turn about the axis
    (1, 0, 0), (0, 1, 0) or (0, 0, 1), written as w = x|y|z = sqrt(1/2), leaves that axis on
    x, turns it onto z, or turns it onto y.
    """
    half = math.sqrt(0.5)
    control = InteractiveMarkerControl()
    control.name = name
    control.interaction_mode = InteractiveMarkerControl.MOVE_AXIS
    control.orientation.w = half
    control.orientation.x, control.orientation.y, control.orientation.z = (
        half * c for c in axis)
    return control
