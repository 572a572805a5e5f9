"""The draggable 3D target: what a drag means, the node's wiring, and the real server.

interactive_markers is not on PyPI, so the wheels-only venvs (and CI) lack it. What a drag
means is tested without it, and fabrik_ik's wiring against a stand-in server with the
upstream API (ros-visualization/interactive_markers, humble..rolling:
``InteractiveMarkerServer(node, namespace)``, ``insert(marker, *, feedback_callback)``,
``setPose(name, pose) -> bool``, ``applyChanges()``, ``shutdown()``). The last test drives
the real server where the package is installed (a ROS 2 desktop, or its pure-Python source
on PYTHONPATH).
"""

import math
import sys
import types

from geometry_msgs.msg import PointStamped
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from visualization_msgs.msg import InteractiveMarkerFeedback, InteractiveMarkerUpdate

from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes.frames import BaseFrames
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.nodes.interactive_target import (
    FEEDBACK_TOPIC,
    is_drag,
    MARKER_NAME,
    target_from_feedback,
    TOPIC_NAMESPACE,
)
from fabrik_ros.nodes.targets import TargetCause, TargetMessageError
from test.nodes.conftest import ARM_CONFIG

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

ARM = load_arm(ARM_CONFIG)
BASE = BaseFrames('base_link')     # no tf: the base frame (or an empty frame_id) only
DRAGGED = (0.12, 0.05, 0.15)


def _feedback(xyz, *, frame_id='base_link',
              event=InteractiveMarkerFeedback.POSE_UPDATE) -> InteractiveMarkerFeedback:
    message = InteractiveMarkerFeedback(client_id='rviz', marker_name=MARKER_NAME,
                                        event_type=event)
    message.header.frame_id = frame_id
    message.pose.position.x, message.pose.position.y, message.pose.position.z = xyz
    message.pose.orientation.w = 1.0
    return message


def test_a_drag_is_the_marker_position_checked_as_a_target_point():
    assert target_from_feedback(_feedback(DRAGGED), BASE).position_m == DRAGGED
    assert target_from_feedback(_feedback(DRAGGED, frame_id=''), BASE).approach is None
    with pytest.raises(TargetMessageError) as wrong:
        target_from_feedback(_feedback(DRAGGED, frame_id='map'), BASE)
    with pytest.raises(TargetMessageError) as nan:
        target_from_feedback(_feedback((math.nan, 0.0, 0.1)), BASE)
    assert wrong.value.cause is TargetCause.WRONG_FRAME
    assert str(wrong.value).startswith(f"{FEEDBACK_TOPIC}: frame_id 'map' is not")
    assert nan.value.cause is TargetCause.NOT_FINITE


def test_only_a_pose_update_is_a_drag():
    others = [InteractiveMarkerFeedback.KEEP_ALIVE, InteractiveMarkerFeedback.MENU_SELECT,
              InteractiveMarkerFeedback.BUTTON_CLICK, InteractiveMarkerFeedback.MOUSE_DOWN,
              InteractiveMarkerFeedback.MOUSE_UP]
    assert is_drag(_feedback(DRAGGED))
    assert not any(is_drag(_feedback(DRAGGED, event=event)) for event in others)


class _StandInServer:
    """Records what fabrik_ik asks of an InteractiveMarkerServer (the upstream API)."""

    def __init__(self, node, namespace):
        self.node, self.namespace = node, namespace
        self.markers, self.callbacks, self.poses = {}, {}, []
        self.applied, self.shut_down = 0, False

    def insert(self, marker, *, feedback_callback=None, feedback_type=255):
        self.markers[marker.name] = marker
        self.callbacks[marker.name] = feedback_callback

    def setPose(self, name, pose, header=None):  # noqa: N802 (upstream's name)
        if name not in self.markers:
            return False
        self.poses.append(pose)
        return True

    def applyChanges(self):  # noqa: N802 (upstream's name)
        self.applied += 1

    def shutdown(self):
        self.shut_down = True


@pytest.fixture
def stand_in_servers(monkeypatch) -> list[_StandInServer]:
    """Install a stand-in interactive_markers module; return the servers made from it."""
    servers = []

    def make_server(node, namespace):
        servers.append(_StandInServer(node, namespace))
        return servers[-1]

    module = types.ModuleType('interactive_markers')
    module.InteractiveMarkerServer = make_server
    monkeypatch.setitem(sys.modules, 'interactive_markers', module)
    return servers


