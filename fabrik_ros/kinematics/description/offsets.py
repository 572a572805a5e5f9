"""Where a real arm's axes sit off the ideal chain: its base, shoulder, plane and tool offsets."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Offsets:
    """The offsets of an arm from the ideal chain of axes through one vertical line [m].

    Vendor arms are rarely ideal: the SO-101's shoulder sits 30 mm forward of its yaw axis and
    its tool point 8 mm off its roll axis; a URDF's base link is rarely where the yaw axis
    meets the floor. Every field is 0.0 for the ideal arm, so the geometry of an older arm file
    is unchanged.

    :param base_xyz_m: the yaw joint's origin (a point on the yaw axis) in the base frame
    :param shoulder_offset_m: the first pitch axis is this far forward of the yaw axis
    :param lateral_offset_m: the arm's plane is this far from the yaw axis, along the pitch
        axes (+y at yaw 0)
    :param roll_axis_offset_m: the roll axis passes this far from the last pitch axis, in the
        plane, on the side the last link lifts toward
    :param tool_offset_m: the tool point is this far from the roll axis (needs a roll joint)
    """

    base_xyz_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    shoulder_offset_m: float = 0.0
    lateral_offset_m: float = 0.0
    roll_axis_offset_m: float = 0.0
    tool_offset_m: float = 0.0
