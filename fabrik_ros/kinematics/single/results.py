"""What the solvers return: the pose, whether it reached, how close, how much work, and why."""

from dataclasses import dataclass
import enum
from functools import cached_property
from typing import Generic, TypeVar

import numpy as np

P = TypeVar('P')


class StopReason(enum.Enum):
    """Why a solve ended."""

    REACHED = 'reached'          # residual within tolerance
    UNREACHABLE = 'unreachable'  # target beyond the chain's reach: stretched toward it
    STALLED = 'stalled'          # an iteration stopped improving: closest pose found
    CAP = 'cap'                  # iteration cap hit before either of the above


@dataclass(frozen=True)
class ChainSolution(Generic[P]):
    """A solved general chain: joint positions and the bone directions that produced them.

    :param points: joint positions, base first, tip last (complex for 2D, Vec3 for 3D)
    :param directions: unit direction of each bone, base bone first
    :param error_m: distance from the tip to the target [m]
    """

    points: tuple[P, ...]
    directions: tuple[P, ...]
    reached: bool
    error_m: float
    iterations: int
    stop_reason: StopReason


@dataclass(frozen=True, init=False)
class IkResult:
    """An arm IK answer.

    :param joint_angles_rad: joint angles in config order [rad], always within limits, as
        plain floats (what a joint command carries); :attr:`angles_rad` as an array
    :param tool_point_m: tool point the angles reach, in the base frame [m];
        :attr:`position_m` as an array
    :param reached: True when ``residual_m`` is within the solver tolerance
    :param residual_m: distance from the tool point to the target [m]
    :param iterations: FABRIK iterations summed over every attempt
    :param stop_reason: why the chosen attempt ended
    :param approach_error_rad: for a pose target (an approach asked), the angle between the
        asked approach and the tool's axis the angles reach [rad]
        (:mod:`~fabrik_ros.kinematics.approach`); None for a position target (nothing was
        asked of the tool's direction: a number there would read as "met"). ``reached``
        speaks of the position only.
    """

    joint_angles_rad: tuple[float, ...]
    tool_point_m: tuple[float, float, float]
    reached: bool
    residual_m: float
    iterations: int
    stop_reason: StopReason
    approach_error_rad: float | None = None

    def __init__(self, joint_angles_rad: tuple[float, ...],
                 tool_point_m: tuple[float, float, float], reached: bool, residual_m: float,
                 iterations: int, stop_reason: StopReason,
                 approach_error_rad: float | None = None) -> None:
        """Keep the fields (in one step: one result is built per solve, hundreds a second)."""
        object.__setattr__(self, '__dict__', {
            'joint_angles_rad': joint_angles_rad, 'tool_point_m': tool_point_m,
            'reached': reached, 'residual_m': residual_m, 'iterations': iterations,
            'stop_reason': stop_reason, 'approach_error_rad': approach_error_rad})

    @cached_property
    def angles_rad(self) -> np.ndarray:
        """Return the joint angles as an array [rad], built on first read (nodes take floats)."""
        return np.array(self.joint_angles_rad)

    @cached_property
    def position_m(self) -> np.ndarray:
        """Return the tool point as an array [m] (built on first read)."""
        return np.array(self.tool_point_m)


@dataclass(frozen=True)
class BatchIkResult:
    """Arm IK answers for many targets: row i answers target i.

    Position targets only (the batch takes no approach), so no approach error.

    :param angles_rad: (N, n_joints) joint angles [rad], within limits
    :param positions_m: (N, 3) tool points reached [m]
    :param reached: (N,) bool, residual within the solver tolerance
    :param residual_m: (N,) distances from the tool points to the targets [m]
    :param iterations: (N,) FABRIK iterations spent on each target
    """

    angles_rad: np.ndarray
    positions_m: np.ndarray
    reached: np.ndarray
    residual_m: np.ndarray
    iterations: np.ndarray
