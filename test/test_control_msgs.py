"""The control_msgs in the venv is the distro's released one, field for field and hash for hash.

control_msgs is not on PyPI: `make setup` generates the interfaces the package uses from
interfaces/<distro>/control_msgs (interfaces/build.sh). MoveIt and ros2_control's controllers on
a robot use the real package, so one field off breaks the wire. The field lists below are those
of the released interfaces (Jazzy: control_msgs 5.9.0; Kilted: 6.10.0).
"""

import json
import os
from pathlib import Path
import subprocess
import sys

import pytest

from fabrik_ros.ros_env import detect_distro
from test.package_layout import REPO_ROOT

pytest.importorskip('rclpy')

import control_msgs  # noqa: E402
from control_msgs import action, msg  # noqa: E402

#: The distro of the installed rclpy (the wheels under test), whatever ROS_DISTRO says.
DISTRO = detect_distro({})
DEFINITIONS = REPO_ROOT / 'interfaces' / str(DISTRO) / 'control_msgs'
#: Where the imported control_msgs is installed: <prefix>/lib/pythonX.Y/site-packages/control_msgs.
PREFIX = Path(control_msgs.__file__).resolve().parents[4]
SHARE = PREFIX / 'share' / 'control_msgs'

_TOLERANCES = [
    ('path_tolerance', 'sequence<control_msgs/JointTolerance>'),
    ('component_path_tolerance', 'sequence<control_msgs/JointComponentTolerance>'),
    ('goal_tolerance', 'sequence<control_msgs/JointTolerance>'),
    ('component_goal_tolerance', 'sequence<control_msgs/JointComponentTolerance>'),
]
_GRIPPER_STATE = [('position', 'double'), ('effort', 'double'), ('stalled', 'boolean'),
                  ('reached_goal', 'boolean')]


def _feedback(with_indices: bool) -> list[tuple[str, str]]:
    point = 'trajectory_msgs/JointTrajectoryPoint'
    multi_point = 'trajectory_msgs/MultiDOFJointTrajectoryPoint'
    index = [('index', 'int32')] if with_indices else []
    multi_index = [('multi_dof_index', 'int32')] if with_indices else []
    return [('header', 'std_msgs/Header'), ('joint_names', 'sequence<string>'),
            ('desired', point), ('actual', point), ('error', point), *index,
            ('multi_dof_joint_names', 'sequence<string>'), ('multi_dof_desired', multi_point),
            ('multi_dof_actual', multi_point), ('multi_dof_error', multi_point), *multi_index]


#: Each interface's fields, in order: (name, type) as the generated classes name them.
FIELDS: dict[str, list[tuple[str, str]]] = {
    'action/FollowJointTrajectory_Goal': [
        ('trajectory', 'trajectory_msgs/JointTrajectory'),
        ('multi_dof_trajectory', 'trajectory_msgs/MultiDOFJointTrajectory'),
        *_TOLERANCES,
        ('goal_time_tolerance', 'builtin_interfaces/Duration')],
    'action/FollowJointTrajectory_Result': [('error_code', 'int32'), ('error_string', 'string')],
    # The feedback's index and multi_dof_index came with control_msgs 6.3 (the Kilted line).
    'action/FollowJointTrajectory_Feedback': _feedback(with_indices=DISTRO != 'jazzy'),
    'action/GripperCommand_Goal': [('command', 'control_msgs/GripperCommand')],
    'action/GripperCommand_Result': _GRIPPER_STATE,
    'action/GripperCommand_Feedback': _GRIPPER_STATE,
    'action/ParallelGripperCommand_Goal': [('command', 'sensor_msgs/JointState')],
    'action/ParallelGripperCommand_Result': [
        ('state', 'sensor_msgs/JointState'), ('stalled', 'boolean'), ('reached_goal', 'boolean')],
    'action/ParallelGripperCommand_Feedback': [('state', 'sensor_msgs/JointState')],
    'msg/GripperCommand': [('position', 'double'), ('max_effort', 'double')],
    'msg/JointTolerance': [('name', 'string'), ('position', 'double'), ('velocity', 'double'),
                           ('acceleration', 'double')],
    'msg/JointComponentTolerance': [
        ('joint_name', 'string'), ('component', 'uint16'), ('position', 'double'),
        ('velocity', 'double'), ('acceleration', 'double')],
    'msg/JointJog': [('header', 'std_msgs/Header'), ('joint_names', 'sequence<string>'),
                     ('displacements', 'sequence<double>'), ('velocities', 'sequence<double>'),
                     ('duration', 'double')],
}

