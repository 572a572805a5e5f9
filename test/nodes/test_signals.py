"""Every console script stops cleanly on Ctrl-C as a terminal and `ros2 launch` deliver it.

Each script runs as launch runs it: a subprocess with its output captured, in a process group
of its own (the test's stand-in for the terminal's foreground group). Once it is up (its nodes
are in the ROS graph, the board pulses), the test sends SIGINT to the group twice, 50 ms apart
(the terminal's and the one launch forwards), or SIGTERM once. Expected: exit status 0, no
traceback, and the servo board left in the driver's configured final state.
"""

from collections.abc import Sequence
import functools
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import time

import pytest
from sensor_msgs.msg import JointState

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.driver.board_layout import BoardLayout
from fabrik_ros.kinematics import load_arm
from fabrik_ros.servo_io import Protocol
from test.nodes.conftest import ARM_CONFIG

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]

BIN = Path(sys.executable).parent
# Deadlines for conditions, never for how fast something is.
START_S = 30.0
EXIT_S = 30.0
ARM_CHANNELS = 4
SIGINT_TWICE = (signal.SIGINT, signal.SIGINT)
STOPS = {'sigint_twice': SIGINT_TWICE, 'sigterm': (signal.SIGTERM,)}
_FINAL_STATE = re.compile(r'sim_device: final state: enabled \[(?P<enabled>[^\]]*)\] '
                          r'pulses \[(?P<pulses>[^\]]*)\] us')


