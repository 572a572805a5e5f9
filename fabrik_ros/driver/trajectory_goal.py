"""What a joint trajectory goal is, without ROS: the goal, its settings and a refusal.

The types mirror control_msgs/action/FollowJointTrajectory and trajectory_msgs/JointTrajectory
field for field where the arm uses them (positions only: hobby servos take a position), so the
nodes convert a message in a few lines. Times are seconds on the driver's monotonic clock,
positions in joint units (rad).
"""

from dataclasses import dataclass
import enum
import math
from typing import Optional

# Defaults for a hobby arm (the nodes' parameters take them; see docs/nodes.md):
# - The path tolerance covers what a healthy servo lags behind the sampled trajectory: a bus
#   servo's report is tens of ms old and its own loop trails the command, at 1.5 rad/s that is
#   up to about 0.1 rad. 0.25 rad (14 degrees) still catches a blocked or stalled joint.
DEFAULT_PATH_TOLERANCE_RAD = 0.25
# - The goal tolerance is the servo's deadband plus gear backlash and sag under load: 1 to 2
#   degrees on an SG90-class or STS3215 servo, so 0.05 rad (about 3 degrees).
DEFAULT_GOAL_TOLERANCE_RAD = 0.05
# - A loaded servo settles and the last report arrives within about half a second; 1 s of
#   grace after the end before the goal tolerance counts as missed.
DEFAULT_GOAL_TIME_TOLERANCE_S = 1.0

# Bounds on what a goal may hold, so that a hostile goal cannot eat a small computer: an arm
# has a handful of joints, and a MoveIt trajectory some tens to hundreds of points.
MAX_POINTS = 10_000
MAX_JOINT_NAMES = 64
MAX_NAME_LENGTH = 256


class Outcome(enum.IntEnum):
    """How a goal ended or why it was refused; the values are FollowJointTrajectory.Result's."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


@dataclass(frozen=True)
class TrajectoryPoint:
    """One point of a trajectory, for the goal's joints in the goal's order.

    :param time_from_start_s: when the point is to be reached, after the start [s]
    :param positions: one per goal joint [rad]
    :param velocities: () or one per goal joint [rad/s]
    :param accelerations: () or one per goal joint [rad/s**2]
    """

    time_from_start_s: float
    positions: tuple[float, ...]
    velocities: tuple[float, ...] = ()
    accelerations: tuple[float, ...] = ()


@dataclass(frozen=True)
class JointTolerance:
    """A goal's tolerance for one joint (the message's semantics, position only).

    :param name: the joint
    :param position: [rad]; 0 = the server's default, < 0 (-1) = no limit
    """

    name: str
    position: float


@dataclass(frozen=True)
class TrajectoryGoal:
    """A joint trajectory to execute, with its tolerances.

    :param joint_names: the joints the points give, in the points' order
    :param points: the trajectory
    :param start_s: when ``time_from_start_s`` 0 is, on the driver's clock [s]; None = now
        (a zero ``header.stamp``)
    :param path_tolerance: per joint, while the trajectory runs
    :param goal_tolerance: per joint, at the end
    :param goal_time_tolerance_s: how long after the end the joints may take to be within
        the goal tolerance [s]; 0 = the server's default, < 0 = no limit
    """

    joint_names: tuple[str, ...]
    points: tuple[TrajectoryPoint, ...]
    start_s: Optional[float] = None
    path_tolerance: tuple[JointTolerance, ...] = ()
    goal_tolerance: tuple[JointTolerance, ...] = ()
    goal_time_tolerance_s: float = 0.0


@dataclass(frozen=True)
class TrajectorySettings:
    """The server's defaults for goals that leave them at 0 (the node's parameters).

    :param path_tolerance_rad: per joint while the trajectory runs [rad]; <= 0 = not checked
        (0 is the JTC's "not enforced")
    :param goal_tolerance_rad: per joint at the end [rad]; <= 0 = not checked
    :param goal_time_tolerance_s: grace after the end to be within the goal tolerance [s];
        0 = wait as long as it takes (the JTC's ``constraints.goal_time`` 0)
    :param allow_partial_joints_goal: accept goals that name only some joints (the others
        hold at their current command)
    :raises ValueError: if a value is not finite, or the goal time tolerance is negative
    """

    path_tolerance_rad: float = DEFAULT_PATH_TOLERANCE_RAD
    goal_tolerance_rad: float = DEFAULT_GOAL_TOLERANCE_RAD
    goal_time_tolerance_s: float = DEFAULT_GOAL_TIME_TOLERANCE_S
    allow_partial_joints_goal: bool = False

    def __post_init__(self) -> None:
        for name in ('path_tolerance_rad', 'goal_tolerance_rad', 'goal_time_tolerance_s'):
            value = getattr(self, name)
            if not math.isfinite(value):
                raise ValueError(f'{name} = {value!r}, must be finite')
        if self.goal_time_tolerance_s < 0.0:
            raise ValueError(f'goal_time_tolerance_s = {self.goal_time_tolerance_s!r}, must '
                             'be >= 0.0 (0 = wait as long as it takes)')


@dataclass(frozen=True)
class Refusal:
    """Why a goal is not accepted: the result code and a message a person can act on."""

    code: Outcome
    message: str
