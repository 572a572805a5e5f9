"""The draggable 3D target, where interactive_markers is installed (a ROS 2 desktop).

Not on PyPI, so this is skipped in the wheels-only venv; there the node runs without it
(test_ik_node.py checks that path).
"""

from geometry_msgs.msg import PointStamped
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from visualization_msgs.msg import InteractiveMarkerFeedback, InteractiveMarkerUpdate

from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes.ik_node import FabrikIkNode
from test.nodes.conftest import ARM_CONFIG

pytest.importorskip('interactive_markers')
pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

ARM = load_arm(ARM_CONFIG)


def test_dragging_the_marker_moves_the_arm_and_topic_targets_move_the_marker(ros, arm_args):
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
