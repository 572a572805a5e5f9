"""moveit_config_from_arm: a MoveIt 2 configuration every name of which the arm and URDF hold.

MoveIt is not installed here, so what can be checked is: every file parses; every group,
chain, joint, link and controller of the SRDF and YAML files exists in the URDF and in the
arm file; the keys are the ones MoveIt reads (the key sets below are facts read off MoveIt 2's
Jazzy sources and moveit_resources' panda_moveit_config, recorded here); the numbers are the
arm file's and the driver's. For every arm file shipped in config/.
"""

import math
from pathlib import Path
import subprocess
import sys
from xml.etree import ElementTree as ET

import pytest
import yaml

from fabrik_ros.driver.aux_axis import aux_axes, PulseAux
from fabrik_ros.kinematics import load_arm
from fabrik_ros.kinematics.description.urdf_chain import urdf_chain
from fabrik_ros.kinematics.description.urdf_model import parse_urdf, UrdfJointType
from fabrik_ros.tools import moveit_config
from fabrik_ros.tools.moveit_config_robot import SERVO_DRIVER_MAX_SPEED_RAD_S
from fabrik_ros.tools.moveit_config_yaml import ACCELERATION_TIME_S, VELOCITY_MARGIN
from test.tools.conftest import REPO_ROOT

ARM_FILES = sorted((REPO_ROOT / 'config').glob('*.yaml'))
VENDOR_URDFS = REPO_ROOT / 'test' / 'kinematics' / 'description' / 'urdf'

# -- MoveIt's keys (facts) -----------------------------------------------------------------
# kinematics_plugin_loader/src/kinematics_parameters.yaml + kdl_kinematics_parameters.yaml
KINEMATICS_KEYS = {'kinematics_solver', 'kinematics_solver_search_resolution',
                   'kinematics_solver_timeout', 'max_solver_iterations', 'epsilon',
                   'orientation_vs_position', 'position_only_ik'}
KDL = 'kdl_kinematics_plugin/KDLKinematicsPlugin'
# robot_model_loader.cpp: robot_description_planning.joint_limits.<joint>.<key>
JOINT_LIMIT_KEYS = {'max_position', 'min_position', 'has_velocity_limits', 'max_velocity',
                    'has_acceleration_limits', 'max_acceleration', 'has_jerk_limits',
                    'max_jerk'}
# MoveGroupInterface / the MotionPlanning panel: robot_description_planning.<key>
JOINT_LIMITS_TOP_KEYS = {'joint_limits', 'default_velocity_scaling_factor',
                         'default_acceleration_scaling_factor'}
# moveit_simple_controller_manager.cpp: moveit_simple_controller_manager.<controller>.<key>
CONTROLLER_KEYS = {'type', 'action_ns', 'default', 'joints'}
GRIPPER_COMMAND_KEYS = CONTROLLER_KEYS | {'max_effort', 'parallel', 'command_joint',
                                          'allow_failure'}
SIMPLE_MANAGER = 'moveit_simple_controller_manager/MoveItSimpleControllerManager'
# trajectory_execution_manager.cpp: trajectory_execution.<key>
TRAJECTORY_EXECUTION_KEYS = {'execution_duration_monitoring',
                             'allowed_execution_duration_scaling',
                             'allowed_goal_duration_margin', 'execution_velocity_scaling',
                             'allowed_start_tolerance', 'wait_for_trajectory_completion',
                             'control_multi_dof_joint_variables'}
CONTROLLERS_TOP_KEYS = {'moveit_controller_manager', 'moveit_manage_controllers',
                        'moveit_simple_controller_manager', 'trajectory_execution'}
# planning_pipeline_parameters.yaml, plus OMPL's planner_configs and one entry per group
PIPELINE_KEYS = {'planning_plugins', 'request_adapters', 'response_adapters', 'progress_topic',
                 'planner_configs'}
OMPL_PLANNER = 'ompl_interface/OMPLPlanner'
ADAPTERS = {  # moveit_configs_utils/default_configs/ompl_planning.yaml (Jazzy)
    'default_planning_request_adapters/ResolveConstraintFrames',
    'default_planning_request_adapters/ValidateWorkspaceBounds',
    'default_planning_request_adapters/CheckStartStateBounds',
    'default_planning_request_adapters/CheckStartStateCollision',
    'default_planning_response_adapters/AddTimeOptimalParameterization',
    'default_planning_response_adapters/ValidateSolution',
    'default_planning_response_adapters/DisplayMotionPath'}
