"""The YAML files of a MoveIt 2 configuration, as the content MoveIt reads from each.

Each function returns the mapping one file holds, in the layout a MoveIt config package
uses (MoveIt Setup Assistant's, which moveit_configs_utils loads): the launch file nests
kinematics.yaml under ``robot_description_kinematics``, joint_limits.yaml under
``robot_description_planning`` and ompl_planning.yaml under ``ompl``; moveit_controllers.yaml
is given to move_group as it is. Key names are MoveIt 2's (Jazzy, Kilted).
"""

from typing import Any

import yaml

from fabrik_ros.tools.moveit_config_robot import MoveItRobot
from fabrik_ros.tools.moveit_config_srdf import ARM_GROUP, GRIPPER_GROUP

KDL_PLUGIN = 'kdl_kinematics_plugin/KDLKinematicsPlugin'
# KDL solves position and orientation; below six joints an arm cannot reach most orientations,
# so it is asked for the position only.
FULL_POSE_JOINTS = 6
# The driver refuses a trajectory whose interpolated speed exceeds max_speed_rad_s anywhere;
# the polynomials between the planner's samples may peak a little above the sampled speeds, so
# MoveIt plans below the limit.
VELOCITY_MARGIN = 0.9
# MoveIt's time parameterisation needs an acceleration limit; the servos have none the driver
# knows, so each joint may reach its top speed in this time [s].
ACCELERATION_TIME_S = 0.25
# MoveIt scales every plan by this unless a request asks otherwise (MoveIt's own default 0.1
# is meant for industrial arms much faster than hobby servos).
DEFAULT_SCALING = 0.5
ARM_CONTROLLER = 'arm_controller'
GRIPPER_CONTROLLER = 'gripper_controller'
FOLLOW_JOINT_TRAJECTORY_NS = 'follow_joint_trajectory'
GRIPPER_COMMAND_NS = 'gripper_cmd'
SIMPLE_CONTROLLER_MANAGER = 'moveit_simple_controller_manager/MoveItSimpleControllerManager'
OMPL_PLANNER = 'ompl_interface/OMPLPlanner'
REQUEST_ADAPTERS = (
    'default_planning_request_adapters/ResolveConstraintFrames',
    'default_planning_request_adapters/ValidateWorkspaceBounds',
    'default_planning_request_adapters/CheckStartStateBounds',
    'default_planning_request_adapters/CheckStartStateCollision',
)
RESPONSE_ADAPTERS = (
    'default_planning_response_adapters/AddTimeOptimalParameterization',
    'default_planning_response_adapters/ValidateSolution',
    'default_planning_response_adapters/DisplayMotionPath',
)
PLANNER_CONFIGS: dict[str, dict[str, Any]] = {
    'RRTConnectkConfigDefault': {'type': 'geometric::RRTConnect', 'range': 0.0},
    'RRTkConfigDefault': {'type': 'geometric::RRT', 'range': 0.0, 'goal_bias': 0.05},
    'PRMkConfigDefault': {'type': 'geometric::PRM', 'max_nearest_neighbors': 10},
}


def kinematics(robot: MoveItRobot) -> dict[str, Any]:
    """Return kinematics.yaml: KDL for the arm group, position only below six joints."""
    return {ARM_GROUP: {
        'kinematics_solver': KDL_PLUGIN,
        'kinematics_solver_search_resolution': 0.005,
        'kinematics_solver_timeout': 0.05,
        'position_only_ik': len(robot.joints) < FULL_POSE_JOINTS,
    }}


def joint_limits(robot: MoveItRobot) -> dict[str, Any]:
    """Return joint_limits.yaml: the arm file's ranges and the driver's speeds, every joint."""
    limits = {joint.name: _limits(joint.min_rad, joint.max_rad, speed)
              for joint, speed in zip(robot.joints, robot.speeds_rad_s, strict=True)}
    gripper = robot.gripper
    if gripper is not None:
        limits[gripper.name] = _limits(gripper.low, gripper.high, gripper.speed)
    return {'default_velocity_scaling_factor': DEFAULT_SCALING,
            'default_acceleration_scaling_factor': DEFAULT_SCALING,
            'joint_limits': limits}


def _limits(low: float, high: float, speed: float) -> dict[str, Any]:
    velocity = speed * VELOCITY_MARGIN
    return {'min_position': float(low), 'max_position': float(high),
            'has_velocity_limits': True, 'max_velocity': velocity,
            'has_acceleration_limits': True, 'max_acceleration': velocity / ACCELERATION_TIME_S,
            'has_jerk_limits': False}


def moveit_controllers(robot: MoveItRobot) -> dict[str, Any]:
    """Return moveit_controllers.yaml: the simple controller manager on this package's servers."""
    controllers: dict[str, Any] = {ARM_CONTROLLER: {
        'type': 'FollowJointTrajectory', 'action_ns': FOLLOW_JOINT_TRAJECTORY_NS,
        'default': True, 'joints': list(robot.joint_names)}}
    if robot.gripper is not None:
        controllers[GRIPPER_CONTROLLER] = {
            'type': 'GripperCommand', 'action_ns': GRIPPER_COMMAND_NS, 'default': True,
            'joints': [robot.gripper.name]}
    return {
        'moveit_controller_manager': SIMPLE_CONTROLLER_MANAGER,
        # The simple controller manager cannot switch controllers: the servers are always up.
        'moveit_manage_controllers': False,
        'moveit_simple_controller_manager': {'controller_names': list(controllers),
                                             **controllers},
        'trajectory_execution': {
            'allowed_execution_duration_scaling': 1.2,
            'allowed_goal_duration_margin': 0.5,
            'allowed_start_tolerance': 0.01,
            'execution_duration_monitoring': True,
        },
    }


def ompl_planning(robot: MoveItRobot) -> dict[str, Any]:
    """Return ompl_planning.yaml: the OMPL pipeline and its planners for each group."""
    groups = [ARM_GROUP, *([GRIPPER_GROUP] if robot.gripper is not None else [])]
    return {
        'planning_plugins': [OMPL_PLANNER],
        'request_adapters': list(REQUEST_ADAPTERS),
        'response_adapters': list(RESPONSE_ADAPTERS),
        'planner_configs': PLANNER_CONFIGS,
        **{group: {'planner_configs': list(PLANNER_CONFIGS)} for group in groups},
    }


def yaml_text(content: dict[str, Any], comment: str) -> str:
    """Return ``content`` as YAML under a comment line (floats keep their decimal point)."""
    body = yaml.safe_dump(content, sort_keys=False, default_flow_style=False)
    return f'# {comment}\n{body}'
