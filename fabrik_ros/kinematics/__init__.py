"""Pure kinematics core: arm description, constrained FABRIK, servo map, URDF (no rclpy)."""

from fabrik_ros.kinematics.arm import Arm, load_arm
from fabrik_ros.kinematics.description.count_calibration import CountAuxServo, CountCalibration
from fabrik_ros.kinematics.description.joint import Joint, JointKind, Link
from fabrik_ros.kinematics.description.servo_map import (
    AuxServo,
    ServoCalibration,
    ServoCommand,
    ServoMap,
)
from fabrik_ros.kinematics.errors import ArmConfigError, SolverOptionsError, TargetError
from fabrik_ros.kinematics.options import Bend, SolverOptions
from fabrik_ros.kinematics.single.arm_ik import solve_planar_chain
from fabrik_ros.kinematics.single.chain import Chain, planar_angles, planar_points
from fabrik_ros.kinematics.single.constraints import FREE, Hinge2D, Hinge3D
from fabrik_ros.kinematics.single.fabrik import FabrikSolver
from fabrik_ros.kinematics.single.results import BatchIkResult, ChainSolution, IkResult, StopReason
from fabrik_ros.kinematics.vec3 import Vec3

__all__ = [
    'Arm', 'ArmConfigError', 'AuxServo', 'BatchIkResult', 'Bend', 'Chain', 'ChainSolution',
    'CountAuxServo', 'CountCalibration',
    'FabrikSolver', 'FREE', 'Hinge2D', 'Hinge3D', 'IkResult', 'Joint', 'JointKind', 'Link',
    'load_arm', 'planar_angles', 'planar_points', 'ServoCalibration', 'ServoCommand',
    'ServoMap', 'solve_planar_chain', 'SolverOptions', 'SolverOptionsError', 'StopReason',
    'TargetError', 'Vec3',
]
