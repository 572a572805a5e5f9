"""A node parameter copied under the arm file's /** is named as that node's, not a misspelling.

Issue 24.3: ``use_pose_orientation: true`` under ``/**`` was refused as "not a known key; the
closest known key is aux_servos". Every parameter of every node is tried, the table coming
from the nodes' own declarations (fabrik_ros.node_parameters).
"""

from pathlib import Path

import pytest

from fabrik_ros.kinematics import ArmConfigError, load_arm
from fabrik_ros.node_parameters import node_parameters

ARM_4DOF = Path(__file__).resolve().parents[3] / 'config' / 'arm_4dof.yaml'
_EVERY = sorted({(node, name) for node, names in node_parameters().nodes.items()
                 for name in names})


def _with_top_key(tmp_path: Path, key: str) -> Path:
    path = tmp_path / 'arm.yaml'
    path.write_text(ARM_4DOF.read_text(encoding='utf-8').replace(
        '    base_frame: base_link\n', f'    base_frame: base_link\n    {key}: 1.0\n'),
        encoding='utf-8')
    return path


def test_the_issue_case_names_fabrik_ik_and_its_section(tmp_path):
    with pytest.raises(ArmConfigError) as refused:
        load_arm(_with_top_key(tmp_path, 'use_pose_orientation'))
    assert 'is not a key of the arm file: it is a parameter of the node fabrik_ik' in str(
        refused.value)
    assert 'fabrik_ik: ros__parameters: use_pose_orientation: 1.0' in str(refused.value)
    assert 'aux_servos' not in str(refused.value)


@pytest.mark.parametrize('node, name', _EVERY)
def test_every_node_parameter_is_said_to_be_a_nodes_parameter(tmp_path, node, name):
    with pytest.raises(ArmConfigError) as refused:
        load_arm(_with_top_key(tmp_path, name))
    owners = node_parameters().owners(name)
    assert node in owners
    assert f'it is a parameter of the node {owners[0]}' in str(refused.value)
    assert f'{owners[0]}: ros__parameters: {name}: 1.0' in str(refused.value)


def test_a_misspelt_arm_key_still_gets_the_closest_arm_key(tmp_path):
    with pytest.raises(ArmConfigError) as refused:
        load_arm(_with_top_key(tmp_path, 'aux_servo'))
    assert 'the closest known key is aux_servos' in str(refused.value)
