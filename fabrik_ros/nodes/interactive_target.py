"""A draggable 3D target in RViz, served where the interactive_markers package is installed.

RViz's Publish Point tool cannot set a height and its 2D Goal Pose lies at z = 0; an
interactive marker with three move axes can go anywhere. ``interactive_markers`` is not on
PyPI, so the IK node asks :meth:`InteractiveTarget.serve` and runs without it when it is
missing. What a drag means (:func:`target_from_feedback`) needs no server, so it is checked
like any other target message, and tested without the package.
"""

from collections.abc import Callable
import math
from typing import Optional

from geometry_msgs.msg import Point, PointStamped, Pose
from rclpy.node import Node
from visualization_msgs.msg import (
    InteractiveMarker,
    InteractiveMarkerControl,
    InteractiveMarkerFeedback,
    Marker,
)

from fabrik_ros.nodes.frames import BaseFrames
from fabrik_ros.nodes.targets import Target, target_from_point

MARKER_NAME = 'target'
# The server's topics are <node>/target/update, .../feedback and the get_interactive_markers
# service; config/rviz/fabrik.rviz shows the namespace /fabrik_ik/target.
TOPIC_NAMESPACE = '~/target'
FEEDBACK_TOPIC = f'{TOPIC_NAMESPACE}/feedback'
_DIAMETER_M = 0.03

Vector = tuple[float, float, float]


def is_drag(message: InteractiveMarkerFeedback) -> bool:
    """Return True for feedback that moved the marker (not a click, a menu or a mouse event)."""
    return message.event_type == InteractiveMarkerFeedback.POSE_UPDATE


def target_from_feedback(message: InteractiveMarkerFeedback, frames: BaseFrames) -> Target:
    """Return the target a drag sets: the marker's position, checked as a target_point is.

    RViz reports the pose in the marker's frame, the base frame; feedback in another frame
    is transformed as a target_point is.

    :raises TargetMessageError: for a frame ``frames`` cannot transform into the base frame
        (empty means the base frame) or a non-finite position, naming the feedback topic
    """
    point = PointStamped(header=message.header)
    position = message.pose.position
    point.point.x, point.point.y, point.point.z = position.x, position.y, position.z
    return target_from_point(point, frames, topic=FEEDBACK_TOPIC)


class InteractiveTarget:
    """An orange sphere with x/y/z handles; each drag calls ``on_drag`` with the feedback."""

    def __init__(self, server, frame_id: str, start_m: Vector,
                 on_drag: Callable[[InteractiveMarkerFeedback], None]) -> None:
        """Insert the marker into ``server`` (an InteractiveMarkerServer) and publish it."""
        self._server = server

        def feedback(message: InteractiveMarkerFeedback) -> None:
            if is_drag(message):
                on_drag(message)

        server.insert(_target_marker(frame_id, start_m), feedback_callback=feedback)
        server.applyChanges()

    @classmethod
    def serve(cls, node: Node, *, frame_id: str, start_m: Vector,
              on_drag: Callable[[InteractiveMarkerFeedback], None]
              ) -> Optional['InteractiveTarget']:
        """Serve the target on ``node``, or log once and return None without the package."""
        try:
            from interactive_markers import InteractiveMarkerServer
        except ImportError:
            node.get_logger().info(
                'interactive_markers is not installed: no draggable 3D target in RViz; use '
                'target_point, target_pose or target_path (RViz Publish Point / 2D Goal Pose)')
            return None
        return cls(InteractiveMarkerServer(node, TOPIC_NAMESPACE), frame_id, start_m, on_drag)

    def move_to(self, position_m: Vector) -> None:
        """Show the marker at a target that came from elsewhere (a topic), without feedback."""
        pose = Pose()
        pose.position = Point(x=position_m[0], y=position_m[1], z=position_m[2])
        pose.orientation.w = 1.0
        if self._server.setPose(MARKER_NAME, pose):
            self._server.applyChanges()

    def shutdown(self) -> None:
        """Remove the marker and release the server's publishers and services."""
        self._server.shutdown()


def _target_marker(frame_id: str, start_m: Vector) -> InteractiveMarker:
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


def _axis_control(name: str, axis: Vector) -> InteractiveMarkerControl:
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
