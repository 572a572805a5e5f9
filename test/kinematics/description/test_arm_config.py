"""Arm.from_params and load_arm: every rule has its own error naming key, value and rule."""

from pathlib import Path

import pytest

from fabrik_ros.kinematics import Arm, ArmConfigError, JointKind, load_arm
from test.kinematics.conftest import ARM_CONFIGS, CONFIG_DIR, shipped_params


def without(params: dict, dotted: str) -> dict:
    *parents, leaf = dotted.split('.')
    node = params
    for part in parents:
        node = node[part]
    del node[leaf]
    return params


def with_value(params: dict, dotted: str, value) -> dict:
    *parents, leaf = dotted.split('.')
    node = params
    for part in parents:
        node = node[part]
    node[leaf] = value
    return params


@pytest.mark.parametrize('name', ARM_CONFIGS)
def test_shipped_configs_load(name):
    arm = load_arm(CONFIG_DIR / name)
    assert arm.joint_names
    assert arm.within_limits(arm.home)


def test_reference_arm_is_exactly_as_specified():
    arm = load_arm(CONFIG_DIR / 'arm_4dof.yaml')
    assert arm.joint_names == ('base_yaw', 'shoulder', 'elbow', 'wrist')
    assert [j.kind for j in arm.joints] == [JointKind.YAW] + [JointKind.PITCH] * 3
    limits = [(round(j.min_rad, 9), round(j.max_rad, 9)) for j in arm.joints]
    assert limits == [(-1.570796327, 1.570796327), (0.0, 3.141592654),
                      (-2.35619449, 2.35619449), (-1.570796327, 1.570796327)]
    assert arm.shoulder_height_m == 0.07
    assert [link.length_m for link in arm.links] == [0.105, 0.098, 0.06]
    assert arm.home.tolist() == pytest.approx([j.centre_rad for j in arm.joints])
    command = arm.servo_map.to_units([j.min_rad for j in arm.joints])
    assert command.units.tolist() == pytest.approx([500.0] * 4)
    assert command.channels == (0, 1, 2, 3)
    assert arm.servo_map.to_units([j.max_rad for j in arm.joints]).units.tolist() == (
        pytest.approx([2500.0] * 4))


def test_integers_where_floats_are_expected_load_fine():
    params = shipped_params()
    params['geometry']['shoulder_height_m'] = 0
    params['joints']['elbow'].update(min_deg=-135, max_deg=135, home_deg=0)
    params['servos']['elbow'].update(min_us=500, max_us=2500, channel=2.0)
    params['solver']['tolerance_m'] = 1
    arm = Arm.from_params(params)
    assert arm.shoulder_height_m == 0.0
    assert arm.servo_map.calibrations[2].channel == 2


MISSING_CASES = ['joint_names', 'geometry', 'geometry.shoulder_height_m',
                 'geometry.link_lengths_m', 'geometry.tool_length_m', 'joints', 'joints.elbow',
                 'joints.elbow.kind', 'joints.elbow.min_deg', 'joints.elbow.max_deg',
                 'joints.elbow.home_deg', 'servos', 'servos.wrist', 'servos.wrist.channel',
                 'servos.wrist.min_us', 'servos.wrist.max_us', 'servos.wrist.angle_at_min_deg',
                 'servos.wrist.angle_at_max_deg']


@pytest.mark.parametrize('key', MISSING_CASES)
def test_missing_key_is_named(key):
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(without(shipped_params(), key))
    assert caught.value.key == key
    assert str(caught.value) == f'{key} = <missing>, is required'


BAD_VALUES = [
    ('geometry.link_lengths_m', [0.105], 'must have 2 entries'),
    ('geometry.link_lengths_m', [0.105, 0.098, 0.05], 'must have 2 entries'),
    ('joint_names', ['base_yaw', 'shoulder', 'elbow'], 'is not a known key'),
    ('geometry.link_lengths_m', [0.105, -0.098], 'must be > 0.0'),
    ('geometry.tool_length_m', 0.0, 'must be > 0.0'),
    ('geometry.tool_offset_m', -0.01, 'must be >= 0.0'),
    ('joints.elbow.min_deg', 135.0, 'must be < max_deg'),
    ('joints.elbow.max_deg', 400.0, 'must be within [-360.0, 360.0]'),
    ('joints.elbow.max_deg', 240.0, 'must be at most a turn above min_deg (-135.0)'),
    ('joints.elbow.direction', 2, 'must be one of [1, -1]'),
    ('joints.elbow.zero_deg', 361.0, 'must be within [-360.0, 360.0]'),
    ('joints.elbow.home_deg', 140.0, 'must be within [-135.0, 135.0]'),
    ('joints.elbow.kind', 'prismatic', "must be one of ['yaw', 'pitch', 'roll']"),
    ('joints.elbow.kind', 'yaw', 'only the first joint may be a yaw joint'),
    ('joints.shoulder.kind', 'roll', 'roll joints must come after the last pitch joint'),
    ('joints.elbow.min_deg', float('nan'), 'must be a finite number'),
    ('joints.elbow.max_deg', float('inf'), 'must be a finite number'),
    ('joints.elbow.home_deg', '0.0', 'must be a finite number'),
    ('joints.elbow.home_deg', True, 'must be a finite number'),
    ('joints.elbow.speed_dps', 60.0, 'is not a known key'),
    ('servos.wrist.min_us', 300.0, 'must be within [400.0, 2600.0]'),
    ('servos.wrist.max_us', 2700.0, 'must be within [400.0, 2600.0]'),
    ('servos.wrist.min_us', 2500.0, 'must be < max_us'),
    ('servos.wrist.channel', 1, 'is already used by servos.shoulder'),
    ('servos.wrist.channel', -1, 'must be >= 0'),
    ('servos.wrist.channel', 1.5, 'must be an integer'),
    ('servos.wrist.angle_at_max_deg', -90.0, 'must differ from angle_at_min_deg'),
    ('servos.wrist.trim_us', 2500.0, 'must be smaller in size than the pulse range'),
    ('servos.gripper', {'channel': 9}, 'is not a known key'),
    ('joints.gripper', {'kind': 'pitch'}, 'is not a known key'),
    ('aux_servos', {'gripper': {'channel': 3, 'min_us': 900.0, 'max_us': 2100.0,
                                'home_us': 1500.0}}, 'is already used by servos.wrist'),
    ('aux_servos', {'gripper': {'channel': 9, 'min_us': 900.0, 'max_us': 2100.0,
                                'home_us': 2200.0}}, 'must be within [900.0, 2100.0]'),
    ('solver.tolerance_m', 0.0, 'must be a finite float > 0.0'),
    ('solver.max_iterations', 0, 'must be within [1, 10000]'),
    ('solver.min_improvement_m', -1.0, 'must be a finite float >= 0.0'),
    ('solver.bend', 'sideways', "must be one of ['any', 'up', 'down']"),
    ('solver.tolerance', 0.001, 'is not a known key'),
    ('joints', ['base_yaw'], 'must be a mapping of keys'),
    ('base_frame', '', 'must be a non-empty string'),
]


