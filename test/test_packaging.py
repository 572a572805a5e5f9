"""A colcon build installs everything `ros2 run` and `ros2 launch` look for."""

import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys

import pytest

from fabrik_ros.boardsim.simavr_board import missing_prerequisites
from test.package_layout import console_scripts, PACKAGE, REPO_ROOT

COLCON = Path(sys.executable).parent / 'colcon'
SKIP_DIRS = {'.venv', 'build', 'install', 'log', '.git', '.pytest_cache', '.hypothesis',
             '__pycache__', '.ruff_cache'}


def _copy_sources(destination: Path) -> None:
    shutil.copytree(REPO_ROOT, destination,
                    ignore=lambda _dir, names: [n for n in names if n in SKIP_DIRS
                                                or n.endswith('.egg-info')])


@pytest.fixture(scope='module')
def install_space(tmp_path_factory) -> Path:
    if not COLCON.exists():
        pytest.fail(f'colcon is missing from the venv ({COLCON}); run make setup')
    workspace = tmp_path_factory.mktemp('colcon_ws')
    _copy_sources(workspace / 'src' / PACKAGE)
    result = subprocess.run([str(COLCON), 'build', '--event-handlers', 'console_direct-'],
                            cwd=workspace, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return workspace / 'install' / PACKAGE


@pytest.mark.timeout(300)
def test_ament_index_marks_the_package(install_space: Path):
    marker = install_space / 'share' / 'ament_index' / 'resource_index' / 'packages' / PACKAGE
    assert marker.is_file()
    assert (install_space / 'share' / PACKAGE / 'package.xml').is_file()


@pytest.mark.timeout(300)
def test_every_executable_lands_in_lib_package(install_space: Path):
    lib = install_space / 'lib' / PACKAGE
    for name in console_scripts():
        assert (lib / name).is_file(), f'lib/{PACKAGE}/{name} missing'


@pytest.mark.timeout(300)
def test_launch_and_config_files_are_installed(install_space: Path):
    share = install_space / 'share' / PACKAGE
    for folder in ('launch', 'config', 'config/rviz', 'config/teleop'):
        source = sorted(p.name for p in (REPO_ROOT / folder).glob('*') if p.is_file())
        installed = sorted(p.name for p in (share / folder).glob('*') if p.is_file())
        assert installed == source, f'share/{PACKAGE}/{folder}'


@pytest.mark.parametrize('name, target', sorted(console_scripts().items()))
def test_console_script_targets_exist(name: str, target: str):
    module_name, function = target.split(':')
    module_path = REPO_ROOT / (module_name.replace('.', '/') + '.py')
    assert module_path.is_file(), f'{name}: {module_path} missing'
    assert f'def {function}(' in module_path.read_text(), f'{name}: no {function}() in module'


@pytest.mark.timeout(300)
def test_the_firmware_sources_are_installed_without_a_build(install_space: Path):
    hardware = install_space / 'share' / PACKAGE / 'hardware'
    for folder in ('.', 'firmware/fabrik_servo_bridge', 'sim'):
        source = sorted(p.name for p in (REPO_ROOT / 'hardware' / folder).glob('*')
                        if p.is_file())
        installed = sorted(p.name for p in (hardware / folder).glob('*') if p.is_file())
        assert installed == source, f'share/{PACKAGE}/hardware/{folder}'
    assert not (hardware / 'build').exists()


@pytest.mark.timeout(300)
def test_sim_device_builds_simavr_outside_the_install_and_serves_it(install_space: Path,
                                                                      tmp_path: Path):
    missing = missing_prerequisites()
    if missing:
        pytest.skip(f'simavr tool chain missing: {missing}')
    site = next((install_space / 'lib').glob('python3*/site-packages'))
    env = dict(os.environ, PYTHONPATH=str(site), AMENT_PREFIX_PATH=str(install_space),
               XDG_CACHE_HOME=str(tmp_path / 'cache'))
    env.pop('FABRIK_ROS_HARDWARE_DIR', None)
    link = tmp_path / 'ttyAVR'
    before = _tree(install_space)
    process = subprocess.Popen(
        [sys.executable, str(install_space / 'lib' / PACKAGE / 'sim_device'), '--board',
         'simavr', '--link', str(link)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        banner = process.stdout.readline()
        assert banner.startswith('sim_device: simavr native board'), (
            banner + process.stdout.read())
        assert os.path.realpath(link).startswith('/dev/pts/')
    finally:
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=60)[0]
    assert process.returncode == 0, output
    assert (tmp_path / 'cache' / PACKAGE / 'hardware_build' / 'fabrik_servo_bridge.elf').is_file()
    assert _tree(install_space) == before


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob('*') if '__pycache__' not in p.parts}
