"""PathIntake: target_path sizes read from the header, reach checked in one batch, a worker."""

import math
from pathlib import Path as FilePath
import threading
import time

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Path
import numpy as np
import pytest
from rclpy.serialization import serialize_message

from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes import path_intake
from fabrik_ros.nodes.frames import BaseFrames
from fabrik_ros.nodes.path_intake import (
    check_reach,
    MAX_PATH_POSES,
    NAMED_POSES,
    PathIntake,
    PathRequest,
    pose_count,
)
from fabrik_ros.nodes.targets import TargetCause, TargetMessageError

START = (0.1, 0.0, 0.1)
CONFIG = FilePath(__file__).resolve().parents[2] / 'config'
ARM = load_arm(CONFIG / 'arm_4dof.yaml')
BASE = BaseFrames('base_link')     # no tf: the base frame (or an empty frame_id) only


def _path(poses: int, frame_id: str = 'base_link', pose_frame: str = '') -> Path:
    path = Path()
    path.header.frame_id = frame_id
    for i in range(poses):
        pose = PoseStamped()
        pose.header.frame_id = pose_frame
        pose.pose.position.x, pose.pose.position.z = 0.12, 0.05 + 0.001 * i
        path.poses.append(pose)
    return path


def _request(path: Path) -> PathRequest:
    return PathRequest(serialize_message(path), 'target_path', BASE, START, 0.05, ARM)


def _wait_until(condition) -> None:
    deadline = time.monotonic() + 10.0
    while not condition():
        assert time.monotonic() < deadline, 'timed out waiting for the worker'
        time.sleep(0.001)


@pytest.fixture
def intake():
    made = PathIntake()
    yield made
    made.shutdown()


@pytest.mark.parametrize('frame_id', ['', 'a', 'ab', 'abc', 'abcd', 'base_link', 'world_frame'])
@pytest.mark.parametrize('poses', [0, 1, 7])
def test_the_pose_count_is_read_from_the_header_whatever_the_frame_id_length(frame_id, poses):
    path = _path(poses, frame_id, pose_frame='tool')
    assert pose_count(serialize_message(path)) == poses


def test_an_unknown_encoding_or_a_header_cut_short_gives_no_count():
    serialized = serialize_message(_path(3))
    assert pose_count(bytes([0, 0x0b]) + serialized[2:]) is None
    assert pose_count(serialized[:20]) is None
    assert pose_count(b'') is None


def test_a_path_is_prepared_on_the_worker_and_taken_once(intake, monkeypatch):
    threads = []
    real = path_intake.prepare_path

    def recording(request):
        threads.append(threading.get_ident())
        return real(request)

    monkeypatch.setattr(path_intake, 'prepare_path', recording)
    intake.submit(_request(_path(3)))
    _wait_until(lambda: not intake.pending)
    prepared = intake.take()
    assert threads and threads[0] != threading.get_ident()
    assert prepared.poses == 3 and prepared.start_m == START
    assert math.dist(prepared.follower.position_at(0.0), START) < 1e-12
    assert intake.take() is None


def test_too_many_poses_are_refused_at_once_without_preparing(intake, monkeypatch):
    prepared = []
    monkeypatch.setattr(path_intake, 'prepare_path', prepared.append)
    with pytest.raises(TargetMessageError) as raised:
        intake.submit(_request(_path(MAX_PATH_POSES + 1)))
    assert raised.value.cause is TargetCause.TOO_MANY_POSES
    assert str(raised.value) == (f'target_path has {MAX_PATH_POSES + 1} poses, more than the '
                                 f'{MAX_PATH_POSES} a path may have: the arm keeps its current '
                                 'target')
    assert prepared == [] and not intake.pending


def test_a_path_the_worker_refuses_is_raised_when_taken(intake):
    intake.submit(_request(_path(2, frame_id='map')))
    _wait_until(lambda: not intake.pending)
    with pytest.raises(TargetMessageError) as raised:
        intake.take()
    assert raised.value.cause is TargetCause.WRONG_FRAME


def test_bytes_that_are_no_path_are_refused_as_malformed_when_taken(intake):
    """A count of one pose, then three bytes of it: the node must not die on what it takes."""
    header = bytes([0, 1, 0, 0]) + bytes(8) + (5).to_bytes(4, 'little') + b'base\x00' + bytes(3)
    garbage = header + (1).to_bytes(4, 'little') + b'\xff' * 3
    assert pose_count(garbage) == 1
    intake.submit(PathRequest(garbage, 'target_path', BASE, START, 0.05, ARM))
    _wait_until(lambda: not intake.pending)
    with pytest.raises(TargetMessageError) as raised:
        intake.take()
    assert raised.value.cause is TargetCause.MALFORMED
    assert str(raised.value).startswith('target_path: 31 bytes that are no nav_msgs/Path')


