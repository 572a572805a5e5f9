"""What the batch solve reads of an arm, so it takes the Arm as an argument without importing it.

The Arm facade composes the batch solve (``Arm.ik_batch`` calls it), so the batch modules type
their ``arm`` argument with this protocol instead of the Arm class: the imports run one way.
"""

from typing import Protocol

import numpy as np

from fabrik_ros.kinematics.description.joint import Joint
from fabrik_ros.kinematics.options import SolverOptions
from fabrik_ros.kinematics.single.planar_arm import PlanarArm


class BatchArm(Protocol):
    """The parts of an arm the batch solve uses (an :class:`~fabrik_ros.kinematics.Arm`)."""

    @property
    def joints(self) -> tuple[Joint, ...]:
        """Return every actuated joint, config order."""

    @property
    def options(self) -> SolverOptions:
        """Return the stopping rules and the default bend preference."""

    @property
    def home(self) -> np.ndarray:
        """Return the home pose [rad]."""

    @property
    def planar(self) -> PlanarArm:
        """Return the pitch joints as a planar chain in the arm's vertical plane."""
