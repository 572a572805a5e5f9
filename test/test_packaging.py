"""A colcon build installs everything `ros2 run` and `ros2 launch` look for."""

from pathlib import Path
import shutil
import subprocess
import sys

import pytest

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
    for folder in ('launch', 'config', 'config/rviz'):
        source = sorted(p.name for p in (REPO_ROOT / folder).glob('*') if p.is_file())
        installed = sorted(p.name for p in (share / folder).glob('*') if p.is_file())
        assert installed == source, f'share/{PACKAGE}/{folder}'


@pytest.mark.parametrize('name, target', sorted(console_scripts().items()))
def test_console_script_targets_exist(name: str, target: str):
    module_name, function = target.split(':')
    module_path = REPO_ROOT / (module_name.replace('.', '/') + '.py')
    assert module_path.is_file(), f'{name}: {module_path} missing'
    assert f'def {function}(' in module_path.read_text(), f'{name}: no {function}() in module'
