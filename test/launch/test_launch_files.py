"""Every launch file parses, and everything it names exists.

Checked statically on every machine; where ROS 2's `launch` package is importable (a robot or a
ROS 2 workstation) each description is also built for real.
"""

import ast
import importlib.util
from pathlib import Path

import pytest

from test.package_layout import console_scripts, exec_depends, PACKAGE, REPO_ROOT

LAUNCH_FILES = sorted((REPO_ROOT / 'launch').glob('*.launch.py'))
# Launch actions the launch files import from the package.
LAUNCH_HELPERS = [REPO_ROOT / 'fabrik_ros' / 'launch_support' / 'viewers.py']
# Started only when installed (`rviz:=auto`), so a headless robot need not install it.
OPTIONAL_PACKAGES = {'rviz2'}
CONFIG_SUFFIXES = ('.yaml', '.rviz', '.urdf')


def _string_constants(tree: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)]


def _node_calls(tree: ast.AST) -> list[dict[str, str]]:
    """Return the constant package/executable keywords of every Node(...)-like call."""
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        keywords = {k.arg: k.value.value for k in node.keywords
                    if k.arg in ('package', 'executable') and isinstance(k.value, ast.Constant)}
        if 'executable' in keywords:
            calls.append(keywords)
    return calls


def test_the_documented_launch_files_exist():
    names = {path.name for path in LAUNCH_FILES}
    assert {'arm.launch.py', 'sim.launch.py'} <= names


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_defines_generate_launch_description(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert 'generate_launch_description' in functions


@pytest.mark.parametrize('path', LAUNCH_FILES + LAUNCH_HELPERS, ids=lambda p: p.name)
def test_every_executable_named_is_installed(path: Path):
    calls = _node_calls(ast.parse(path.read_text()))
    assert calls, f'{path.name} starts no node'
    scripts = console_scripts()
    known_packages = exec_depends() | OPTIONAL_PACKAGES | {PACKAGE}
    for call in calls:
        package = call.get('package', PACKAGE)
        assert package in known_packages, f'{path.name}: {package} is not in package.xml'
        if package == PACKAGE:
            assert call['executable'] in scripts, (
                f"{path.name}: executable {call['executable']!r} is not a console_script")


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_every_config_file_named_exists(path: Path):
    shipped = {p.name for p in (REPO_ROOT / 'config').rglob('*') if p.is_file()}
    for text in _string_constants(ast.parse(path.read_text())):
        if text.endswith(CONFIG_SUFFIXES):
            assert Path(text).name in shipped, f'{path.name} names {text!r}, not in config/'


def _ros_launch_available() -> bool:
    try:
        import launch
    except ImportError:
        return False
    return hasattr(launch, 'LaunchDescription')


@pytest.mark.skipif(not _ros_launch_available(), reason="ROS 2 'launch' is not installed here")
@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_description_builds(path: Path):
    import launch

    spec = importlib.util.spec_from_file_location(path.stem.replace('.', '_'), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    assert isinstance(description, launch.LaunchDescription)
    assert description.entities
