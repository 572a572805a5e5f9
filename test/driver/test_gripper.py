"""The gripper's rules without ROS: reached, stalled, preempted, canceled, efforts, ranges."""

from dataclasses import dataclass
import math
from typing import Optional

from hypothesis import given
from hypothesis import strategies as st
import pytest

from fabrik_ros.driver.gripper import (
    effort_fraction,
    Ending,
    Gripper,
    GripperGoal,
    GripperSettings,
)

SETTINGS = GripperSettings(goal_tolerance=0.02, stall_time_s=0.5, holding_effort=0.3)
STEP_S = 0.02


@dataclass
class Jaw:
    """A servo that follows its target at a speed and stops at an object (None: nothing)."""

    gripper: Gripper
    position: float = 0.0
    commanded: float = 0.0
    speed: float = 1.0
    obstacle: Optional[float] = None
    measured: bool = True
    now: float = 0.0
    steps: Optional[float] = None   # the driver's speed limit: sent walks to the target at it
    sent: Optional[float] = None

    def command(self, target: float) -> None:
        self.commanded = target

    def run(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end:
            target = self.gripper.take_target()
            if target is not None:
                self.commanded = target
            self.now += STEP_S
            step = self.speed * STEP_S
            sent = self.commanded if self.sent is None else self.sent
            if self.steps is not None:
                gap = self.commanded - sent
                sent += math.copysign(min(abs(gap), self.steps * STEP_S), gap)
            self.sent = sent if self.steps is not None else None
            goal = sent
            if (self.obstacle is not None
                    and self.position <= self.obstacle < goal):   # the object lies above
                goal = self.obstacle
            delta = goal - self.position
            self.position = goal if abs(delta) <= step else self.position + math.copysign(
                step, delta)
            seen = self.position if self.measured else self.commanded
            self.gripper.update(self.now, commanded=self.commanded, sent=sent,
                                position=seen,
                                measured=self.measured, effort=0.5 if self.measured else None)


def jaw(settings: GripperSettings = SETTINGS, **options) -> Jaw:
    return Jaw(Gripper('gripper', -0.5, 1.5, unit='rad', settings=settings), **options)


def test_a_goal_within_reach_succeeds_with_reached_goal():
    j = jaw()
    assert j.gripper.start('a', GripperGoal(1.0), now_s=j.now) is None
    j.run(2.0)
    [end] = j.gripper.take_ends()
    assert (end.goal_id, end.ending) == ('a', Ending.SUCCEEDED)
    assert end.state.reached_goal and not end.state.stalled
    assert abs(end.state.position - 1.0) <= SETTINGS.goal_tolerance
    assert j.gripper.feedback() is None


def test_closing_on_an_object_stalls_and_lowers_the_torque_limit_to_the_holding_effort():
    j = jaw(obstacle=0.4)
    j.gripper.start('close', GripperGoal(1.0), now_s=j.now)
    assert j.gripper.torque_limit is None
    j.run(0.6)
    assert not j.gripper.take_ends() and j.gripper.torque_limit is None
    j.run(1.0)
    [end] = j.gripper.take_ends()
    assert end.ending is Ending.SUCCEEDED
    assert end.state.stalled and not end.state.reached_goal
    assert end.state.position == pytest.approx(0.4)
    assert end.state.effort == 0.5
    assert j.gripper.torque_limit == SETTINGS.holding_effort
    assert 'stalled at 0.4' in end.message


def test_without_allow_stalling_a_stalled_goal_aborts():
    settings = GripperSettings(allow_stalling=False)
    j = jaw(settings, obstacle=0.4)
    j.gripper.start('close', GripperGoal(1.0), now_s=j.now)
    j.run(2.0)
    [end] = j.gripper.take_ends()
    assert end.ending is Ending.ABORTED and end.state.stalled


def test_a_stall_takes_the_stall_time_of_standing_still():
    j = jaw(obstacle=0.1)
    j.gripper.start('close', GripperGoal(1.0), now_s=j.now)
    j.run(0.1 + SETTINGS.stall_time_s - 3 * STEP_S)
    assert not j.gripper.stalled
    j.run(4 * STEP_S)
    assert j.gripper.stalled


def test_a_new_goal_replaces_the_running_one_which_ends_aborted():
    j = jaw()
    j.gripper.start('first', GripperGoal(1.0), now_s=j.now)
    j.run(0.2)
    j.gripper.start('second', GripperGoal(0.0), now_s=j.now)
    j.run(1.0)
    first, second = j.gripper.take_ends()
    assert (first.goal_id, first.ending) == ('first', Ending.ABORTED)
    assert first.message == 'replaced by a newer goal'
    assert (second.goal_id, second.ending) == ('second', Ending.SUCCEEDED)


def test_a_cancel_holds_where_the_gripper_stands():
    j = jaw()
    j.gripper.start('a', GripperGoal(1.0), now_s=j.now)
    j.run(0.3)
    assert not j.gripper.cancel('other', position=j.position)
    assert j.gripper.cancel('a', position=j.position)
    held = j.position
    j.run(0.5)
    [end] = j.gripper.take_ends()
    assert end.ending is Ending.CANCELED
    assert j.commanded == held and j.position == held


def test_abort_ends_the_goal_with_the_reason():
    j = jaw()
    j.gripper.start('a', GripperGoal(1.0), now_s=j.now)
    j.run(0.1)
    j.gripper.abort('the servos are detached (~/enable false)')
    [end] = j.gripper.take_ends()
    assert (end.ending, end.message) == (Ending.ABORTED,
                                         'the servos are detached (~/enable false)')


def test_a_joint_command_moving_the_gripper_elsewhere_aborts_the_goal():
    j = jaw()
    j.gripper.start('a', GripperGoal(1.0), now_s=j.now)
    j.run(0.1)
    j.command(0.2)
    j.run(0.1)
    [end] = j.gripper.take_ends()
    assert end.ending is Ending.ABORTED and 'joint_commands' in end.message


def test_a_gripper_without_measured_positions_never_stalls():
    j = jaw(obstacle=0.4, measured=False)
    j.gripper.start('a', GripperGoal(1.0), now_s=j.now)
    j.run(2.0)
    [end] = j.gripper.take_ends()
    assert end.ending is Ending.SUCCEEDED and end.state.reached_goal
    assert end.state.effort == 0.0


def test_stall_protection_holds_a_joint_command_until_one_moves_away_from_the_obstacle():
    j = jaw(obstacle=0.4)
    j.command(1.0)
    j.run(1.5)
    assert j.gripper.stalled and j.gripper.torque_limit == SETTINGS.holding_effort
    j.command(1.2)                      # further into the object: still holding
    j.run(0.2)
    assert j.gripper.torque_limit == SETTINGS.holding_effort
    j.command(0.1)                      # away from it: the full torque again
    j.run(0.1)
    assert not j.gripper.stalled and j.gripper.torque_limit is None


def test_a_new_goal_ends_the_stall_protection_with_its_own_effort():
    j = jaw(obstacle=0.4)
    j.command(1.0)
    j.run(1.5)
    assert j.gripper.stalled
    j.gripper.start('open', GripperGoal(0.0, max_effort=0.6), now_s=j.now)
    assert not j.gripper.stalled and j.gripper.torque_limit == 0.6
    j.run(1.0)
    [end] = j.gripper.take_ends()
    assert end.state.reached_goal


@given(st.floats(-2.0, 3.0), st.floats(0.0, 1.0))
def test_the_stalled_limit_is_the_holding_effort_never_above_the_goals(max_effort, holding):
    settings = GripperSettings(holding_effort=holding)
    j = jaw(settings, obstacle=0.4)
    j.gripper.start('a', GripperGoal(1.0, max_effort=max_effort), now_s=j.now)
    goal_limit = effort_fraction(max_effort)
    assert j.gripper.torque_limit == goal_limit
    j.run(1.5)
    assert j.gripper.stalled
    assert j.gripper.torque_limit == min(holding, 1.0 if goal_limit is None else goal_limit)


def test_effort_fractions_are_the_share_of_full_torque():
    assert effort_fraction(0.0) is None and effort_fraction(-1.0) is None
    assert effort_fraction(0.25) == 0.25
    assert effort_fraction(1.0) is None and effort_fraction(40.0) is None


@pytest.mark.parametrize('goal, words', [
    (GripperGoal(1.6), 'position 1.6 outside its range [-0.5, 1.5] (rad)'),
    (GripperGoal(-0.6), 'position -0.6 outside its range [-0.5, 1.5] (rad)'),
    (GripperGoal(math.nan), 'position = nan, must be finite'),
    (GripperGoal(0.5, max_effort=math.inf), 'max_effort = inf, must be finite'),
    (GripperGoal(0.5, speed=-1.0), 'velocity = -1.0, must be finite and >= 0'),
])
def test_a_goal_outside_the_range_or_not_finite_is_refused_naming_it(goal, words):
    j = jaw()
    refusal = j.gripper.start('a', goal, now_s=0.0)
    assert refusal == f'gripper: {words}'
    assert j.gripper.active_goal is None and j.gripper.take_target() is None


def test_a_goals_velocity_is_its_speed_and_zero_means_the_usual():
    j = jaw()
    j.gripper.start('a', GripperGoal(1.0, speed=0.2), now_s=0.0)
    assert j.gripper.speed == 0.2
    j.gripper.start('b', GripperGoal(1.0, speed=0.0), now_s=0.0)
    assert j.gripper.speed is None


@pytest.mark.parametrize('field, value', [('goal_tolerance', 0.0), ('stall_time_s', -1.0),
                                          ('holding_effort', 1.5),
                                          ('goal_tolerance', math.nan)])
def test_settings_outside_their_rules_are_refused(field, value):
    with pytest.raises(ValueError) as error:
        GripperSettings(**{field: value})
    assert str(error.value).startswith(f'{field} = ')


def test_a_servo_still_waiting_for_its_steps_is_not_stalled():
    """The driver holds a goal back (a move home under way): the servo stands where it was sent."""
    gripper = Gripper('gripper', -0.5, 1.5, unit='rad', settings=SETTINGS)
    gripper.start('a', GripperGoal(1.0), now_s=0.0)
    gripper.take_target()
    for tick in range(100):
        gripper.update(tick * STEP_S, commanded=1.0, sent=0.0, position=0.0, measured=True,
                       effort=None)
    assert not gripper.stalled and gripper.active_goal == 'a'
    for tick in range(100, 140):        # its steps come, it does not follow: stalled
        gripper.update(tick * STEP_S, commanded=1.0, sent=0.5, position=0.0, measured=True,
                       effort=None)
    assert gripper.stalled


def test_opening_after_a_stall_is_not_a_stall_while_the_steps_come_back_from_the_squeeze():
    # The driver's steps start from the target the gripper squeezed toward (1.2), beyond
    # where it stopped (0.4): they come back past it before the jaw moves.
    j = jaw(obstacle=0.4, steps=1.0, speed=5.0)
    j.gripper.start('close', GripperGoal(1.2), now_s=j.now)
    j.run(2.5)
    [closed] = j.gripper.take_ends()
    assert closed.state.stalled
    j.gripper.start('open', GripperGoal(0.0), now_s=j.now)
    j.run(2.0)
    [opened] = j.gripper.take_ends()
    assert opened.state.reached_goal and not opened.state.stalled, opened
    assert j.position == pytest.approx(0.0)
