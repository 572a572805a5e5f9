"""The shipped arm files of real arms: what arm_from_urdf reads off their URDFs, and exact.

Each config/<arm>.yaml below was written by arm_from_urdf from its vendor's published numbers
(the file's header says where they came from). Its geometry and joints must be what
arm_from_urdf writes from the hand-written URDF of the same numbers (test data in urdf/), its
tool point must be that URDF's (yourdfpy) to 1e-5 m over 1,000 configurations, and every number
in it carries a comment.
"""

from pathlib import Path

import pytest
import yaml

from fabrik_ros.kinematics import load_arm
from fabrik_ros.tools.arm_from_urdf import main
from test.kinematics.conftest import CONFIG_DIR
from test.kinematics.description.test_vendor_arms import (
    arm_file_of,
    ARMS,
    URDF_DIR,
    worst_tool_errors,
)
from test.kinematics.description.urdf_fk import UrdfFk

SHIPPED = sorted(ARMS)
# Arms on serial bus servos, shipped with count servo sections (arm_from_urdf --bus-servos).
BUS_ARMS = ('so100', 'so101')


def shipped(arm: str) -> dict:
    """Return a shipped arm file's ros__parameters."""
    return yaml.safe_load((CONFIG_DIR / f'{arm}.yaml').read_text())['/**']['ros__parameters']


def bus_arm_file_of(tmp_path: Path, arm: str) -> dict:
    """Run arm_from_urdf for a bus arm (ids from 1, the gripper a count servo)."""
    urdf, base, tool, _ = ARMS[arm]
    out = tmp_path / f'{arm}.yaml'
    assert main([str(URDF_DIR / urdf), '--tool-link', tool, '--base-link', base,
                 '--first-channel', '1', '--aux-servo', 'gripper', '--bus-servos', '4096',
                 '-o', str(out)]) == 0
    return yaml.safe_load(out.read_text())['/**']['ros__parameters']


@pytest.mark.parametrize('arm', SHIPPED)
def test_shipped_geometry_and_joints_are_what_arm_from_urdf_reads(tmp_path: Path, arm: str):
    params = shipped(arm)
    bus = arm in BUS_ARMS
    generated = bus_arm_file_of(tmp_path, arm) if bus else arm_file_of(tmp_path, arm)[1]
    for key in ('base_frame', 'joint_names', 'geometry', 'joints', 'solver'):
        assert params[key] == generated[key], key
    address = 'id' if bus else 'channel'
    channels = [params['servos'][name][address] for name in params['joint_names']]
    assert channels == list(range(channels[0], channels[0] + len(channels)))
    assert params['aux_servos']['gripper'][address] == channels[-1] + 1
    if bus:
        assert (params['servos'], params['aux_servos']) == (generated['servos'],
                                                            generated['aux_servos'])


@pytest.mark.parametrize('arm', SHIPPED)
def test_shipped_tool_point_is_the_urdfs_over_1000_configurations(arm: str):
    urdf, base, tool, _ = ARMS[arm]
    reference = UrdfFk(URDF_DIR / urdf, base_link=base, tool_link=tool)
    oracle, core = worst_tool_errors(CONFIG_DIR / f'{arm}.yaml', reference, 1000, seed=101)
    assert oracle < 1e-5 and core < 1e-5


@pytest.mark.parametrize('arm', SHIPPED)
def test_every_number_in_a_shipped_file_says_where_it_came_from(arm: str):
    for line in (CONFIG_DIR / f'{arm}.yaml').read_text().splitlines():
        content, _, comment = line.partition('#')
        value = content.partition(':')[2]
        if any(c.isdigit() for c in value):
            assert comment.strip(), f'{arm}: {line}'


@pytest.mark.parametrize('arm', BUS_ARMS)
def test_so10x_servos_are_bus_ids_1_to_6_in_counts_with_the_gripper_last(arm: str):
    params = shipped(arm)
    assert params['joint_names'] == ['shoulder_pan', 'shoulder_lift', 'elbow_flex',
                                     'wrist_flex', 'wrist_roll']
    assert [params['servos'][n]['id'] for n in params['joint_names']] == [1, 2, 3, 4, 5]
    assert params['aux_servos']['gripper']['id'] == 6
    servo_map = load_arm(CONFIG_DIR / f'{arm}.yaml').servo_map
    assert servo_map.unit == 'count'
    assert all(0 <= c.low_units and c.high_units <= 4095 for c in servo_map.calibrations)


def test_so101_states_how_a_lerobot_calibration_gives_its_counts():
    text = (CONFIG_DIR / 'so101.yaml').read_text()
    assert 'zero_count = (range_min + range_max) / 2, direction 1' in ' '.join(
        line.lstrip('# ') for line in text.splitlines())


@pytest.mark.parametrize('arm', SHIPPED)
def test_shipped_vendor_arm_file_loads(arm: str):
    assert load_arm(CONFIG_DIR / f'{arm}.yaml').joint_names == tuple(shipped(arm)['joint_names'])
