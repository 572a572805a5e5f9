"""A limit that cuts only rounding off a command is no clamp (SO-101 wrist_flex, defect D6)."""

from pathlib import Path

import pytest

from fabrik_ros.kinematics import load_arm
from fabrik_ros.kinematics.description.servo_map import ROUNDING_UNITS

CONFIG = Path(__file__).parents[3] / 'config'


@pytest.mark.parametrize('config, index', [('so101.yaml', 3), ('arm_4dof.yaml', 2)])
def test_an_ulp_or_a_rounded_report_past_a_limit_is_not_reported_clamped(config, index):
    arm = load_arm(CONFIG / config)
    servo_map, joint = arm.servo_map, arm.joints[index]
    cal = servo_map.calibrations[index]
    edge = cal.unclamped_units(joint.max_rad)
    # An IK result a few ulps past the limit (seen: 1.6580600000006758 + 2e-16 rad), then a
    # report of a servo sent to the range edge, a little under half a unit past it.
    step = (cal.unclamped_units(joint.max_rad + 1e-3) - edge) / 1e-3    # units per rad
    for angle in (joint.max_rad + 4e-16, joint.max_rad + 0.9 * ROUNDING_UNITS / abs(step)):
        angles = [float(a) for a in arm.home]
        angles[index] = angle
        command = servo_map.to_units(angles)
        assert command.clamped == (), f'{joint.name} at {angle!r} ({joint.max_rad!r} max)'
        assert cal.low_units <= command.units[index] <= cal.high_units


@pytest.mark.parametrize('config, index', [('so101.yaml', 3), ('arm_4dof.yaml', 2)])
def test_a_cut_beyond_half_a_unit_is_reported_and_stays_in_range(config, index):
    arm = load_arm(CONFIG / config)
    joint, cal = arm.joints[index], arm.servo_map.calibrations[index]
    step = (cal.unclamped_units(joint.max_rad + 1e-3) - cal.unclamped_units(joint.max_rad)) / 1e-3
    angles = [float(a) for a in arm.home]
    angles[index] = joint.max_rad + 1.1 * ROUNDING_UNITS / abs(step)
    command = arm.servo_map.to_units(angles)
    assert command.clamped == (joint.name,)
    assert cal.low_units <= command.units[index] <= cal.high_units
