"""web_view with bus servos: the driver's counts reach the calibration, its protocol too."""

import pytest
from rcl_interfaces.msg import ParameterDescriptor
from sensor_msgs.msg import JointState

from fabrik_ros.nodes.web_view_node import WebViewNode
from fabrik_ros.webview.calibration_by_hand import HandCalibrationSession
from test.nodes.conftest import REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

SO101 = REPO_ROOT / 'config' / 'so101.yaml'


def test_the_drivers_counts_and_protocol_reach_the_calibration_by_hand(ros):
    node = ros.add(WebViewNode(context=ros.context, cli_args=[
        '--ros-args', '--params-file', str(SO101), *ros.ros_args, '-p', 'port:=0']))
    session = node.page._session
    assert isinstance(session, HandCalibrationSession)
    # A stand-in for servo_driver: its protocol parameter and its ~/servo_positions.
    driver = ros.probe('servo_driver')
    driver.declare_parameter('protocol', 'feetech', ParameterDescriptor(read_only=True))
    positions = driver.create_publisher(JointState, '~/servo_positions', 10)
    report = JointState(name=['elbow_flex', 'gripper', 'wrist_roll'],
                        position=[1234.0, 3000.0, float('nan')])
    ros.spin_until(lambda: session.raw('elbow_flex') == 1234.0 and session.protocol,
                   timeout_s=20.0, during=lambda: positions.publish(report),
                   what=lambda: f'the counts and the protocol; elbow_flex at '
                                f'{session.raw("elbow_flex")}, protocol {session.protocol}')
    assert session.protocol == 'feetech'
    assert (session.raw('gripper'), session.raw('wrist_roll')) == (3000.0, None)
    # A message whose names and positions disagree is not the driver's: nothing changes
    # (the report after it, from the same publisher, arrives after it).
    positions.publish(JointState(name=['elbow_flex'], position=[1.0, 2.0]))
    positions.publish(JointState(name=['gripper'], position=[3100.0]))
    ros.spin_until(lambda: session.raw('gripper') == 3100.0, timeout_s=10.0,
                   what='the report after the malformed one')
    assert session.raw('elbow_flex') == 1234.0