#: Each interface's constants (every one it defines; the others define none).
CONSTANTS: dict[str, dict[str, int]] = {
    'action/FollowJointTrajectory_Result': {
        'SUCCESSFUL': 0, 'INVALID_GOAL': -1, 'INVALID_JOINTS': -2, 'OLD_HEADER_TIMESTAMP': -3,
        'PATH_TOLERANCE_VIOLATED': -4, 'GOAL_TOLERANCE_VIOLATED': -5},
    'msg/JointComponentTolerance': {
        'X_AXIS': 1, 'Y_AXIS': 2, 'Z_AXIS': 3, 'TRANSLATION': 4, 'ROTATION': 5},
}

# The type hashes (RIHS01) of the released interfaces. Obtained by building the released
# control_msgs sources themselves (the jazzy 5.9.0-1 and kilted 6.10.0-1 release tags), outside
# this repository, with each distro's wheels of requirements-<distro>.txt and
# requirements-build-<distro>.txt: `cmake` of the package, then
# `make control_msgs__rosidl_generator_type_description`, reading the type_hashes of
# rosidl_generator_type_description/control_msgs/*/<Name>.json. A hash covers the type's field
# names, types and defaults and those of every type it refers to.
_HASHES_BOTH = {
    'action/FollowJointTrajectory_Goal':
        'RIHS01_8a9060704b269608f5a340934cc26e66869dd14bdac29e2e7fd9ec8b9882d205',
    'action/FollowJointTrajectory_Result':
        'RIHS01_8002e99ed2c14c6faa522f2a93c26d744c5982f254f9e98ff9c6f19789bdb220',
    'action/GripperCommand':
        'RIHS01_e17c0e644eccf14bea84a0a93e0977182872c2eb7873ca6694900059b46dbc84',
    'action/GripperCommand_Goal':
        'RIHS01_607d9f41eb241e1922e90f02125e87ae6bfb78f7f64a71dc92630263d01f8b6d',
    'action/GripperCommand_Result':
        'RIHS01_bf512d5aa6a0e4fe4d8be22b2ec4a1973c3d250fa1f65e47450322c25c45c0a0',
    'action/GripperCommand_Feedback':
        'RIHS01_8f7c520077bab528bb9161ee3b83c81eee1f8aecadb8922ce82c79d667a819c4',
    'action/ParallelGripperCommand':
        'RIHS01_adfd3c1ebe8abc38ebcc0e454b6423d291d4010dd5697d14eca5b9be4726ae18',
    'action/ParallelGripperCommand_Goal':
        'RIHS01_412807b6b6acf2bf406fb0cf3b5c8f84286cd4e4d425734155aa1ff41caa0063',
    'action/ParallelGripperCommand_Result':
        'RIHS01_51acbcd62aa44097d3877c506eab1146856fa8768628ffbe102c1699152d2afa',
    'action/ParallelGripperCommand_Feedback':
        'RIHS01_ed6f7c4e5aea7f960432663c0e762e001a0a1f5cc0130d126e60041412d0543c',
    'msg/GripperCommand':
        'RIHS01_57eb8f326c9889ca8bb34ead82cc94cc09bf6bc5c3b6c09546dca3a00b589890',
    'msg/JointComponentTolerance':
        'RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4',
    'msg/JointJog':
        'RIHS01_ba249455a20f70168a1acb7bf43b776b72ff1f7eb5fc4cfea443f749e963c6e7',
    'msg/JointTolerance':
        'RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648',
}
HASHES: dict[str, dict[str, str]] = {
    'jazzy': {
        **_HASHES_BOTH,
        'action/FollowJointTrajectory':
            'RIHS01_738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6',
        'action/FollowJointTrajectory_Feedback':
            'RIHS01_3fd0aaecf71725121ae1ff7f01098a5e0da581e672be18a6b2c286cb43d96b49',
    },
    'kilted': {
        **_HASHES_BOTH,
        'action/FollowJointTrajectory':
            'RIHS01_ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0',
        'action/FollowJointTrajectory_Feedback':
            'RIHS01_0bb018d181bdc6384dd75365480967bd1d6eaee4ef3dd597c64cd0b8bdc10867',
    },
}
#: The interface files each distro's definitions hold.
INTERFACES = sorted(name for name in HASHES['kilted'] if '_' not in name)


