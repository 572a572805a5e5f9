"""fabrik_ros.ros_env keeps DDS on loopback the way each distro understands, and says nothing."""

import os
from pathlib import Path
import subprocess
import sys

import pytest

from fabrik_ros import ros_env
from fabrik_ros.ros_env import detect_distro, isolate_ros, make_lines

REPO_ROOT = Path(__file__).resolve().parent.parent
LOOPBACK = ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY')


@pytest.mark.parametrize('distro', ['iron', 'jazzy', 'kilted', 'rolling', 'lyrical'])
def test_a_distro_with_the_discovery_range_gets_it_and_never_localhost_only(distro):
    environ = {'ROS_LOCALHOST_ONLY': '1', 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SUBNET',
               'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'}
    isolate_ros(environ, distro=distro)
    assert environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
    assert 'ROS_LOCALHOST_ONLY' not in environ
    assert environ['RMW_IMPLEMENTATION'] == 'rmw_fastrtps_cpp'


def test_humble_gets_localhost_only_and_no_discovery_range():
    environ = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    isolate_ros(environ, distro='humble')
    assert environ['ROS_LOCALHOST_ONLY'] == '1'
    assert 'ROS_AUTOMATIC_DISCOVERY_RANGE' not in environ


def test_an_unknown_distro_gets_both_variables():
    environ: dict[str, str] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ros_env, 'detect_distro', lambda environ: None)
        isolate_ros(environ)
    assert {name: environ[name] for name in LOOPBACK} == {
        'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST', 'ROS_LOCALHOST_ONLY': '1'}


def test_without_force_the_callers_choices_stay_and_only_missing_ones_are_filled():
    chosen = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SUBNET', 'RMW_IMPLEMENTATION': 'rmw_x',
              'ROS_DOMAIN_ID': '42'}
    environ = dict(chosen)
    changes = isolate_ros(environ, distro='jazzy', force=False)
    assert environ == chosen
    assert changes == {}
    fresh: dict[str, str] = {}
    isolate_ros(fresh, distro='jazzy', force=False)
    assert fresh['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
    assert 'ROS_LOCALHOST_ONLY' not in fresh


def test_the_domain_is_random_in_1_to_100_unless_the_caller_has_one(tmp_path):
    domains = set()
    for _ in range(200):
        environ: dict[str, str] = {}
        isolate_ros(environ, distro='kilted')
        domains.add(int(environ['ROS_DOMAIN_ID']))
    assert min(domains) >= 1 and max(domains) <= 100 and len(domains) > 10
    environ = {'ROS_DOMAIN_ID': '7', 'ROS_HOME': str(tmp_path / 'mine')}
    isolate_ros(environ, distro='kilted', ros_home=tmp_path / 'default')
    assert environ['ROS_DOMAIN_ID'] == '7'
    assert environ['ROS_HOME'] == str(tmp_path / 'mine')
    assert Path(environ['ROS_LOG_DIR']).is_dir()
    assert Path(environ['ROS_LOG_DIR']).parent == tmp_path / 'default'


def test_ros_distro_names_the_distro_else_the_installed_rclpy_does(monkeypatch):
    assert detect_distro({'ROS_DISTRO': 'Humble'}) == 'humble'
    versions = {'ros-rclpy': '7.1.6'}

    def version(name: str) -> str:
        if name not in versions:
            raise ros_env.metadata.PackageNotFoundError(name)
        return versions[name]

    monkeypatch.setattr(ros_env.metadata, 'version', version)
    assert detect_distro({}) == 'jazzy'
    versions['ros-rclpy'] = '9.1.2'
    assert detect_distro({}) == 'kilted'
    versions['ros-rclpy'] = '10.0.0'
    assert detect_distro({}) == 'rolling'
    versions.clear()
    versions['rclpy'] = '3.3.16'
    assert detect_distro({}) == 'humble'
    versions.clear()
    assert detect_distro({}) is None


def test_the_makefile_lines_export_and_unexport_per_distro():
    assert make_lines('jazzy') == ['export RMW_IMPLEMENTATION := rmw_fastrtps_cpp',
                                   'export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST',
                                   'unexport ROS_LOCALHOST_ONLY']
    assert make_lines('humble')[1:] == ['unexport ROS_AUTOMATIC_DISCOVERY_RANGE',
                                        'export ROS_LOCALHOST_ONLY := 1']
    result = subprocess.run([sys.executable, '-m', 'fabrik_ros.ros_env', '--make',
                             '--distro', 'kilted'], cwd=REPO_ROOT, capture_output=True,
                            text=True, check=True, timeout=60)
    assert result.stdout.splitlines() == make_lines('kilted')


@pytest.mark.ros
@pytest.mark.timeout(60)
def test_rclpy_starts_without_a_warning_from_a_shell_that_set_localhost_only(tmp_path):
    environ = {**os.environ, 'ROS_LOCALHOST_ONLY': '1'}
    environ.pop('ROS_AUTOMATIC_DISCOVERY_RANGE')
    isolate_ros(environ, ros_home=tmp_path)
    code = ('import rclpy\n'
            'rclpy.init()\n'
            'node = rclpy.create_node("ros_env_probe")\n'
            'node.destroy_node()\n'
            'rclpy.shutdown()\n')
    result = subprocess.run([sys.executable, '-c', code], env=environ, capture_output=True,
                            text=True, timeout=50)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ''
