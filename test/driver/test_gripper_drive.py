"""GripperDrive on ServoDriver with fake servos: the gripper named, commanded, limited, paced."""

from dataclasses import dataclass, field, replace

import pytest

from fabrik_ros.driver.gripper import GripperGoal, GripperSettings
from fabrik_ros.driver.gripper_drive import AmbiguousGripperError, gripper_axis, GripperDrive
from fabrik_ros.driver.servo_driver import ServoDriver
from test.driver.test_servo_driver import ARM, FakeOutput, Rig


@dataclass
class LimitOutput(FakeOutput):
    """Fake servos that take torque limits (a bus) or refuse them (PWM)."""

    has_limit: bool = True
    limits: list = field(default_factory=list)

    def torque_limit(self, servo, fraction):
        if self.has_limit:
            self.limits.append((servo, fraction))
        return self.has_limit

    def effort(self, servo, now_s):
        return 0.4 if self.has_limit else None


def _drive(has_limit=True):
    rig = Rig()
    rig.output = LimitOutput(rig.clock, has_limit=has_limit)
    rig.driver = ServoDriver(ARM, rig.output, speeds_rad_s=[2.0] * 5, home_move_s=1.0,
                             step_s=0.02, clock=lambda: rig.clock[0], log=rig.logs.append)
    rig.start_at(tuple(float(a) for a in ARM.home))
    rig.advance(1.5)
    rig.output.reported = None          # a board that reports nothing: the gripper as sent
    paced = []
    drive = GripperDrive(rig.driver, rig.output, ARM, gripper_axis(ARM, ''),
                         settings=GripperSettings(), clock=lambda: rig.clock[0],
                         log=rig.logs.append, after_command=lambda: paced.append(True))
    return rig, drive, paced


def _run(rig, drive, seconds):
    end = rig.clock[0] + seconds
    while rig.clock[0] < end:
        rig.advance(0.02)
        drive.tick()


def test_a_pwm_gripper_goal_is_reached_at_its_speed_and_max_effort_is_said_once():
    rig, drive, paced = _drive(has_limit=False)
    assert drive.start('a', GripperGoal(0.9, max_effort=0.5, speed=0.25)) is None
    assert paced and rig.driver.planner.target[-1] == 0.9
    _run(rig, drive, 1.0)
    assert 0.5 < rig.driver.planner.sent[-1] < 0.9     # 0.25 a second from 0.6 (home)
    _run(rig, drive, 1.0)
    [end] = drive.take_ends()
    assert end.state.reached_goal and end.state.effort == 0.0
    drive.start('b', GripperGoal(0.2, max_effort=0.3))
    said = [line.text for line in rig.logs if 'max_effort does not apply' in line.text]
    assert said == ['gripper: max_effort does not apply, the servo has no torque limit (PWM); '
                    'said once']


def test_a_bus_gripper_goal_sets_its_torque_limit_and_the_usual_speed_comes_back():
    rig, drive, _ = _drive()
    drive.start('a', GripperGoal(0.9, max_effort=0.5, speed=0.25))
    assert rig.output.limits == [(5, 0.5)]
    drive.start('b', GripperGoal(0.2))
    assert rig.output.limits == [(5, 0.5), (5, None)]
    assert rig.driver.planner._slew.speeds_rad_s[-1] == 0.5     # the PWM default again


def test_a_detached_driver_aborts_the_goal_and_refuses_the_next():
    rig, drive, _ = _drive()
    drive.start('a', GripperGoal(0.9))
    rig.driver.enable(False)
    drive.tick()
    [end] = drive.take_ends()
    assert end.message == 'the servos are detached (~/enable false)'
    assert drive.start('b', GripperGoal(0.5)) == 'the servos are detached (~/enable false)'


def test_gripper_servo_names_the_aux_servo_or_none():
    assert gripper_axis(ARM, '').name == 'gripper'
    assert gripper_axis(ARM, 'gripper').name == 'gripper'
    assert gripper_axis(ARM, 'none') is None
    with pytest.raises(ValueError) as error:
        gripper_axis(ARM, 'claw')
    assert str(error.value) == ('must name an auxiliary servo of the arm (gripper), or be '
                                'empty or none')


def test_an_empty_gripper_servo_on_an_arm_with_two_aux_servos_is_ambiguous():
    aux = ARM.servo_map.aux[0]
    servo_map = replace(ARM.servo_map, aux=(aux, replace(aux, name='wrist_light', channel=6)))
    with pytest.raises(AmbiguousGripperError) as error:
        gripper_axis(replace(ARM, servo_map=servo_map), '')
    assert 'gripper, wrist_light' in str(error.value)


def test_a_limp_gripper_moved_by_hand_is_no_stall():
    rig, drive, _ = _drive()
    rig.driver.enable(False)
    units = list(rig.driver._units(rig.driver.planner.sent))
    units[-1] = drive._axis.units(0.1)      # a hand holds the limp jaw far from its command
    rig.output.reported = tuple(units)
    _run(rig, drive, 2.0)
    assert not drive.gripper.stalled and rig.output.limits == [], rig.output.limits


def _bus_at(rig, drive, position):
    """Have the bus report the gripper standing at ``position`` (the joints where sent)."""
    units = list(rig.driver._units(rig.driver.planner.sent))
    units[-1] = drive._axis.units(position)
    rig.output.reported = tuple(units)


def test_a_gripper_detached_for_overheating_ends_its_goal_and_refuses_the_next():
    rig, drive, _ = _drive()
    drive.start('a', GripperGoal(0.9))
    _run(rig, drive, 0.1)
    rig.output.temps = (30.0,) * 5 + (70.0,)     # the gripper, sixth, above the error limit
    _run(rig, drive, 0.5)
    [end] = drive.take_ends()
    assert not end.state.reached_goal
    assert 'detached for overheating' in end.message, end.message
    assert 'detached for overheating' in drive.start('b', GripperGoal(0.5))


def test_a_bus_gripper_is_silent_when_its_link_says_so_not_when_a_report_is_late():
    rig, drive, _ = _drive()
    _bus_at(rig, drive, 0.6)
    drive.tick()
    drive.start('a', GripperGoal(0.7))
    _run(rig, drive, 0.1)
    rig.output.reported = None              # reads late: the host is starved
    rig.output.judged_silent = set()        # the bus still hears the servo
    _run(rig, drive, 1.0)
    assert drive.take_ends() == []
    rig.output.judged_silent = {5}          # the gripper is the sixth servo
    _run(rig, drive, 0.1)
    [end] = drive.take_ends()
    assert end.message.startswith('gripper servo silent for 1.'), end.message


def test_a_bus_gripper_whose_reports_pause_is_not_judged_by_its_command():
    rig, drive, _ = _drive()
    _bus_at(rig, drive, 0.6)                # it reports: its reports judge it
    drive.tick()
    drive.start('a', GripperGoal(0.7))
    _run(rig, drive, 0.1)                   # the jaw stands at 0.6: something holds it
    rig.output.reported = None              # a read late on a loaded machine
    _run(rig, drive, 0.4)                   # the command reaches 0.7 meanwhile
    assert drive.take_ends() == [] and rig.driver.planner.sent[-1] == 0.7
    _run(rig, drive, 0.2)                   # silent beyond SILENT_SERVO_ABORT_S
    [end] = drive.take_ends()
    assert not end.state.reached_goal
    assert end.message.startswith('gripper servo silent for 0.'), end.message
