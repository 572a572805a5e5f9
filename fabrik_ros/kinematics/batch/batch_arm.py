"""What the batch solve reads of an arm: its geometric joints, options, chain and plane offset.

The Arm facade composes the batch solve (``Arm.ik_batch`` calls it) and hands it this view of
one roll angle's chain, so the imports run one way and the batch works in geometric angles
only (the Arm turns them into joint positions).
"""

from dataclasses import dataclass

import numpy as np

from fabrik_ros.kinematics.description.joint import Joint
from fabrik_ros.kinematics.options import SolverOptions
from fabrik_ros.kinematics.single.planar_arm import PlanarArm


@dataclass(frozen=True)
class BatchArm:
    """The parts of an arm the batch solve uses, in geometric angles.

    :param joints: every joint's geometric view, config order
    :param options: the stopping rules and the default bend preference
    :param home: the home pose [rad]
    :param planar: the pitch joints as a planar chain in the arm's vertical plane
    :param lateral_m: how far that plane runs beside the yaw axis [m]
    :param tool_turn_rad: the chain's last link's turn from the last pitch link (the last
        pitch joint's geometric angle is the chain's last angle minus this)
    """

    joints: tuple[Joint, ...]
    options: SolverOptions
    home: np.ndarray
    planar: PlanarArm
    lateral_m: float = 0.0
    tool_turn_rad: float = 0.0
