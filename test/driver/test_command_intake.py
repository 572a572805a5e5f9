"""CommandIntake: joint_commands as servo_driver and sim_arm take them (issue 23 shape, 24.2)."""

import math
from pathlib import Path

import pytest

from fabrik_ros.driver.arm_state_machine import LogLevel
from fabrik_ros.driver.aux_axis import aux_axes
from fabrik_ros.driver.command_intake import CommandIntake, WARN_EVERY_S
from fabrik_ros.kinematics import load_arm

ARM = load_arm(Path(__file__).parents[2] / 'config' / 'arm_6servo.yaml')
CURRENT = tuple(float(a) for a in ARM.home)


@pytest.fixture
def clock():
    return [0.0]


@pytest.fixture
def intake(clock):
    return CommandIntake(ARM.joints, aux_axes(ARM.servo_map), clock=lambda: clock[0])


def _texts(intake_result):
    return [line.text for line in intake_result.logs]


def test_named_joints_move_and_the_others_keep_their_current_target(intake):
    taken = intake.take(['elbow', 'base_yaw'], [-0.5, 0.3], CURRENT)
    assert taken.command.joints == (0.3, CURRENT[1], -0.5, *CURRENT[3:])
    assert taken.command.aux == {} and taken.logs == ()


def test_the_gripper_is_named_in_its_unit_and_clamped_to_its_range_with_the_rule(intake):
    taken = intake.take(['gripper'], [0.25], CURRENT)
    assert taken.command.joints is None and taken.command.aux == {'gripper': 0.25}
    clamped = intake.take(['gripper'], [1.5], CURRENT)
    assert clamped.command.aux == {'gripper': 1.0}
    assert _texts(clamped) == ['joint_commands: gripper = 1.5, must be within [0.0, 1.0] '
                               '(fraction of min_us 1000.0 .. max_us 2000.0); clamped to 1.0']


def test_a_message_of_unknown_names_is_refused_naming_the_closest_known_name(intake):
    taken = intake.take(['grip', 'elbo'], [0.2, 0.1], CURRENT)
    assert taken.command is None
    [line] = taken.logs
    assert line.level is LogLevel.WARN
    assert line.text == (
        "joint_commands ignored: names ['grip', 'elbo'] hold none of the joints ['base_yaw', "
        "'shoulder', 'elbow', 'wrist_pitch', 'wrist_roll'] nor the auxiliary servos "
        "['gripper']; 'grip': did you mean 'gripper'?; 'elbo': did you mean 'elbow'?")


def test_unknown_names_beside_known_ones_are_said_once_each(intake, clock):
    first = intake.take(['elbow', 'fingr'], [0.1, 0.0], CURRENT)
    assert first.command.joints[2] == 0.1
    assert _texts(first) == [
        "joint_commands: ['fingr'] not in the arm file, ignored (not one of the joints "
        "['base_yaw', 'shoulder', 'elbow', 'wrist_pitch', 'wrist_roll'] nor the auxiliary "
        "servos ['gripper']); said once a name"]
    clock[0] += 2 * WARN_EVERY_S
    assert intake.take(['elbow', 'fingr'], [0.1, 0.0], CURRENT).logs == ()
    assert 'thumb' in _texts(intake.take(['elbow', 'thumb'], [0.1, 0.0], CURRENT))[0]


def test_bad_messages_are_refused_by_cause_each_cause_throttled_on_its_own(intake, clock):
    lengths = intake.take(['elbow', 'shoulder'], [0.1], CURRENT)
    assert lengths.command is None
    assert _texts(lengths) == ['joint_commands ignored: 2 names but 1 positions (lengths must '
                               'match)']
    nan = intake.take(['elbow', 'gripper'], [math.nan, 0.4], CURRENT)
    assert nan.command.joints is None and nan.command.aux == {'gripper': 0.4}
    assert _texts(nan) == ["joint_commands ignored: positions not finite: {'elbow': nan}"]
    assert intake.take(['elbow'], [math.inf], CURRENT).logs == (), 'throttled'
    assert intake.take(['shoulder'], [1.0], CURRENT).logs == (), 'another cause: no warning'
    assert intake.take(['elbow', 'shoulder'], [0.1], CURRENT).logs == (), 'throttled'
    clock[0] += WARN_EVERY_S
    assert intake.take(['elbow', 'shoulder'], [0.1], CURRENT).logs, 'said again a period on'


def test_joint_targets_outside_the_limits_are_clamped_and_said(intake):
    taken = intake.take(['elbow'], [4.0], CURRENT)
    elbow = ARM.joints[2]
    assert taken.command.joints[2] == elbow.max_rad
    assert _texts(taken)[0].startswith('joint_commands (0.0, ') and 'outside the joint limits' \
        in _texts(taken)[0]


def test_a_bus_gripper_is_taken_in_radians_within_its_degrees(clock):
    so101 = load_arm(Path(__file__).parents[2] / 'config' / 'so101.yaml')
    intake = CommandIntake(so101.joints, aux_axes(so101.servo_map), clock=lambda: clock[0])
    low = intake.take(['gripper'], [-1.0], tuple(float(a) for a in so101.home))
    assert low.command.aux == {'gripper': pytest.approx(math.radians(-10.0))}
    assert _texts(low)[0].startswith('joint_commands: gripper = -1.0, must be within [')
    assert _texts(low)[0].endswith('(rad, min_deg -10.0 .. max_deg 100.0); clamped to '
                                   f'{math.radians(-10.0000042858)}')


def test_current_must_hold_the_joints_targets_only_whatever_the_message_names(intake):
    """Issue 34.3: sim_arm handed every servo's target (gripper included) as ``current``.

    The intake then raised from zip() on the first message naming a joint, inside sim_arm's
    callback; said at once now, for any message, naming what ``current`` must hold.
    """
    with_gripper = (*CURRENT, 0.5)
    for names in (['gripper'], ['elbow']):
        with pytest.raises(ValueError) as refused:
            intake.take(names, [0.2], with_gripper)
        assert str(refused.value) == (f'current holds {len(with_gripper)} targets, must hold '
                                      f'one per joint ({len(CURRENT)}: {list(ARM.joint_names)})')