# The action servers this package serves (issue 35; relative to the namespace).
ACTIONS = {'arm_controller': ('FollowJointTrajectory', 'follow_joint_trajectory'),
           'gripper_controller': ('GripperCommand', 'gripper_cmd')}


class Folder:
    """A written configuration folder, its files parsed."""

    def __init__(self, path: Path, arm_file: Path) -> None:
        self.path = path
        self.arm = load_arm(arm_file)
        config = path / 'config'
        self.urdf_text = (config / 'robot.urdf').read_text()
        self.urdf = parse_urdf(self.urdf_text)
        self.srdf = ET.fromstring((config / 'robot.srdf').read_text())
        self.kinematics = yaml.safe_load((config / 'kinematics.yaml').read_text())
        self.limits = yaml.safe_load((config / 'joint_limits.yaml').read_text())
        self.controllers = yaml.safe_load((config / 'moveit_controllers.yaml').read_text())
        self.ompl = yaml.safe_load((config / 'ompl_planning.yaml').read_text())
        self.rviz = yaml.safe_load((config / 'moveit.rviz').read_text())

    @property
    def gripper(self) -> str:
        """Return the gripper joint's name ('' without one)."""
        group = self.srdf.find("group[@name='gripper']")
        return '' if group is None else group.find('joint').get('name')


def write(tmp_path: Path, arm_file: Path, *args: str) -> Folder:
    """Run the tool in-process and return the folder it wrote."""
    out = tmp_path / 'moveit'
    assert moveit_config.main([str(arm_file), '-o', str(out), *args]) == 0
    return Folder(out, arm_file)


def refusal(capsys, arm_file: Path, *args: str, tmp_path: Path) -> str:
    """Run the tool expecting a refusal; return its one stderr line."""
    out = tmp_path / 'refused'
    assert moveit_config.main([str(arm_file), '-o', str(out), *args]) == 1
    captured = capsys.readouterr()
    assert captured.out == ''
    assert captured.err.count('\n') == 1, captured.err
    assert not out.exists()
    return captured.err


@pytest.fixture(params=ARM_FILES, ids=lambda p: p.stem)
def folder(request, tmp_path) -> Folder:
    return write(tmp_path, request.param)


# -- every shipped arm file ----------------------------------------------------------------

def test_the_urdf_chain_from_base_to_tool_holds_the_arm_joints_and_the_gripper_hangs_off_it(
        folder: Folder):
    arm = folder.arm
    chain = urdf_chain(folder.urdf, tool_link='tool_link', base_link=arm.base_frame)
    movable = [c.joint.name for c in chain.joints if c.joint.type is not UrdfJointType.FIXED]
    assert movable == list(arm.joint_names)
    aux = [servo.name for servo in arm.servo_map.aux]
    assert set(folder.urdf.movable_joint_names) == set(arm.joint_names) | set(aux)
    for name in aux:
        joint = next(j for j in folder.urdf.joints if j.name == name)
        assert joint.parent == 'tool_link'
        assert joint.type is UrdfJointType.REVOLUTE


def test_the_gripper_joint_spans_the_unit_joint_states_publishes_it_in(folder: Folder):
    for axis in aux_axes(folder.arm.servo_map):
        joint = next(j for j in folder.urdf.joints if j.name == axis.name)
        limits = folder.limits['joint_limits'][axis.name]
        if isinstance(axis, PulseAux):
            assert (joint.limits.lower, joint.limits.upper) == (0.0, 1.0)
        else:
            assert joint.limits.lower == pytest.approx(axis.servo.min_rad, abs=1e-11)
            assert joint.limits.upper == pytest.approx(axis.servo.max_rad, abs=1e-11)
        assert (limits['min_position'], limits['max_position']) == (axis.low, axis.high)
        assert limits['max_velocity'] == pytest.approx(axis.default_speed * VELOCITY_MARGIN)


def test_every_srdf_name_is_a_link_or_joint_of_the_urdf(folder: Folder):
    links, joints = set(folder.urdf.links), {j.name for j in folder.urdf.joints}
    srdf = folder.srdf
    assert srdf.tag == 'robot' and srdf.get('name') == folder.urdf.name
    chain = srdf.find("group[@name='arm']/chain")
    assert (chain.get('base_link'), chain.get('tip_link')) == (folder.arm.base_frame,
                                                               'tool_link')
    for element in srdf.iter('joint'):
        assert element.get('name') in joints
    for pair in srdf.findall('disable_collisions'):
        assert {pair.get('link1'), pair.get('link2')} <= links
        assert pair.get('reason') == 'Adjacent'
    adjacent = {frozenset((p.get('link1'), p.get('link2')))
                for p in srdf.findall('disable_collisions')}
    assert adjacent == {frozenset((j.parent, j.child)) for j in folder.urdf.joints}


