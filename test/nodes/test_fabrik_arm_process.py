"""fabrik_arm, the composed process as deployed, run for real: target in, pulses out, Ctrl-C.

The in-process tests build the nodes themselves; this one starts the installed console script
in a process of its own, with the arm file and a simulated board behind a symlink, so the
entry point, argument parsing, composition and the exit on SIGINT are what a user gets.
"""

import os
from pathlib import Path
import signal
import subprocess
import sys

from geometry_msgs.msg import PointStamped
import pytest
from sensor_msgs.msg import JointState

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.driver.board_layout import BoardLayout
from fabrik_ros.kinematics import load_arm
from fabrik_ros.servo_io import Protocol
from test.nodes.conftest import ARM_CONFIG

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]

ARM = load_arm(ARM_CONFIG)
LAYOUT = BoardLayout.of(ARM)
FABRIK_ARM = Path(sys.executable).with_name('fabrik_arm')
TARGET_M = (0.15, 0.05, 0.10)
WAIT_S = 30.0


def _start(board: SimBoard, namespace: str, log: Path) -> subprocess.Popen:
    assert FABRIK_ARM.exists(), f'{FABRIK_ARM}: console script missing (make setup installs it)'
    command = [str(FABRIK_ARM), '--ros-args', '--params-file', str(ARM_CONFIG),
               '-r', f'__ns:={namespace}', '-p', f'port:={board.path}',
               '-p', 'interactive_target:=false', '-p', 'home_move_time_s:=0.2',
               '-p', 'max_speed_rad_s:=[20.0, 20.0, 20.0, 20.0]']
    return subprocess.Popen(command, stdout=log.open('w'), stderr=subprocess.STDOUT,
                            env=dict(os.environ))


def _joint_pulses(board: SimBoard) -> list[int]:
    return list(board.targets()[:LAYOUT.channels])


def test_fabrik_arm_moves_the_board_to_a_published_target_and_exits_0_on_sigint(ros, tmp_path):
    log = tmp_path / 'fabrik_arm.log'
    with SimBoard(Protocol.NATIVE, link_path=str(tmp_path / 'ttyARM')) as board:
        process = _start(board, ros.namespace, log)
        try:
            probe = ros.probe()
            commands: list[JointState] = []
            probe.create_subscription(JointState, 'joint_commands', commands.append, 10)
            targets = probe.create_publisher(PointStamped, 'target_point', 10)
            ros.spin_until(lambda: targets.get_subscription_count() > 0, timeout_s=WAIT_S,
                           what=lambda: f'fabrik_arm to subscribe; its log: {log.read_text()}')
            home = LAYOUT.pulse_vector(ARM.servo_map.to_units(ARM.home))
            assert board.wait_until(lambda b: _joint_pulses(b) == home, timeout_s=WAIT_S), (
                f'the safe start never put the arm home: {board.targets()}')
            target = PointStamped()
            target.header.frame_id = ARM.base_frame
            target.point.x, target.point.y, target.point.z = TARGET_M
            targets.publish(target)
            ros.spin_until(lambda: bool(commands), timeout_s=WAIT_S,
                           what='fabrik_ik in fabrik_arm to publish the solved joint command')
            solved = LAYOUT.pulse_vector(ARM.servo_map.to_units(commands[-1].position))
            assert solved != home
            assert board.wait_until(lambda b: _joint_pulses(b) == solved, timeout_s=WAIT_S), (
                f'the board holds {board.targets()}, not the solved pulses {solved}')
        finally:
            process.send_signal(signal.SIGINT)
            try:
                returncode = process.wait(WAIT_S)
            except subprocess.TimeoutExpired:
                process.kill()      # a node left behind would retry its pty for ever
                process.wait()
                raise
    output = log.read_text()
    assert returncode == 0, output
    assert 'Traceback' not in output, output
    assert '[rcl]' not in output, output
