"""Ctrl-C during a FollowJointTrajectory goal: the goal ends with a result, the driver exits 0."""

import signal

import pytest

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.kinematics import load_arm
from fabrik_ros.servo_io import Protocol
from test.nodes.conftest import ARM_CONFIG
from test.nodes.test_signals import Group
from test.nodes.trajectory_client import goal, point, TrajectoryClient, WAIT_S

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]

ARM = load_arm(ARM_CONFIG)


@pytest.fixture
def group():
    started = Group()
    try:
        yield started
    finally:
        started.kill()


@pytest.mark.parametrize('script', ['servo_driver', 'fabrik_arm'])
def test_sigint_during_a_goal_ends_it_and_the_driver_exits_0(ros, group, tmp_path, script):
    with SimBoard(Protocol.NATIVE, link_path=str(tmp_path / 'ttyBOARD')) as board:
        process = group.start(script, '--ros-args', '--params-file', str(ARM_CONFIG),
                              *ros.ros_args, '-p', f'port:={board.path}',
                              '-p', 'home_move_time_s:=0.2')
        client = TrajectoryClient(ros)
        try:
            home = list(ARM.home)
            client.wait_at(ARM.joint_names, home, 1e-3, 'the arm home')
            target = [home[0] + 1.2, *home[1:]]
            handle = client.send_once_ready(goal(ARM.joint_names, [point(6.0, target)]))
            result = handle.get_result_async()      # as a client does: asked for at once
            ros.spin_until(lambda: client.positions(ARM.joint_names)[0] > home[0] + 0.1,
                           timeout_s=WAIT_S, what='the goal to move the arm')
            group.signal((signal.SIGINT,))
            [(status, output)] = group.outputs()
            ros.spin_until(result.done, timeout_s=WAIT_S,
                           what=lambda: f'the result of the goal; the output: {output}')
            assert status == 0 and 'Traceback' not in output, output
            assert process.returncode == 0
            response = result.result()
            assert response.result.error_string, 'the result says why the goal ended'
            assert 'shut down' in response.result.error_string
        finally:
            client.close()