def test_the_home_state_is_the_arm_files_home_pose(folder: Folder):
    state = folder.srdf.find("group_state[@name='home'][@group='arm']")
    values = {j.get('name'): float(j.get('value')) for j in state.findall('joint')}
    assert list(values) == list(folder.arm.joint_names)
    assert list(values.values()) == pytest.approx(list(folder.arm.home), abs=1e-11)
    for axis in aux_axes(folder.arm.servo_map):
        gripper = folder.srdf.find("group_state[@name='home'][@group='gripper']/joint")
        assert float(gripper.get('value')) == pytest.approx(axis.home, abs=1e-11)


def test_a_gripper_gets_its_group_and_an_end_effector_on_the_tool_link(folder: Folder):
    aux = [servo.name for servo in folder.arm.servo_map.aux]
    effector = folder.srdf.find('end_effector')
    if not aux:
        assert folder.gripper == '' and effector is None
        return
    assert folder.gripper == aux[0]
    assert effector.attrib == {'name': 'gripper', 'parent_link': 'tool_link',
                               'group': 'gripper', 'parent_group': 'arm'}


def test_kinematics_is_kdl_and_position_only_below_six_joints(folder: Folder):
    assert set(folder.kinematics) == {'arm'}
    arm = folder.kinematics['arm']
    assert set(arm) <= KINEMATICS_KEYS
    assert arm['kinematics_solver'] == KDL
    assert arm['position_only_ik'] is (len(folder.arm.joints) < 6)
    assert all(isinstance(arm[k], float) for k in ('kinematics_solver_search_resolution',
                                                    'kinematics_solver_timeout'))


def test_joint_limits_hold_the_arm_files_ranges_and_the_drivers_speeds(folder: Folder):
    limits = folder.limits
    assert set(limits) == JOINT_LIMITS_TOP_KEYS
    names = [*folder.arm.joint_names, *(s.name for s in folder.arm.servo_map.aux)]
    assert list(limits['joint_limits']) == names
    for joint in folder.arm.joints:
        entry = limits['joint_limits'][joint.name]
        assert set(entry) <= JOINT_LIMIT_KEYS
        assert (entry['min_position'], entry['max_position']) == (joint.min_rad, joint.max_rad)
        assert entry['has_velocity_limits'] and entry['has_acceleration_limits']
        assert entry['max_velocity'] == pytest.approx(SERVO_DRIVER_MAX_SPEED_RAD_S
                                                      * VELOCITY_MARGIN)
        assert entry['max_acceleration'] == pytest.approx(entry['max_velocity']
                                                          / ACCELERATION_TIME_S)
    for entry in limits['joint_limits'].values():
        # MoveIt declares these parameters as doubles: an integer would be refused.
        assert all(isinstance(v, float) for k, v in entry.items() if not k.startswith('has_'))


def test_the_controllers_are_this_packages_action_servers_on_the_urdfs_joints(folder: Folder):
    controllers = folder.controllers
    assert set(controllers) <= CONTROLLERS_TOP_KEYS
    assert controllers['moveit_controller_manager'] == SIMPLE_MANAGER
    assert set(controllers['trajectory_execution']) <= TRAJECTORY_EXECUTION_KEYS
    manager = controllers['moveit_simple_controller_manager']
    names = manager['controller_names']
    assert set(manager) == {'controller_names', *names}
    expected = ['arm_controller', *(['gripper_controller'] if folder.gripper else [])]
    assert names == expected
    movable = set(folder.urdf.movable_joint_names)
    for name in names:
        entry = manager[name]
        assert set(entry) <= (GRIPPER_COMMAND_KEYS if entry['type'] == 'GripperCommand'
                              else CONTROLLER_KEYS)
        assert (entry['type'], entry['action_ns']) == ACTIONS[name]
        assert entry['default'] is True
        assert set(entry['joints']) <= movable
    assert manager['arm_controller']['joints'] == list(folder.arm.joint_names)
    if folder.gripper:
        assert manager['gripper_controller']['joints'] == [folder.gripper]


