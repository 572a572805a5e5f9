"""The launch file of a moveit_config_from_arm folder: what it starts, and what it refuses.

The plan (fabrik_ros/launch_support/moveit_plan.py) is plain Python and tested everywhere: the
parameters move_group gets, under the names MoveIt reads them by; the arguments handed to the
package's own launch file, which its own check accepts; the refusals. Where ROS 2's ``launch``
and ``launch_ros`` are importable (a ROS install, or the by-hand CLI venv), the written launch
file itself is built and walked, every process it would start collected (none started).
"""

from pathlib import Path

import pytest

from fabrik_ros.kinematics.description.flat_keys import flatten
from fabrik_ros.launch_support import arguments
from fabrik_ros.launch_support.errors import LaunchArgumentError
from fabrik_ros.launch_support.moveit_plan import plan_moveit
from fabrik_ros.tools import moveit_config
from test.tools.conftest import REPO_ROOT

ARM_FILE = REPO_ROOT / 'config' / 'so101.yaml'
JOINTS = ['shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll']
# Parameter names move_group reads (MoveIt 2 Jazzy sources: move_group.cpp, the simple
# controller manager, the trajectory execution manager, robot_model_loader, the kinematics
# plugin loader, planning_pipeline).
MOVE_GROUP_NAMES = {
    'robot_description', 'robot_description_semantic', 'planning_pipelines',
    'default_planning_pipeline', 'ompl.planning_plugins', 'ompl.request_adapters',
    'ompl.response_adapters', 'ompl.arm.planner_configs', 'moveit_controller_manager',
    'moveit_simple_controller_manager.controller_names',
    'moveit_simple_controller_manager.arm_controller.action_ns',
    'moveit_simple_controller_manager.arm_controller.type',
    'moveit_simple_controller_manager.arm_controller.joints',
    'moveit_simple_controller_manager.gripper_controller.action_ns',
    'trajectory_execution.allowed_start_tolerance',
    'robot_description_kinematics.arm.kinematics_solver',
    'robot_description_kinematics.arm.position_only_ik',
    'robot_description_planning.default_velocity_scaling_factor',
    *(f'robot_description_planning.joint_limits.{j}.max_velocity' for j in JOINTS),
    *(f'robot_description_planning.joint_limits.{j}.max_acceleration' for j in JOINTS),
}


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / 'so101_moveit'
    assert moveit_config.main([str(ARM_FILE), '-o', str(out)]) == 0
    return out


def plan(folder: Path, *, installed=lambda package: True, **given: str):
    """Return the plan for ``given`` launch arguments (the declared ones take their defaults)."""
    return plan_moveit(folder, {'bringup': 'sim', 'rviz': 'auto', **given}, share=REPO_ROOT,
                       installed=installed)


def test_move_group_gets_every_file_under_the_names_moveit_reads(folder: Path):
    flat = dict(flatten(plan(folder).move_group))
    assert MOVE_GROUP_NAMES <= set(flat)
    assert flat['planning_pipelines'] == ['ompl']
    assert flat['moveit_simple_controller_manager.arm_controller.joints'] == JOINTS
    assert flat['robot_description'] == (folder / 'config' / 'robot.urdf').read_text()
    assert flat['robot_description_semantic'].startswith("<?xml version='1.0'")


def test_the_arm_launch_gets_the_folders_arm_file_and_urdf_and_accepts_them(folder: Path):
    """The package's own plan takes the arguments: robot_state_publisher shows MoveIt's URDF."""
    moveit = plan(folder, sim_device='true', protocol='feetech')
    assert moveit.launch_file == REPO_ROOT / 'launch' / 'sim.launch.py'
    given = moveit.launch_arguments
    assert given == {'config': str(folder / 'config' / 'arm.yaml'), 'rviz': 'false',
                     'description': str(folder / 'config' / 'robot.urdf'),
                     'sim_device': 'true', 'protocol': 'feetech'}
    sim = arguments.plan_sim(arguments.defaults(arguments.sim_arguments(REPO_ROOT), **given),
                             share=REPO_ROOT, installed=lambda package: True,
                             owner_of=lambda link: None)
    publisher = next(p for p in sim.processes if p.executable == 'robot_state_publisher')
    assert publisher.parameters == ({'robot_description': moveit.move_group[
        'robot_description']},)
    assert 'rviz2' not in {p.executable for p in sim.processes}
    assert {'servo_driver', 'sim_device', 'fabrik_ik'} <= {p.executable for p in sim.processes}


def test_bringup_arm_includes_arm_launch_with_its_own_arguments(folder: Path):
    moveit = plan(folder, bringup='arm', port='/dev/ttyACM0', protocol='feetech')
    assert moveit.launch_file == REPO_ROOT / 'launch' / 'arm.launch.py'
    assert moveit.launch_arguments['port'] == '/dev/ttyACM0'