def test_a_newer_path_or_a_cancel_supersedes_the_one_being_prepared(intake, monkeypatch):
    opened, started = threading.Event(), threading.Event()
    real = path_intake.prepare_path

    def gated(request):
        started.set()
        opened.wait(timeout=10.0)
        return real(request)

    monkeypatch.setattr(path_intake, 'prepare_path', gated)
    intake.submit(_request(_path(2)))
    started.wait(timeout=10.0)
    intake.submit(_request(_path(5)))      # while the first is being prepared
    opened.set()
    _wait_until(lambda: not intake.pending)
    assert intake.take().poses == 5

    opened.clear()
    started.clear()
    intake.submit(_request(_path(4)))
    started.wait(timeout=10.0)
    intake.cancel()
    assert not intake.pending
    opened.set()
    intake.shutdown()                      # waits for the worker to finish
    assert intake.take() is None


def test_a_path_too_far_out_for_a_curve_is_refused_as_not_finite(intake):
    path = _path(2)
    path.poses[1].pose.position.x = -1.7976931348623157e308
    intake.submit(_request(path))
    _wait_until(lambda: not intake.pending)
    with pytest.raises(TargetMessageError) as raised:
        intake.take()
    assert raised.value.cause is TargetCause.NOT_FINITE
    assert str(raised.value).startswith('target_path: the curve through the waypoints is')


def test_a_path_with_poses_out_of_reach_is_refused_naming_them(intake):
    path = _path(4)
    path.poses[2].pose.position.x = 0.5         # beyond arm_4dof's reach
    intake.submit(_request(path))
    _wait_until(lambda: not intake.pending)
    with pytest.raises(TargetMessageError) as raised:
        intake.take()
    assert raised.value.cause is TargetCause.UNSOLVABLE
    message = str(raised.value)
    assert message.startswith("target_path: 1 of 4 poses out of the arm's reach, the closest "
                              'pose misses poses[2] (0.5, 0, 0.052) by ')
    assert message.endswith('mm: the arm keeps its current target')
    missed_mm = float(message.split(' by ')[1].split(' mm')[0])
    assert missed_mm == pytest.approx(ARM.ik((0.5, 0.0, 0.052)).residual_m * 1e3, abs=0.1)
    assert intake.take() is None


def test_a_path_within_reach_is_followed_from_the_tool(intake):
    path = _path(5)
    intake.submit(_request(path))
    _wait_until(lambda: not intake.pending)
    prepared = intake.take()
    assert prepared.poses == 5
    end = prepared.follower.position_at(prepared.follower.duration_s)
    assert math.dist(end, (0.12, 0.0, 0.054)) < 1e-9
    assert all(ARM.ik(prepared.follower.position_at(t)).reached
               for t in (0.0, 0.5 * prepared.follower.duration_s))


def test_many_poses_out_of_reach_are_counted_and_the_first_named():
    far = [(0.5, 0.0, 0.1 + 0.01 * i) for i in range(NAMED_POSES + 3)]
    with pytest.raises(TargetMessageError) as raised:
        check_reach(ARM, [(0.12, 0.0, 0.05), *far], 'target_path')
    message = str(raised.value)
    assert f'{len(far)} of {len(far) + 1} poses' in message
    assert 'poses[1] ' in message and f'poses[{NAMED_POSES}] ' in message
    assert f'poses[{NAMED_POSES + 1}] ' not in message
    assert message.endswith('and 3 more: the arm keeps its current target')


def test_a_pose_the_batch_misses_but_another_roll_reaches_is_not_refused():
    """The batch keeps the home roll; the single solve turns a roll that moves the tool."""
    arm = load_arm(CONFIG / 'so101.yaml')
    rng = np.random.default_rng(11)
    low = [j.min_rad for j in arm.joints]
    high = [j.max_rad for j in arm.joints]
    poses = [tuple(arm.fk(q)[-1]) for q in rng.uniform(low, high, size=(400, len(low)))]
    batch = arm.ik_batch(np.array(poses))
    rolled = [p for p, hit in zip(poses, batch.reached, strict=True)
              if not hit and arm.ik(p).reached]
    assert rolled, 'no pose of the sample needs another roll: pick another sample'
    check_reach(arm, rolled, 'target_path')     # raises nothing