def test_the_ompl_pipeline_plans_every_group_with_planners_it_defines(folder: Folder):
    ompl = folder.ompl
    groups = {g.get('name') for g in folder.srdf.findall('group')}
    assert set(ompl) == (PIPELINE_KEYS - {'progress_topic'}) | groups
    assert ompl['planning_plugins'] == [OMPL_PLANNER]
    assert set(ompl['request_adapters']) | set(ompl['response_adapters']) <= ADAPTERS
    for group in groups:
        assert ompl[group]['planner_configs']
        assert set(ompl[group]['planner_configs']) <= set(ompl['planner_configs'])
    for config in ompl['planner_configs'].values():
        assert config['type'].startswith('geometric::')


def test_the_rviz_config_shows_the_arm_group_in_the_base_frame(folder: Folder):
    manager = folder.rviz['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == folder.arm.base_frame
    display = next(d for d in manager['Displays']
                   if d['Class'] == 'moveit_rviz_plugin/MotionPlanning')
    assert display['Planning Request']['Planning Group'] == 'arm'


def test_the_folder_keeps_a_copy_of_the_arm_file_and_a_launch_file_that_compiles(
        folder: Folder):
    copied = folder.path / 'config' / 'arm.yaml'
    assert load_arm(copied).joint_names == folder.arm.joint_names
    launch = folder.path / 'launch' / 'moveit.launch.py'
    compile(launch.read_text(), str(launch), 'exec')
    assert 'def generate_launch_description' in launch.read_text()


# -- speeds from the arm file --------------------------------------------------------------

def _with_driver_section(tmp_path: Path, parameters: dict) -> Path:
    document = yaml.safe_load((REPO_ROOT / 'config' / 'arm_6servo.yaml').read_text())
    document['servo_driver'] = {'ros__parameters': parameters}
    path = tmp_path / 'arm.yaml'
    path.write_text(yaml.safe_dump(document))
    return path


def test_the_arm_files_servo_driver_speeds_bound_the_plans(tmp_path: Path):
    speeds = [0.5, 1.0, 2.0, 3.0, 4.0]
    arm_file = _with_driver_section(tmp_path, {'max_speed_rad_s': speeds,
                                               'aux_max_speed': 0.25})
    folder = write(tmp_path, arm_file)
    limits = folder.limits['joint_limits']
    assert [limits[n]['max_velocity'] for n in folder.arm.joint_names] == pytest.approx(
        [s * VELOCITY_MARGIN for s in speeds])
    assert limits['gripper']['max_velocity'] == pytest.approx(0.25 * VELOCITY_MARGIN)


@pytest.mark.parametrize('value, rule', [
    ([1.0, 1.0], 'must be a list of 5 speeds'),
    ([1.0, 1.0, 1.0, 1.0, math.inf], 'finite number above 0'),
    ([1.0, 1.0, 1.0, 1.0, 0.0], 'finite number above 0'),
    ('fast', 'must be a list of 5 speeds'),
])
def test_unusable_driver_speeds_are_refused(capsys, tmp_path: Path, value, rule):
    arm_file = _with_driver_section(tmp_path, {'max_speed_rad_s': value})
    line = refusal(capsys, arm_file, tmp_path=tmp_path)
    assert 'servo_driver.ros__parameters.max_speed_rad_s' in line and rule in line


# -- the gripper and the vendor's URDF -----------------------------------------------------

def test_gripper_none_leaves_the_gripper_out(tmp_path: Path):
    folder = write(tmp_path, REPO_ROOT / 'config' / 'so101.yaml', '--gripper', 'none')
    assert folder.gripper == '' and 'gripper' not in folder.urdf.movable_joint_names
    assert folder.controllers['moveit_simple_controller_manager']['controller_names'] == [
        'arm_controller']


def test_an_unknown_gripper_or_a_choice_among_several_is_refused(capsys, tmp_path: Path):
    line = refusal(capsys, REPO_ROOT / 'config' / 'so101.yaml', '--gripper', 'claw',
                   tmp_path=tmp_path)
    assert '--gripper claw: no auxiliary servo of that name' in line and 'gripper' in line
    document = yaml.safe_load((REPO_ROOT / 'config' / 'arm_6servo.yaml').read_text())
    params = document['/**']['ros__parameters']
    params['aux_servos']['wrist_light'] = {**params['aux_servos']['gripper'], 'channel': 6}
    arm_file = tmp_path / 'two_aux.yaml'
    arm_file.write_text(yaml.safe_dump(document))
    line = refusal(capsys, arm_file, tmp_path=tmp_path)
    assert '2 auxiliary servos (gripper, wrist_light): name the gripper with --gripper' in line
    assert write(tmp_path, arm_file, '--gripper', 'wrist_light').gripper == 'wrist_light'


@pytest.mark.parametrize('arm, tool, gripper', [
    ('so101', 'gripper_frame_link', ()), ('so100', 'gripper', ()),
    ('al5d', 'gripper', ('--gripper', 'none')),
    ('phantomx_pincher', 'end_effector', ('--gripper', 'none')),
    ('lss_4dof', 'lss_arm_ee', ('--gripper', 'none')),
])
def test_a_vendor_urdf_is_used_as_it_is_once_it_holds_the_arm_files_joints(
        tmp_path: Path, arm, tool, gripper):
    vendor = VENDOR_URDFS / f'{arm}.urdf'
    folder = write(tmp_path, REPO_ROOT / 'config' / f'{arm}.yaml', '--urdf', str(vendor),
                   '--tool-link', tool, *gripper)
    assert folder.urdf_text == vendor.read_text()
    chain = folder.srdf.find("group[@name='arm']/chain")
    assert chain.get('tip_link') == tool
    assert {p.get('link1') for p in folder.srdf.findall('disable_collisions')} <= set(
        folder.urdf.links)
    for name in folder.controllers['moveit_simple_controller_manager']['controller_names']:
        joints = folder.controllers['moveit_simple_controller_manager'][name]['joints']
        assert set(joints) <= set(folder.urdf.movable_joint_names)


def test_a_vendor_urdf_without_the_gripper_joint_is_refused(capsys, tmp_path: Path):
    line = refusal(capsys, REPO_ROOT / 'config' / 'al5d.yaml', '--urdf',
                   str(VENDOR_URDFS / 'al5d.urdf'), '--tool-link', 'gripper',
                   tmp_path=tmp_path)
    assert 'the gripper gripper (aux_servos.gripper) is no movable joint of the URDF' in line


def test_a_vendor_urdf_of_another_arm_is_refused_naming_both_joint_lists(capsys,
                                                                        tmp_path: Path):
    line = refusal(capsys, REPO_ROOT / 'config' / 'so101.yaml', '--urdf',
                   str(VENDOR_URDFS / 'al5d.urdf'), '--tool-link', 'gripper',
                   tmp_path=tmp_path)
    assert 'the movable joints from base_link to gripper are [Joint1' in line
    assert 'joint_names [shoulder_pan, shoulder_lift' in line


@pytest.mark.parametrize('args, fragment', [
    (('--urdf', str(VENDOR_URDFS / 'so101.urdf')), '--urdf needs --tool-link'),
    (('--tool-link', 'tool_link'), '--tool-link goes with --urdf'),
    (('--urdf', str(VENDOR_URDFS / 'so101.urdf'), '--tool-link', 'hand'),
     "link 'hand': no such link"),
])
def test_tool_link_mistakes_are_refused(capsys, tmp_path: Path, args, fragment):
    assert fragment in refusal(capsys, REPO_ROOT / 'config' / 'so101.yaml', *args,
                               tmp_path=tmp_path)


def test_the_console_script_refuses_a_missing_arm_file_in_one_line(tmp_path: Path):
    result = subprocess.run(
        [sys.executable, '-m', 'fabrik_ros.tools.moveit_config', str(tmp_path / 'no.yaml'),
         '-o', str(tmp_path / 'out')], capture_output=True, text=True, cwd=REPO_ROOT,
        timeout=60)
    assert result.returncode == 1
    assert result.stderr.count('\n') == 1 and 'Traceback' not in result.stderr
    assert result.stderr.startswith(f'moveit_config_from_arm: {tmp_path / "no.yaml"}: ')


def test_an_output_that_is_a_file_is_refused_in_one_line(capsys, tmp_path: Path):
    taken = tmp_path / 'taken'
    taken.write_text('not a folder')
    assert moveit_config.main([str(REPO_ROOT / 'config' / 'so101.yaml'), '-o', str(taken)]) == 1
    captured = capsys.readouterr()
    assert captured.err.count('\n') == 1 and captured.out == ''
    assert taken.read_text() == 'not a folder'