def _generated_class(name: str) -> type:
    folder, _, type_name = name.partition('/')
    interface, _, part = type_name.partition('_')
    generated = getattr(action if folder == 'action' else msg, interface)
    return getattr(generated, part) if part else generated


def _installed_hashes() -> dict[str, str]:
    """Return every control_msgs type hash the installed type descriptions hold."""
    hashes: dict[str, str] = {}
    for description in SHARE.glob('*/*.json'):
        for entry in json.loads(description.read_text(encoding='utf-8'))['type_hashes']:
            package, _, name = entry['type_name'].partition('/')
            if package == 'control_msgs':
                hashes[name] = entry['hash_string']
    return hashes


def test_the_distro_under_test_has_its_definitions():
    assert DISTRO in HASHES, f'no released control_msgs recorded for {DISTRO}'
    assert sorted(f'{p.parent.name}/{p.stem}' for p in DEFINITIONS.glob('*/*.*')) == INTERFACES


@pytest.mark.parametrize('name', sorted(FIELDS))
def test_fields_are_the_released_ones(name: str):
    generated = _generated_class(name)
    assert list(generated.get_fields_and_field_types().items()) == FIELDS[name]


@pytest.mark.parametrize('name', sorted(FIELDS))
def test_constants_are_the_released_ones(name: str):
    generated = _generated_class(name)
    constants = {key: getattr(generated, key) for key in dir(generated)
                 if key.isupper() and key != 'SLOT_TYPES'}
    assert constants == CONSTANTS.get(name, {})


def test_type_hashes_are_the_released_ones():
    installed = _installed_hashes()
    expected = HASHES[str(DISTRO)]
    assert {name: installed.get(name) for name in expected} == expected


def test_the_venv_holds_the_definitions_of_this_repository():
    if PREFIX != Path(sys.prefix).resolve():
        pytest.skip(f'control_msgs comes from {PREFIX}, not from this venv')
    for name in INTERFACES:
        suffix = '.action' if name.startswith('action/') else '.msg'
        ours = (DEFINITIONS / f'{name}{suffix}').read_text(encoding='utf-8')
        installed = (SHARE / f'{name}{suffix}').read_text(encoding='utf-8')
        assert installed == ours, f'{name}: the venv holds another definition; run make setup'


def test_a_fresh_interpreter_imports_it_without_library_paths():
    # What a console script or a test's subprocess starts with: no LD_LIBRARY_PATH of its own.
    environ = {key: value for key, value in os.environ.items()
               if key not in ('LD_LIBRARY_PATH', '_ROS_WHEELS_BOOTSTRAP_COMPLETE')}
    code = ('from control_msgs.action import FollowJointTrajectory as F\n'
            'print(F.Result.GOAL_TOLERANCE_VIOLATED, len(F.Feedback().error.positions))')
    result = subprocess.run([sys.executable, '-c', code], env=environ, capture_output=True,
                            text=True, timeout=60, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ['-5', '0']


def test_a_colcon_workspace_never_builds_the_copy():
    # interfaces/COLCON_IGNORE: on a robot the real control_msgs (rosdep) is the one built, and
    # rosdep, which reads the same marker, never takes ours for it.
    colcon = Path(sys.executable).parent / 'colcon'
    found = {}
    for base in (REPO_ROOT, REPO_ROOT / 'interfaces'):
        result = subprocess.run([str(colcon), 'list', '--names-only', '--base-paths', str(base)],
                                capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
        assert result.returncode == 0, result.stderr
        found[base.name] = result.stdout.split()
    assert found == {REPO_ROOT.name: ['fabrik_ros'], 'interfaces': []}