def test_fabrik_ik_serves_the_marker_solves_drags_and_moves_it_to_topic_targets(
        ros, arm_args, stand_in_servers, capfd):
    handed = []
    ik = ros.add(FabrikIkNode(context=ros.context, cli_args=arm_args,
                              command_sink=handed.append))
    assert ik.serves_interactive_target
    [server] = stand_in_servers
    assert server.node is ik and server.namespace == TOPIC_NAMESPACE
    marker = server.markers[MARKER_NAME]
    home_tip = ARM.fk(list(ARM.home))[-1]
    assert marker.header.frame_id == 'base_link' and server.applied == 1
    assert [marker.pose.position.x, marker.pose.position.y, marker.pose.position.z] == \
        pytest.approx(list(home_tip))

    drag = server.callbacks[MARKER_NAME]
    drag(_feedback(DRAGGED, event=InteractiveMarkerFeedback.MOUSE_UP))
    drag(_feedback((math.nan, 0.0, 0.1)))
    drag(_feedback(DRAGGED, frame_id='map'))
    assert handed == [], 'clicks and unusable drags move nothing'
    drag(_feedback(DRAGGED))
    assert len(handed) == 1 and np.linalg.norm(ARM.fk(list(handed[0]))[-1] - DRAGGED) < 1e-3
    assert server.poses == [], 'a drag is not echoed back to the marker'

    probe = ros.probe()
    points = probe.create_publisher(PointStamped, 'target_point', 10)
    ros.spin_until(lambda: points.get_subscription_count() > 0, timeout_s=10.0,
                   what='fabrik_ik to subscribe target_point')
    point = PointStamped()
    point.header.frame_id = 'base_link'
    point.point.x, point.point.y, point.point.z = 0.15, -0.05, 0.10
    points.publish(point)
    ros.spin_until(lambda: server.poses, timeout_s=10.0, what='the marker to follow the topic')
    moved = server.poses[0].position
    assert (moved.x, moved.y, moved.z) == (0.15, -0.05, 0.10) and server.applied == 2
    ros.destroy(ik)
    assert server.shut_down
    err = capfd.readouterr().err
    assert f'{FEEDBACK_TOPIC}: position (nan, 0.0, 0.1) is not finite' in err
    assert f"{FEEDBACK_TOPIC}: frame_id 'map' is not the arm's base frame" in err


def test_dragging_the_marker_moves_the_arm_and_topic_targets_move_the_marker(ros, arm_args):
    """The real server, where interactive_markers is installed."""
    pytest.importorskip('interactive_markers')
    ik = ros.add(FabrikIkNode(context=ros.context, cli_args=arm_args))
    assert ik.serves_interactive_target
    probe = ros.probe()
    commands, updates = [], []
    probe.create_subscription(JointState, 'joint_commands', commands.append, 10)
    server = f'{ros.namespace}/fabrik_ik/target'
    probe.create_subscription(InteractiveMarkerUpdate, f'{server}/update', updates.append, 10)
    feedback = probe.create_publisher(InteractiveMarkerFeedback, f'{server}/feedback', 10)
    points = probe.create_publisher(PointStamped, 'target_point', 10)
    drag = InteractiveMarkerFeedback(client_id='rviz', marker_name='target',
                                     event_type=InteractiveMarkerFeedback.POSE_UPDATE)
    drag.header.frame_id = 'base_link'
    drag.pose.position.x, drag.pose.position.y, drag.pose.position.z = 0.12, 0.05, 0.15
    drag.pose.orientation.w = 1.0
    # The server ignores feedback for a second after creating the marker (two-client rule),
    # so the drag is repeated until it is taken.
    ros.spin_until(lambda: commands, timeout_s=10.0, what='a command from the drag',
                   during=lambda: feedback.publish(drag))
    assert np.linalg.norm(ARM.fk(list(commands[-1].position))[-1] - (0.12, 0.05, 0.15)) < 1e-3

    point = PointStamped()
    point.header.frame_id = 'base_link'
    point.point.x, point.point.y, point.point.z = 0.15, -0.05, 0.10
    ros.spin_until(lambda: points.get_subscription_count() > 0, timeout_s=10.0,
                   what='fabrik_ik to subscribe target_point')
    points.publish(point)

    def marker_followed():
        return any(p.pose.position.y == pytest.approx(-0.05) for u in updates for p in u.poses)

    ros.spin_until(marker_followed, timeout_s=10.0, what='the marker to move to the target')
