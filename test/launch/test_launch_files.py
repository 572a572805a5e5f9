"""Every launch file parses, stays thin, and everything it names exists.

Checked statically on every machine; where ROS 2's `launch` package is importable (a robot or a
ROS 2 workstation) each description is also built for real. What the launch files start is
decided in fabrik_ros/launch_support/arguments.py (tested in test/launch_support/).
"""

import ast
import importlib.util
from pathlib import Path
import sys

import pytest

from test.package_layout import REPO_ROOT

LAUNCH_FILES = sorted((REPO_ROOT / 'launch').glob('*.launch.py'))
# Where the launch files' arguments and processes are decided.
LAUNCH_PLANS = [REPO_ROOT / 'fabrik_ros' / 'launch_support' / 'arguments.py']
# Actions that start processes: only the adapter creates them, after every check.
PROCESS_ACTIONS = {'Node', 'ExecuteProcess', 'ComposableNodeContainer'}
CONFIG_SUFFIXES = ('.yaml', '.rviz', '.urdf')


def _string_constants(tree: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)]


def test_the_documented_launch_files_exist():
    names = {path.name for path in LAUNCH_FILES}
    assert {'arm.launch.py', 'sim.launch.py'} <= names


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_defines_generate_launch_description(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert 'generate_launch_description' in functions


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_a_launch_file_creates_no_process_action_itself(path: Path):
    """Processes come from the one OpaqueFunction that checks every argument first."""
    names = {n.id for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(ast.parse(path.read_text()))
              if isinstance(n, ast.Attribute)}
    assert not names & PROCESS_ACTIONS


@pytest.mark.parametrize('path', LAUNCH_FILES + LAUNCH_PLANS, ids=lambda p: p.name)
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


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_a_launch_file_describes_itself_by_its_own_name(path: Path):
    """describe() checks the given names against the arguments of the file it is told it is."""
    from fabrik_ros.launch_support.arguments import LAUNCH_FILES as DECLARED
    calls = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == 'describe']
    assert [ast.literal_eval(call.args[0]) for call in calls] == [path.name]
    assert path.name in DECLARED


def _started(launch_file: str, argv: list, **given: str) -> list:
    """Run the launch file's one OpaqueFunction with ``given`` as launch would; its actions."""
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    from fabrik_ros.launch_support import actions, arguments

    planner = {'arm.launch.py': arguments.plan_arm, 'sim.launch.py': arguments.plan_sim}
    original, sys.argv = sys.argv, argv
    try:
        entities = actions.describe(launch_file, planner[launch_file])
    finally:
        sys.argv = original
    context = LaunchContext()
    for entity in entities:
        if isinstance(entity, DeclareLaunchArgument):
            context.launch_configurations[entity.name] = entity.default_value[0].text
    context.launch_configurations.update(given)
    opaque = [entity for entity in entities if isinstance(entity, OpaqueFunction)]
    return opaque[0].execute(context)


@pytest.mark.skipif(not _ros_launch_available(), reason="ROS 2 'launch' is not installed here")
@pytest.mark.parametrize('launch_file', ['arm.launch.py', 'sim.launch.py'])
def test_run_by_ros2_launch_an_undeclared_name_starts_nothing(launch_file, monkeypatch):
    from fabrik_ros.launch_support import actions
    from fabrik_ros.launch_support.arguments import LaunchArgumentError
    monkeypatch.setattr(actions, 'share', lambda: REPO_ROOT)
    argv = ['/opt/ros/bin/ros2', 'launch', 'fabrik_ros', launch_file]
    with pytest.raises(LaunchArgumentError, match='did you mean protocol:='):
        _started(launch_file, argv, protocl='ssc32')
    with pytest.raises(LaunchArgumentError, match='arm_side:= is no argument'):
        _started(launch_file, argv, arm_side='left')
    included = ['/opt/ros/bin/ros2', 'launch', 'my_robot', 'bringup.launch.py']
    started = _started(launch_file, included, arm_side='left', rviz='false',
                       robot_state_publisher='false', namespace='left')
    assert started

