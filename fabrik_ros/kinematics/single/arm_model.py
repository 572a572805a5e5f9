"""The arm as the solvers see it: geometric angles, one planar chain per roll, the offsets.

Joint positions (the arm file's, the topics', a vendor URDF's) become the solvers' geometric
angles through each joint's zero and direction (:meth:`Joint.geometric`). In geometric angles
each pitch joint turns its link counter-clockwise from the previous one in the arm's vertical
plane, so the pitch joints form one planar chain from the shoulder (``shoulder_offset_m``
forward of the yaw axis, ``shoulder_height_m`` up) to the tool point. A tool point off the roll
axis moves with the roll: its part in the plane lengthens and turns the chain's last link, its
part along the pitch axes shifts the plane sideways. So the chain is built for one roll angle
at a time (:meth:`ArmModel.plane_for`); without a tool offset there is one chain.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
import math
from typing import NamedTuple

import numpy as np

from fabrik_ros.kinematics.approach import in_base
from fabrik_ros.kinematics.description.joint import Joint, JointKind
from fabrik_ros.kinematics.description.offsets import Offsets
from fabrik_ros.kinematics.elementwise import phase
from fabrik_ros.kinematics.single.chain import Chain
from fabrik_ros.kinematics.single.constraints import Hinge2D
from fabrik_ros.kinematics.single.planar_arm import PlanarArm

_PLANES_KEPT = 64
"""Roll angles whose chains an ArmModel keeps (a stream keeps one roll; a pause may bring a
new one from the joint states)."""


class RollPlane(NamedTuple):
    """The planar chain of the pitch joints and tool for one roll angle.

    :param planar: the chain, its last link from the last pitch axis to the tool point
    :param tool_turn_rad: that last link's turn from the last pitch link's direction (the
        geometric angle of the last pitch joint is the chain's last angle minus this)
    :param lateral_m: the tool point's distance from the yaw axis along the pitch axes
    """

    planar: PlanarArm
    tool_turn_rad: float
    lateral_m: float


@dataclass(frozen=True)
class ArmModel:
    """The geometry of an arm in geometric angles.

    :param joints: every joint's geometric view (:meth:`Joint.geometric_view`), config order
    :param shoulder: the first pitch axis in the plane, forward + i up from the base point [m]
    :param lengths: the distances between consecutive pitch axes [m]
    :param tool_length_m: from the last pitch axis to the tool point's foot on the roll axis
    :param offsets: base point, lateral, roll axis and tool offsets
    """

    joints: tuple[Joint, ...]
    shoulder: complex
    lengths: tuple[float, ...]
    tool_length_m: float
    offsets: Offsets
    _planes: dict[float, RollPlane] = field(default_factory=dict, init=False, repr=False,
                                            compare=False, hash=False)

    @cached_property
    def yaw(self) -> Joint | None:
        """Return the yaw joint, or None for an arm that does not turn."""
        return self.joints[0] if self.joints[0].kind is JointKind.YAW else None

    @cached_property
    def pitch_index(self) -> tuple[int, ...]:
        """Return the config indices of the pitch joints."""
        return tuple(i for i, j in enumerate(self.joints) if j.kind is JointKind.PITCH)

    @cached_property
    def roll_index(self) -> int | None:
        """Return the config index of the roll joint that carries the tool, or None."""
        rolls = [i for i, j in enumerate(self.joints) if j.kind is JointKind.ROLL]
        return rolls[0] if rolls else None

    @property
    def roll_moves_tool(self) -> bool:
        """Return True when turning the roll joint moves the tool point."""
        return self.roll_index is not None and self.offsets.tool_offset_m != 0.0

    @cached_property
    def home(self) -> tuple[float, ...]:
        """Return the home pose in geometric angles [rad]."""
        return tuple(j.home_rad for j in self.joints)

    def roll_of(self, angles: Sequence[float]) -> float:
        """Return the roll angle the chain depends on (0.0 when it does not) [rad]."""
        return float(angles[self.roll_index]) if self.roll_moves_tool else 0.0  # type: ignore

    def tool_vector(self, roll_rad: float) -> complex:
        """Return the tool point from the last pitch axis, in the last pitch link's frame."""
        offsets = self.offsets
        across = offsets.roll_axis_offset_m + offsets.tool_offset_m * math.cos(roll_rad)
        return complex(self.tool_length_m, across)

    def lateral_m(self, roll_rad: float) -> float:
        """Return the tool point's distance from the yaw axis along the pitch axes [m]."""
        return self.offsets.lateral_offset_m - self.offsets.tool_offset_m * math.sin(roll_rad)

    def plane_for(self, roll_rad: float) -> RollPlane:
        """Return the planar chain and lateral offset the arm has at ``roll_rad``."""
        plane = self._planes.get(roll_rad)
        if plane is None:
            if len(self._planes) >= _PLANES_KEPT:
                self._planes.clear()
            plane = self._planes[roll_rad] = self._build_plane(roll_rad)
        return plane

    def _build_plane(self, roll_rad: float) -> RollPlane:
        tool = self.tool_vector(roll_rad)
        turn = phase(tool)
        pitch = [self.joints[i] for i in self.pitch_index]
        hinges = [Hinge2D(j.min_rad, j.max_rad) for j in pitch[:-1]]
        hinges.append(Hinge2D(pitch[-1].min_rad + turn, pitch[-1].max_rad + turn))
        chain = Chain(self.shoulder, 1 + 0j, (*self.lengths, abs(tool)), tuple(hinges))
        return RollPlane(shared_planar(chain), turn, self.lateral_m(roll_rad))

    def to_base(self, along: float, lateral: float, height: float,
                yaw_rad: float) -> tuple[float, float, float]:
        """Return a point of the plane at ``yaw_rad`` in the base frame [m]."""
        cos, sin = math.cos(yaw_rad), math.sin(yaw_rad)
        x, y, z = self.offsets.base_xyz_m
        return (x + along * cos - lateral * sin, y + along * sin + lateral * cos, z + height)

    def fk(self, angles: Sequence[float]) -> np.ndarray:
        """Return the (n_joints + 1, 3) joint positions [m] for geometric angles [rad].

        A yaw joint sits at the base point, a pitch joint on its axis in the plane, a roll
        joint where its axis passes nearest the last pitch axis; the last row is the tool.
        """
        yaw = float(angles[0]) if self.yaw is not None else 0.0
        roll = float(angles[self.roll_index]) if self.roll_index is not None else 0.0
        points, direction = self._pitch_points([angles[i] for i in self.pitch_index])
        wrist = points[-1]
        foot = wrist + direction * 1j * self.offsets.roll_axis_offset_m
        tip = wrist + direction * self.tool_vector(roll)
        lateral = self.offsets.lateral_offset_m
        rows = []
        pitch_seen = 0
        for joint in self.joints:
            if joint.kind is JointKind.YAW:
                rows.append(self.to_base(0.0, 0.0, 0.0, yaw))
            elif joint.kind is JointKind.PITCH:
                point = points[pitch_seen]
                pitch_seen += 1
                rows.append(self.to_base(point.real, lateral, point.imag, yaw))
            else:
                rows.append(self.to_base(foot.real, lateral, foot.imag, yaw))
        rows.append(self.to_base(tip.real, self.lateral_m(roll), tip.imag, yaw))
        return np.array(rows)

    def tool_point(self, angles: Sequence[float]) -> tuple[float, float, float]:
        """Return the tool point [m] of geometric angles (the last row of :meth:`fk`)."""
        yaw = float(angles[0]) if self.yaw is not None else 0.0
        roll = float(angles[self.roll_index]) if self.roll_index is not None else 0.0
        points, direction = self._pitch_points([angles[i] for i in self.pitch_index])
        tip = points[-1] + direction * self.tool_vector(roll)
        return self.to_base(tip.real, self.lateral_m(roll), tip.imag, yaw)

    def tool_axis(self, angles: Sequence[float]) -> tuple[float, float, float]:
        """Return the tool's axis (D_n: the roll axis, else the last link) of geometric angles.

        A unit direction in the base frame, in the arm's vertical plane: the pitches turn it
        within the plane, a roll turns about it (:mod:`fabrik_ros.kinematics.approach`).
        """
        yaw = float(angles[0]) if self.yaw is not None else 0.0
        pitch = math.fsum(float(angles[i]) for i in self.pitch_index)
        return in_base(yaw, complex(math.cos(pitch), math.sin(pitch)))

    def _pitch_points(self, pitches: Sequence[float]) -> tuple[list[complex], complex]:
        """Return the pitch axes' points in the plane and the last pitch link's direction."""
        point, direction = self.shoulder, 1 + 0j
        points = [point]
        for step, angle in enumerate(pitches):
            direction = direction * complex(math.cos(angle), math.sin(angle))
            if step < len(self.lengths):
                point = point + self.lengths[step] * direction
                points.append(point)
        return points, direction


@lru_cache(maxsize=256)
def shared_planar(chain: Chain[complex]) -> PlanarArm:
    """Return one PlanarArm per chain, so arm variants share its lazily built tables."""
    return PlanarArm(chain)
