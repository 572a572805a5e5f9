"""The executables' main(): a clear one-line refusal of bad config, a clean external stop."""

import gc
import threading

import pytest
import rclpy

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.nodes import driver_node, ik_node
from fabrik_ros.nodes.spin import run_nodes
from fabrik_ros.servo_io import Protocol
from test.nodes.conftest import ARM_CONFIG

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]


def test_a_bad_config_stops_the_node_with_one_line_and_status_1(capfd):
    with pytest.raises(SystemExit) as exited:
        ik_node.main(['fabrik_ik', '--ros-args', '--params-file', str(ARM_CONFIG),
                      '-p', 'joints.elbow.max_deg:=400.0'])
    assert exited.value.code == 1
    assert 'cannot start: joints.elbow.max_deg = 400.0, must be within' in capfd.readouterr().err


def test_an_external_shutdown_leaves_the_servos_in_the_configured_final_state(tmp_path):
    with SimBoard(Protocol.NATIVE, link_path=str(tmp_path / 'ttyBOARD')) as board:
        args = ['servo_driver', '--ros-args', '--params-file', str(ARM_CONFIG),
                '-p', f'port:={board.path}', '-p', 'home_move_time_s:=0.1',
                '-p', 'on_shutdown:=detach']
        runner = threading.Thread(target=driver_node.main, args=(args,))
        runner.start()
        try:
            assert board.wait_until(lambda b: all(b.enabled[:4]), timeout_s=10.0)
        finally:
            rclpy.shutdown()
            runner.join(10.0)
        assert not runner.is_alive()
        assert not any(board.enabled)


def test_the_objects_built_before_spinning_are_frozen_out_of_garbage_collection():
    """A full collection walking them paused the executor for ms under a target stream."""
    seen: list[int] = []

    def make_nodes(nodes):
        node = rclpy.create_node('freeze_probe')
        node.create_timer(0.01, lambda: (seen.append(gc.get_freeze_count()), rclpy.shutdown()))
        nodes.append(node)

    run_nodes(make_nodes, ['freeze_probe'], prog='freeze_probe', description='probe')
    assert seen and seen[0] > 1000
    assert gc.get_freeze_count() == 0, 'thawed again once the nodes are gone'