class Group:
    """Console scripts started in one new process group, as launch's children are."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen] = []
        self.pgid = 0

    def start(self, script: str, *args: str) -> subprocess.Popen:
        """Start console script ``script`` in the group, stdout and stderr captured together."""
        return self.start_command([str(BIN / script), *args])

    def start_command(self, command: list[str]) -> subprocess.Popen:
        """Start ``command`` in the group, stdout and stderr captured together."""
        # setpgid in the child (Popen's process_group needs Python 3.11).
        process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True,
                                   preexec_fn=functools.partial(os.setpgid, 0, self.pgid))
        self.pgid = self.pgid or process.pid
        self.processes.append(process)
        return process

    def signal(self, numbers: Sequence[signal.Signals]) -> None:
        """Send each signal to the whole group, 50 ms apart."""
        for index, number in enumerate(numbers):
            if index:
                time.sleep(0.05)      # the gap between the terminal's and launch's SIGINT
            os.killpg(self.pgid, number)

    def outputs(self) -> list[tuple[int, str]]:
        """Wait for every process; return (exit status, output) of each."""
        return [(p.wait(EXIT_S), p.stdout.read()) for p in self.processes]

    def kill(self) -> None:
        """End whatever is left (after a failed test)."""
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()


@pytest.fixture
def group():
    started = Group()
    try:
        yield started
    finally:
        started.kill()


def _assert_clean(results: list[tuple[int, str]]) -> None:
    for status, output in results:
        assert status == 0, output
        assert 'Traceback' not in output, output


def _wait_for_nodes(ros, names: set[str], processes: list[subprocess.Popen]) -> None:
    probe = ros.probe()

    def up() -> bool:
        assert all(p.poll() is None for p in processes), 'a script exited early'
        return names <= {name for name, namespace in probe.get_node_names_and_namespaces()
                         if namespace == ros.namespace}
    ros.spin_until(up, timeout_s=START_S, what=f'nodes {sorted(names)} in the graph')


def _driver_args(port: str, on_shutdown: str, ros) -> list[str]:
    return ['--ros-args', '--params-file', str(ARM_CONFIG), *ros.ros_args,
            '-p', f'port:={port}', '-p', f'on_shutdown:={on_shutdown}',
            '-p', 'home_move_time_s:=0.2']


def _holding(board) -> bool:
    return all(board.enabled[:ARM_CHANNELS]) and all(board.pulses()[:ARM_CHANNELS])


@pytest.mark.parametrize('stop', STOPS, ids=str)
@pytest.mark.parametrize('script,names', [('fabrik_ik', {'fabrik_ik'}),
                                          ('sim_arm', {'sim_arm'})])
def test_a_node_exits_0_without_a_traceback(ros, group, script, names, stop):
    process = group.start(script, '--ros-args', '--params-file', str(ARM_CONFIG),
                          *ros.ros_args)
    _wait_for_nodes(ros, names, [process])
    group.signal(STOPS[stop])
    _assert_clean(group.outputs())


@pytest.mark.parametrize('stop', STOPS, ids=str)
@pytest.mark.parametrize('script', ['servo_driver', 'fabrik_arm'])
@pytest.mark.parametrize('on_shutdown', ['hold', 'detach'])
def test_the_driver_leaves_the_board_in_its_final_state(ros, group, tmp_path, script, stop,
                                                        on_shutdown):
    with SimBoard(Protocol.NATIVE, link_path=str(tmp_path / 'ttyBOARD')) as board:
        process = group.start(script, *_driver_args(board.path, on_shutdown, ros))
        assert board.wait_until(_holding, START_S), 'the driver never attached the servos'
        pose = board.pulses()[:ARM_CHANNELS]
        group.signal(STOPS[stop])
        _assert_clean(group.outputs())
        assert process.returncode == 0
        if on_shutdown == 'detach':
            assert not any(board.enabled)
        else:
            assert _holding(board) and board.pulses()[:ARM_CHANNELS] == pose


@pytest.mark.parametrize('stop', STOPS, ids=str)
def test_on_shutdown_home_moves_the_arm_home_before_the_driver_exits(ros, group, tmp_path,
                                                                     stop):
    arm = load_arm(ARM_CONFIG)
    layout = BoardLayout.of(arm)
    home_us = layout.pulse_vector(arm.servo_map.to_units(arm.home))[:ARM_CHANNELS]
    away = tuple(h + 0.3 for h in arm.home)
    with SimBoard(Protocol.NATIVE, link_path=str(tmp_path / 'ttyBOARD')) as board:
        process = group.start('servo_driver', *_driver_args(board.path, 'home', ros))
        assert board.wait_until(_holding, START_S), 'the driver never attached the servos'
        commands = ros.probe().create_publisher(JointState, 'joint_commands', 10)
        command = JointState(name=list(arm.joint_names), position=list(away))
        ros.spin_until(lambda: board.targets()[:ARM_CHANNELS] != tuple(home_us),
                       timeout_s=START_S, what='the arm to leave home',
                       during=lambda: commands.publish(command))
        group.signal(STOPS[stop])
        results = group.outputs()
        _assert_clean(results)
        assert process.returncode == 0
        assert 'on_shutdown home: moving home' in results[0][1]
        assert _holding(board) and list(board.pulses()[:ARM_CHANNELS]) == list(home_us)


@pytest.mark.parametrize('stop', STOPS, ids=str)
def test_the_driver_without_a_board_says_so_and_exits_0(ros, group, tmp_path, stop):
    process = group.start('servo_driver', *_driver_args(str(tmp_path / 'absent'), 'detach', ros))
    _wait_for_nodes(ros, {'servo_driver'}, [process])
    group.signal(STOPS[stop])
    [(status, output)] = group.outputs()
    _assert_clean([(status, output)])
    assert len(re.findall(r'on_shutdown detach: no board connected', output)) == 1, output


@pytest.mark.parametrize('stop', STOPS, ids=str)
@pytest.mark.parametrize('on_shutdown', ['hold', 'detach'])
def test_sim_device_outlives_its_host_and_reports_the_final_state(ros, group, tmp_path, stop,
                                                                  on_shutdown):
    link = str(tmp_path / 'ttySIM')
    device = group.start('sim_device', '--link', link)
    assert device.stdout.readline().startswith('sim_device: python native board')
    driver = group.start('servo_driver', *_driver_args(link, on_shutdown, ros))
    _wait_for_nodes(ros, {'servo_driver'}, [device, driver])
    probe = ros.probe('states')
    states = []
    probe.create_subscription(_joint_state_type(), 'joint_states', states.append, 10)
    ros.spin_until(lambda: len(states) > 5, timeout_s=START_S, what='joint_states')
    group.signal(STOPS[stop])
    results = group.outputs()
    _assert_clean(results)
    final = _FINAL_STATE.search(results[0][1])
    assert final is not None, results[0][1]
    enabled = final['enabled'].split(', ')[:ARM_CHANNELS]
    pulses = [int(p) for p in final['pulses'].split(', ')[:ARM_CHANNELS]]
    if on_shutdown == 'detach':
        assert enabled == ['False'] * ARM_CHANNELS and pulses == [0] * ARM_CHANNELS
    else:
        assert enabled == ['True'] * ARM_CHANNELS and all(pulses)
    assert not os.path.lexists(link)


def _joint_state_type():
    from sensor_msgs.msg import JointState
    return JointState


@pytest.mark.parametrize('stop', STOPS, ids=str)
def test_the_demo_stops_cleanly_mid_sequence(group, stop):
    demo = group.start_command([sys.executable, '-m', 'fabrik_ros.demo'])
    started = [demo.stdout.readline() for _ in range(3)]     # the nodes' start lines
    assert any(' board on ' in line for line in started), ''.join(started) + demo.stdout.read()
    group.signal(STOPS[stop])
    [(status, output)] = group.outputs()
    _assert_clean([(status, output)])
    assert f'demo: stopped by {STOPS[stop][0].name} ' in output, output
