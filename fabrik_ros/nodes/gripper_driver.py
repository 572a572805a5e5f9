"""servo_driver's gripper: its parameters, and the gripper actions on the real servo.

The first three parameters are sim_arm's too (:func:`~fabrik_ros.nodes.gripper_actions.
declare_gripper_parameters`, same descriptions); the stall parameters are servo_driver's
only: sim_arm's gripper has nothing to stall on.
"""

from collections.abc import Callable
from dataclasses import dataclass
import time
from typing import Optional

from rclpy.node import Node

from fabrik_ros.driver.arm_state_machine import LogLine
from fabrik_ros.driver.gripper import GripperSettings
from fabrik_ros.driver.gripper_drive import GripperDrive
from fabrik_ros.driver.servo_driver import ServoDriver
from fabrik_ros.driver.servo_output import ServoOutput
from fabrik_ros.kinematics import Arm
from fabrik_ros.nodes.gripper_actions import (
    configured_gripper_axis,
    CONTROLLER_NAME,
    CONTROLLER_NAME_DOC,
    GOAL_TOLERANCE,
    GOAL_TOLERANCE_DOC,
    GOAL_TOLERANCE_RANGE,
    GripperActions,
    SERVO_DOC,
)
from fabrik_ros.nodes.ros_parameters import declare

_DEFAULTS = GripperSettings()


@dataclass(frozen=True)
class DriverGripperParameters:
    """servo_driver's gripper parameters, as declared."""

    servo: str
    controller_name: str
    settings: GripperSettings


def declare_driver_gripper_parameters(node: Node) -> DriverGripperParameters:
    """Declare servo_driver's gripper parameters and return their values."""
    servo = declare(node, 'gripper_servo', '', SERVO_DOC)
    name = declare(node, 'gripper_controller_name', CONTROLLER_NAME, CONTROLLER_NAME_DOC)
    tolerance = declare(node, 'gripper_goal_tolerance', GOAL_TOLERANCE, GOAL_TOLERANCE_DOC,
                        floats=GOAL_TOLERANCE_RANGE)
    stall_s = declare(node, 'gripper_stall_time_s', _DEFAULTS.stall_time_s, 'How long the '
                      'gripper servo must stand short of its target (moving less than 1 % of '
                      'its range) to be stalled: holding something [s]', floats=(0.05, 60.0))
    holding = declare(node, 'gripper_holding_effort', _DEFAULTS.holding_effort, 'Torque '
                      'limit of a stalled gripper servo, a fraction of its full torque, until '
                      'a command moves it away from the obstacle or a new goal starts (bus '
                      'servos; PWM servos have no torque limit)', floats=(0.0, 1.0))
    allow = declare(node, 'gripper_allow_stalling', _DEFAULTS.allow_stalling, 'A gripper '
                    'goal that stalls succeeds with stalled true (true: it holds something) '
                    'or aborts (false, the ros2_controllers default)')
    settings = GripperSettings(goal_tolerance=tolerance, stall_time_s=stall_s,
                               holding_effort=holding, allow_stalling=allow)
    return DriverGripperParameters(servo, name, settings)


def driver_gripper_actions(node: Node, driver: ServoDriver, output: ServoOutput, arm: Arm,
                           parameters: DriverGripperParameters, *,
                           log: Callable[[LogLine], None],
                           after_command: Callable[[], None] = lambda: None,
                           clock: Callable[[], float] = time.monotonic
                           ) -> Optional[tuple[GripperDrive, GripperActions]]:
    """Serve the gripper actions on servo_driver's gripper servo (None: no gripper).

    :param after_command: called after a goal commanded the gripper (the node paces its tick)

    :raises ParameterConfigError: if ``gripper_servo`` names no auxiliary servo
    """
    axis = configured_gripper_axis(node, arm, parameters.servo)
    if axis is None:
        return None
    drive = GripperDrive(driver, output, arm, axis, settings=parameters.settings, clock=clock,
                         log=log, after_command=after_command)
    actions = GripperActions(node, drive, controller_name=parameters.controller_name,
                             clock=clock)
    return drive, actions
