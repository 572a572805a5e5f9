"""The leader -> follower map: both calibrations, names, offsets, directions, limits; no NaN."""

import math

import pytest

from fabrik_ros.kinematics import load_arm
from fabrik_ros.leader.leader_map import follower_names, LeaderMap, MappingError
from fabrik_ros.leader.leader_watch import LeaderWatch
from test.package_layout import REPO_ROOT

SO101 = load_arm(REPO_ROOT / 'config' / 'so101.yaml')
NAMES = follower_names(SO101)


def _leader_with(tmp_path, zero_count, direction):
    """Return an SO-101 whose elbow servo is calibrated otherwise (another arm's counts)."""
    text = (REPO_ROOT / 'config' / 'so101.yaml').read_text(encoding='utf-8')
    head, tail = text.split('      elbow_flex:  # Feetech', 1)
    tail = tail.replace('zero_count: 2048.0', f'zero_count: {zero_count}', 1)
    tail = tail.replace('direction: 1', f'direction: {direction}', 1)
    path = tmp_path / 'leader.yaml'
    path.write_text(head + '      elbow_flex:  # Feetech' + tail, encoding='utf-8')
    return load_arm(path)


def test_the_default_is_identity_by_name_through_each_arms_calibration(tmp_path):
    leader = _leader_with(tmp_path, 2200.0, -1)
    mapping = LeaderMap.build(leader, SO101)
    assert [r.follower for r in mapping.routes] == list(NAMES)
    names, positions = mapping.command({3: 2200 - 512})
    assert names == ('elbow_flex',) and positions[0] == pytest.approx(math.pi / 4)


def test_offset_and_direction_apply_then_the_followers_limits_clamp():
    offsets = [0.0] * len(NAMES)
    offsets[0] = 0.1
    directions = [1] * len(NAMES)
    directions[0] = -1
    mapping = LeaderMap.build(SO101, SO101, offsets_rad=offsets, directions=directions)
    names, positions = mapping.command({1: 2048 + 512})
    assert positions[0] == pytest.approx(-math.pi / 4 + 0.1)
    _, far = mapping.command({1: 0, 3: 4095})
    assert far == (SO101.joints[0].max_rad, SO101.joints[2].max_rad)


def test_an_empty_name_leaves_a_follower_servo_undriven_and_a_missing_reading_is_left_out():
    leaders = list(NAMES)
    leaders[-1] = ''
    mapping = LeaderMap.build(SO101, SO101, leader_names=leaders)
    assert 'gripper' not in [r.follower for r in mapping.routes] and 6 not in mapping.leader_ids
    names, positions = mapping.command({2: 2048, 6: 100})
    assert names == ('shoulder_lift',) and all(math.isfinite(p) for p in positions)


@pytest.mark.parametrize('given, words', [
    ({'directions': [1, 0, 1, 1, 1, 1]}, 'directions[1] = 0'),
    ({'directions': [1, True, 1, 1, 1, 1]}, 'directions[1] = True'),
    ({'offsets_rad': [math.nan, 0, 0, 0, 0, 0]}, 'offsets_rad[0] = nan'),
    ({'leader_names': [''] * 6}, 'names no leader servo'),
    ({'leader_names': ['x'] * 7}, 'leader_joints has 7 entries, must have 6'),
])
def test_bad_entries_are_refused_naming_them(given, words):
    with pytest.raises(MappingError) as refused:
        LeaderMap.build(SO101, SO101, **given)
    assert words in str(refused.value)


def test_a_pwm_leader_is_refused():
    pwm = load_arm(REPO_ROOT / 'config' / 'arm_4dof.yaml')
    with pytest.raises(MappingError, match='calibrates pulse widths'):
        LeaderMap.build(pwm, SO101, leader_names=['shoulder_pan', '', '', '', '', ''])


def test_the_watch_passes_new_readings_says_silence_once_and_the_return_once():
    watch = LeaderWatch(silence_s=0.5)
    assert watch.take(None, now_s=0.0).publish is False
    assert 'no leader reading yet' in watch.take(None, now_s=0.6).warning
    assert watch.take(None, now_s=0.9).warning == ''
    back = watch.take(1.0, now_s=1.0)
    assert back.publish and back.info == 'first leader reading after 1.0 s: following', \
        'the first reading is no return'
    assert not watch.take(1.0, now_s=1.1).publish, 'a reading is passed on once'
    assert watch.take(1.2, now_s=1.2).publish
    silent = [watch.take(1.2, now_s=t) for t in (1.5, 1.8, 2.5)]
    assert [bool(v.warning) for v in silent] == [False, True, False]
    with pytest.raises(ValueError, match='silence_s'):
        LeaderWatch(silence_s=math.inf)


def test_the_leader_core_imports_without_rclpy():
    import subprocess
    import sys
    blocker = (
        'import importlib.abc, sys\n'
        'class Block(importlib.abc.MetaPathFinder):\n'
        '    def find_spec(self, name, path=None, target=None):\n'
        "        if name.split('.')[0] == 'rclpy' or name.split('.')[0].endswith('_msgs'):\n"
        "            raise ImportError(f'blocked: {name}')\n"
        'sys.meta_path.insert(0, Block())\n'
        'import fabrik_ros.leader.leader_map, fabrik_ros.leader.leader_watch\n'
        'import fabrik_ros.servo_io.limp_bus, fabrik_ros.boardsim.hand\n'
        'import fabrik_ros.launch_support.teleop_plan\n')
    result = subprocess.run([sys.executable, '-c', blocker], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