@pytest.mark.parametrize('key, value, rule', BAD_VALUES)
def test_bad_value_is_named_with_its_rule(key, value, rule):
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(with_value(shipped_params(), key, value))
    message = str(caught.value)
    assert rule in message
    assert message.startswith(caught.value.key)
    assert isinstance(caught.value, ValueError)


def test_duplicate_joint_name_is_named():
    params = shipped_params()
    params['joint_names'] = ['base_yaw', 'shoulder', 'elbow', 'elbow']
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(params)
    assert str(caught.value) == "joint_names[3] = 'elbow', must be unique"


def test_array_with_a_non_number_names_the_entry():
    params = with_value(shipped_params(), 'geometry.link_lengths_m', [0.1, 'long'])
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(params)
    assert str(caught.value) == "geometry.link_lengths_m[1] = 'long', must be a finite number"


def test_params_that_are_not_a_mapping_are_rejected():
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(['joint_names'])
    assert 'must be a mapping' in str(caught.value)


@pytest.mark.parametrize('text, rule', [
    ('/**: {ros__parameters: [1, 2', 'is not valid YAML'),
    ('- just\n- a list\n', 'must hold a mapping'),
    ('fabrik_ik:\n  ros__parameters: {}\n', 'must be a mapping in'),
    ('', 'must hold a mapping'),
])
def test_malformed_file_is_rejected(tmp_path: Path, text, rule):
    path = tmp_path / 'arm.yaml'
    path.write_text(text)
    with pytest.raises(ArmConfigError) as caught:
        load_arm(path)
    assert rule in str(caught.value)


def test_unreadable_file_names_the_path(tmp_path: Path):
    with pytest.raises(ArmConfigError) as caught:
        load_arm(tmp_path / 'absent.yaml')
    assert 'absent.yaml' in str(caught.value) and 'cannot be read' in str(caught.value)


def test_single_pitch_arm_needs_no_link_lengths():
    params = shipped_params()
    params['joint_names'] = ['base_yaw', 'shoulder']
    for table in ('joints', 'servos'):
        for name in ('elbow', 'wrist'):
            del params[table][name]
    del params['geometry']['link_lengths_m']
    arm = Arm.from_params(params)
    assert [link.length_m for link in arm.links] == [0.06]


@pytest.mark.parametrize('key, value, closest', [
    ('aux_servo', {'gripper': {'channel': 9, 'min_us': 900.0, 'max_us': 2100.0,
                               'home_us': 1500.0}}, 'aux_servos'),
    ('solvr', {'tolerance_m': 0.001}, 'solver'),
    ('joint_name', ['base_yaw'], 'joint_names'),
    ('geometry.tool_lenght_m', 0.06, 'tool_length_m'),
    ('joints.elbw', {'kind': 'pitch'}, 'elbow'),
    ('joints.elbow.max_dg', 90.0, 'max_deg'),
    ('servos.wrist.trim', 0.0, 'trim_us'),
    ('solver.tolerance', 0.001, 'tolerance_m'),
])
def test_a_misspelt_key_at_any_level_is_refused_with_the_closest_known_key(key, value, closest):
    # Issue 12.3: `aux_servo:` for `aux_servos:` meant no gripper; `solvr:` the default solver.
    with pytest.raises(ArmConfigError) as caught:
        Arm.from_params(with_value(shipped_params(), key, value))
    assert caught.value.key == key
    assert f'is not a known key; the closest known key is {closest} (known: ' in str(caught.value)


def test_a_misspelt_aux_servos_section_in_a_file_is_refused(tmp_path: Path):
    text = (CONFIG_DIR / 'arm_6servo.yaml').read_text().replace('aux_servos:', 'aux_servo:')
    path = tmp_path / 'arm.yaml'
    path.write_text(text)
    with pytest.raises(ArmConfigError) as caught:
        load_arm(path)
    assert caught.value.key == 'aux_servo'
    assert 'closest known key is aux_servos' in str(caught.value)