def test_robot_state_publisher_false_leaves_the_description_out(folder: Path):
    given = plan(folder, robot_state_publisher='false').launch_arguments
    assert 'description' not in given


@pytest.mark.parametrize('given, fragment', [
    ({'port': '/dev/ttyUSB1'}, 'port:= is no argument of this launch nor of sim.launch.py '
                               '(an argument of bringup:=arm)'),
    ({'protocl': 'feetech'}, 'protocl:= is no argument of this launch'),
    ({'config': 'other.yaml'}, 'config:= is set by this MoveIt launch'),
    ({'namespace': 'left'}, 'namespace:= is set by this MoveIt launch'),
    ({'bringup': 'real'}, 'bringup:=real is not one of sim|arm'),
    ({'rviz': 'yes'}, 'rviz:=yes is not one of true|false|auto'),
])
def test_arguments_that_cannot_work_are_refused_in_one_line(folder: Path, given, fragment):
    with pytest.raises(LaunchArgumentError) as raised:
        plan(folder, **given)
    assert fragment in str(raised.value)


def test_without_moveit_or_rviz_installed(folder: Path):
    with pytest.raises(LaunchArgumentError) as raised:
        plan(folder, installed=lambda package: package != 'moveit_ros_move_group')
    assert 'moveit_ros_move_group is not installed' in str(raised.value)

    def no_rviz(package):
        return package != 'rviz2'

    assert plan(folder, installed=no_rviz).rviz is False
    with pytest.raises(LaunchArgumentError) as raised:
        plan(folder, installed=no_rviz, rviz='true')
    assert 'rviz:=true but rviz2 is not installed' in str(raised.value)


def test_a_folder_missing_a_file_is_refused_naming_it(folder: Path):
    (folder / 'config' / 'robot.srdf').unlink()
    with pytest.raises(LaunchArgumentError) as raised:
        plan(folder)
    assert 'robot.srdf: cannot be read' in str(raised.value)


# -- the written launch file, where ROS 2's launch is installed ----------------------------

def _launch_available() -> bool:
    try:
        import launch
        import launch_ros.actions  # noqa: F401
    except ImportError:
        return False
    return hasattr(launch, 'LaunchDescription')


@pytest.fixture
def package_index(tmp_path, monkeypatch) -> Path:
    """Make this checkout the installed fabrik_ros for the ament index (its launch/, config/)."""
    prefix = tmp_path / 'prefix'
    marker = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / 'fabrik_ros'
    marker.parent.mkdir(parents=True)
    marker.write_text('')
    (prefix / 'share' / 'fabrik_ros').symlink_to(REPO_ROOT)
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(prefix))
    return prefix


def _processes(entities, context) -> list:
    """Visit the entities as a launch service would, collecting (never running) processes."""
    from launch.actions import ExecuteProcess
    found = []
    for entity in entities:
        if isinstance(entity, ExecuteProcess):
            found.append(entity)
            continue
        found.extend(_processes(entity.visit(context) or [], context))
    return found


def _executable(process, context) -> str:
    """Return the executable a Node or ExecuteProcess action names (its file name)."""
    from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions
    from launch_ros.actions import Node
    if isinstance(process, Node):
        named = normalize_to_list_of_substitutions(process._Node__node_executable)
        return perform_substitutions(context, named)
    return Path(perform_substitutions(context, process.cmd[0])).name


@pytest.mark.skipif(not _launch_available(), reason="ROS 2 'launch' is not installed here")
def test_the_written_launch_file_starts_the_arm_move_group_and_rviz(folder: Path,
                                                                    package_index: Path,
                                                                    monkeypatch):
    import importlib.util

    from launch import LaunchContext
    from launch_ros.utilities import evaluate_parameters

    from fabrik_ros.launch_support import actions

    monkeypatch.setattr(actions, 'installed', lambda package: True)
    monkeypatch.setattr('fabrik_ros.launch_support.moveit_actions.installed',
                        lambda package: True)
    path = folder / 'launch' / 'moveit.launch.py'
    spec = importlib.util.spec_from_file_location('moveit_launch', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    context = LaunchContext()
    context.launch_configurations.update({'sim_device': 'true', 'protocol': 'feetech',
                                          'link': str(folder / 'ttySIM')})
    processes = _processes([description], context)
    by_name = {_executable(p, context): p for p in processes}
    assert {'move_group', 'rviz2', 'servo_driver', 'fabrik_ik', 'robot_state_publisher',
            'sim_device'} <= set(by_name), sorted(by_name)
    move_group = by_name['move_group']
    parameters = {}
    for entry in evaluate_parameters(context, move_group._Node__parameters):
        parameters.update(entry)
    assert MOVE_GROUP_NAMES <= set(parameters)
    assert parameters['moveit_simple_controller_manager.gripper_controller.action_ns'] == (
        'gripper_cmd')
