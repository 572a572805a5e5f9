"""The leader_arm executable: up on a simulated leader bus, publishing; SIGINT exits 0."""

import subprocess
import sys

import pytest
from sensor_msgs.msg import JointState

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.servo_io import Protocol
from test.nodes import test_signals
from test.nodes.conftest import REPO_ROOT
from test.nodes.test_signals import _assert_clean, _wait_for_nodes, BIN, START_S, STOPS

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]

group = test_signals.group       # the process-group fixture of the other scripts' tests
CONFIG = REPO_ROOT / 'config' / 'so101.yaml'
# The console script where it is installed, else the same entry point run by this Python.
_SCRIPT = BIN / 'leader_arm'
_COMMAND = ([str(_SCRIPT)] if _SCRIPT.is_file() else
            [sys.executable, '-c', 'import sys; sys.argv[0] = "leader_arm"; '
             'from fabrik_ros.nodes.leader_node import main; main()'])


@pytest.mark.parametrize('stop', STOPS, ids=str)
def test_leader_arm_says_torque_off_publishes_and_exits_0(ros, group, tmp_path, stop):
    with SimBoard(Protocol.FEETECH, channels=6, link_path=str(tmp_path / 'ttyLEADER')) as bus:
        process = group.start_command([*_COMMAND, '--ros-args', '--params-file', str(CONFIG),
                                       *ros.ros_args, '-p', f'port:={bus.path}'])
        _wait_for_nodes(ros, {'leader_arm'}, [process])
        commands = []
        ros.probe('commands').create_subscription(JointState, 'joint_commands',
                                                  commands.append, 10)
        ros.spin_until(lambda: len(commands) > 3, timeout_s=START_S, what='joint_commands')
        assert not any(bus.firmware.torques()), 'the leader is limp'
        group.signal(STOPS[stop])
        [(status, output)] = group.outputs()
        _assert_clean([(status, output)])
        assert output.count('torque stays off') == 1, output
        assert not any(bus.firmware.torques()), 'and stays limp'


def test_leader_arm_answers_help():
    result = subprocess.run([*_COMMAND, '--help'], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert 'a limp leader arm, moved by hand, drives the follower' in result.stdout


def test_a_bad_mapping_stops_the_process_with_one_line(ros):
    result = subprocess.run([*_COMMAND, '--ros-args', '--params-file', str(CONFIG),
                             *ros.ros_args, '-p', 'directions:=[1, 1, -2, 1, 1, 1]'],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert 'cannot start: directions[2] = -2 (follower elbow_flex): must be 1 or -1' in (
        result.stderr + result.stdout)
    assert 'Traceback' not in result.stderr
