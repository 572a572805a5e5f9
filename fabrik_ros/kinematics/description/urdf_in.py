"""An arm file's parameters read off a URDF chain exactly, with where each number came from.

The numbers follow the extended arm model (geometric angle = zero + direction * position):
the URDF's transforms are composed at q = 0 (urdf_chain.py), the joints sorted into yaw, pitch
and roll (urdf_family.py), and every length and angle is then a projection of those frames onto
the arm's plane. Nothing is fitted, so the arm file's forward kinematics equals the URDF's to
rounding, for every joint position.

Conventions chosen where the model leaves a choice:
- with a yaw joint, the arm frame's origin (``base_xyz_m``) is the yaw joint's origin and the
  arm's forward direction at q = 0 is the one of the two in the plane that faces the base
  link's +x (so the yaw zero lies in (-90, 90] deg); without one, ``base_xyz_m`` is the base
  link's origin and forward is +x;
- without a roll joint the last link points at the tool (``roll_axis_offset_m`` 0.0);
  with one, the last link lies along the roll axis, pointing towards the tool.
"""

from dataclasses import dataclass
import math

import numpy as np

from fabrik_ros.kinematics import JointKind
from fabrik_ros.kinematics.description.urdf_chain import ChainJoint, Matrix, urdf_chain
from fabrik_ros.kinematics.description.urdf_family import BASE_Y, BASE_Z, family_chain, FamilyChain
from fabrik_ros.kinematics.description.urdf_model import UrdfError, UrdfModel

# A range wider than a turn, or reaching past two turns, is not an arm file's (arm model).
MAX_SPAN_DEG = 360.0
MAX_POSITION_DEG = 360.0
# Below this a length is rounding noise, not geometry [m].
NOISE_M = 1e-9


@dataclass(frozen=True)
class JointParameters:
    """One actuated joint of the arm file: kind, zero and direction, positions [deg]."""

    name: str
    kind: JointKind
    zero_deg: float
    direction: int
    min_deg: float
    max_deg: float
    home_deg: float


@dataclass(frozen=True)
class ArmParameters:
    """Everything an arm file's geometry and joints hold, in metres and degrees.

    ``sources`` maps each dotted arm-file key (``geometry.tool_length_m``,
    ``joints.elbow.zero_deg``) to a phrase saying where its number came from.
    """

    robot_name: str
    base_frame: str
    tool_link: str
    joints: tuple[JointParameters, ...]
    base_xyz_m: tuple[float, float, float]
    shoulder_height_m: float
    shoulder_offset_m: float
    lateral_offset_m: float
    link_lengths_m: tuple[float, ...]
    tool_length_m: float
    roll_axis_offset_m: float
    tool_offset_m: float
    sources: dict[str, str]


@dataclass(frozen=True)
class _Plane:
    """The arm's plane at q = 0: its origin, forward and lateral unit vectors (base frame)."""

    origin: Matrix
    forward: Matrix
    lateral: Matrix

    def point(self, point: Matrix) -> complex:
        """Return a point's in-plane coordinates: along forward + i * height."""
        offset = point - self.origin
        return complex(float(offset @ self.forward), float(offset @ BASE_Z))

    def direction(self, vector: Matrix) -> complex:
        """Return a direction's in-plane coordinates."""
        return complex(float(vector @ self.forward), float(vector @ BASE_Z))

    def vector(self, in_plane: complex) -> Matrix:
        """Return the base-frame vector of in-plane coordinates."""
        return in_plane.real * self.forward + in_plane.imag * BASE_Z


def arm_parameters(model: UrdfModel, *, tool_link: str, base_link: str | None = None,
                   source: str = 'URDF') -> ArmParameters:
    """Return the arm file parameters of the chain from ``base_link`` to ``tool_link``.

    :param source: how the comments name the URDF, e.g. ``URDF so101_new_calib.urdf``
    :raises UrdfError: a link is unknown, a limit does not fit an arm file, or the chain is
        outside the family (one line naming the joint and why).
    """
    family = family_chain(urdf_chain(model, tool_link=tool_link, base_link=base_link))
    plane = _plane(family)
    return _Reader(family, plane, source, {}).arm(model)


def _plane(family: FamilyChain) -> _Plane:
    """Return the arm plane's frame at q = 0 (see the module docstring for the choice)."""
    if family.yaw is None:
        return _Plane(origin=np.zeros(3), forward=np.array([1.0, 0.0, 0.0]), lateral=BASE_Y)
    axis = family.pitches[0].axis.copy()
    axis[2] = 0.0
    lateral = axis / np.linalg.norm(axis)
    forward = np.array([lateral[1], -lateral[0], 0.0])
    if forward[0] < 0.0 or (forward[0] == 0.0 and forward[1] < 0.0):
        lateral, forward = -lateral, -forward
    return _Plane(origin=family.yaw.point, forward=forward, lateral=lateral)


@dataclass(frozen=True)
class _Tool:
    """The tool end of the chain: the last link's in-plane direction at q = 0 and the offsets."""

    direction: complex
    lateral_m: float
    length_m: float
    axis_offset_m: float = 0.0
    offset_m: float = 0.0


class _Reader:
    """Reads the geometry off the chain's frames, recording each number's source."""

    def __init__(self, family: FamilyChain, plane: _Plane, source: str,
                 sources: dict[str, str]) -> None:
        self.family = family
        self.plane = plane
        self.source = source
        self.sources = sources
        self.angles: list[tuple[ChainJoint, JointKind, float, int]] = []
        self.roll_angle: tuple[ChainJoint, JointKind, float, int] | None = None

    def note(self, key: str, what: str, first: int, last: int) -> None:
        """Record that ``key`` came from the origins of chain joints ``first``..``last``."""
        names = [j.joint.name for j in self.family.chain.joints[first:last + 1]]
        span = names[0] if len(names) == 1 else f'{names[0]} .. {names[-1]}'
        self.sources[key] = f'{what}: joint origins (xyz + rpy) {span} at q = 0, {self.source}'

    def index(self, joint: ChainJoint) -> int:
        """Return a joint's position in the chain (fixed joints included)."""
        return self.family.chain.joints.index(joint)

    def arm(self, model: UrdfModel) -> ArmParameters:
        """Return the arm file parameters."""
        family, plane = self.family, self.plane
        yaw_index = -1 if family.yaw is None else self.index(family.yaw)
        if family.yaw is not None:
            self.angles.append((family.yaw, JointKind.YAW, _yaw_zero_deg(plane),
                                _sign(float(family.yaw.axis @ BASE_Z))))
            self.note('geometry.base_xyz_m', "the yaw joint's origin", 0, yaw_index)
        else:
            self.sources['geometry.base_xyz_m'] = (
                f"the base link {family.chain.base_link}'s origin (no yaw joint)")
        points = [plane.point(p.point) for p in family.pitches]
        first = self.index(family.pitches[0])
        self.note('geometry.shoulder_height_m', 'first pitch axis height', yaw_index + 1, first)
        self.note('geometry.shoulder_offset_m', 'first pitch axis forward of the yaw axis',
                  yaw_index + 1, first)
        links = self.links(points)
        tool = self.tool(points[-1]) if family.roll is None else self.roll_tool(points[-1])
        self.pitch_angles(links, tool.direction)
        if self.roll_angle is not None:
            self.angles.append(self.roll_angle)
        joints = tuple(_joint_parameters(joint, kind, zero, direction, self.source, self.sources)
                       for joint, kind, zero, direction in self.angles)
        return ArmParameters(
            robot_name=model.name, base_frame=family.chain.base_link,
            tool_link=family.chain.tool_link, joints=joints,
            base_xyz_m=(float(plane.origin[0]), float(plane.origin[1]), float(plane.origin[2])),
            shoulder_height_m=points[0].imag, shoulder_offset_m=points[0].real,
            lateral_offset_m=tool.lateral_m, link_lengths_m=tuple(abs(v) for v in links),
            tool_length_m=tool.length_m, roll_axis_offset_m=tool.axis_offset_m,
            tool_offset_m=tool.offset_m, sources=self.sources)

    def links(self, points: list[complex]) -> list[complex]:
        """Return the in-plane vectors between consecutive pitch axes."""
        pitches = self.family.pitches
        vectors = []
        for k in range(len(points) - 1):
            vector = points[k + 1] - points[k]
            if abs(vector) < NOISE_M:
                raise UrdfError(f'joint {pitches[k + 1].joint.name!r}: its axis is the axis of '
                                f'{pitches[k].joint.name!r} (link length 0)')
            vectors.append(vector)
            self.note(f'geometry.link_lengths_m[{k}]', f'{pitches[k].joint.name} to '
                      f'{pitches[k + 1].joint.name} axis distance',
                      self.index(pitches[k]) + 1, self.index(pitches[k + 1]))
        return vectors

    @property
    def tool_span(self) -> tuple[int, int]:
        """Return the chain indices of the joints after the last pitch joint."""
        return self.index(self.family.pitches[-1]) + 1, len(self.family.chain.joints) - 1

    def tool(self, last_pitch: complex) -> _Tool:
        """Return the tool of a chain without a roll joint: the last link points at it."""
        chain, plane = self.family.chain, self.plane
        vector = plane.point(chain.tool_point) - last_pitch
        if abs(vector) < NOISE_M:
            raise UrdfError(f'tool link {chain.tool_link!r} lies on the axis of the last '
                            f'pitch joint {self.family.pitches[-1].joint.name!r}')
        for key, what in (('tool_length_m', 'last pitch axis to tool point'),
                          ('lateral_offset_m', 'tool point beside the yaw axis')):
            self.note(f'geometry.{key}', what, *self.tool_span)
        for key in ('roll_axis_offset_m', 'tool_offset_m'):
            self.sources[f'geometry.{key}'] = '0.0: no roll joint'
        self.roll_angle = None
        return _Tool(direction=vector / abs(vector), length_m=abs(vector),
                     lateral_m=float((chain.tool_point - plane.origin) @ plane.lateral))

    def roll_tool(self, last_pitch: complex) -> _Tool:
        """Return the tool of a chain ending in a roll joint: the last link is the roll axis."""
        family, plane, chain = self.family, self.plane, self.family.chain
        roll = family.roll
        assert roll is not None
        foot = roll.point + float((chain.tool_point - roll.point) @ roll.axis) * roll.axis
        along = plane.direction(roll.axis)
        along /= abs(along)
        reach = (plane.point(foot) - last_pitch) * along.conjugate()
        if reach.real < 0.0:
            along, reach = -along, -reach
        off_axis = chain.tool_point - foot
        radius = float(np.linalg.norm(off_axis))
        zero = 0.0
        if radius < NOISE_M:
            radius = 0.0
        else:
            up = plane.vector(along * 1j)
            zero = math.degrees(math.atan2(-float(off_axis @ plane.lateral), float(off_axis @ up)))
        if abs(reach) < NOISE_M and radius == 0.0:
            raise UrdfError(f'tool link {chain.tool_link!r} lies on the axis of the last pitch '
                            f'joint {family.pitches[-1].joint.name!r}')
        self.roll_angle = (roll, JointKind.ROLL, zero,
                           _sign(float(roll.axis @ plane.vector(along))))
        for key, what in (('tool_length_m',
                           "last pitch axis to the tool point's foot on the roll axis, along it"),
                          ('roll_axis_offset_m', 'roll axis beside the last pitch axis'),
                          ('tool_offset_m', 'tool point off the roll axis'),
                          ('lateral_offset_m', 'roll axis beside the yaw axis')):
            self.note(f'geometry.{key}', what, *self.tool_span)
        return _Tool(direction=along, lateral_m=float((roll.point - plane.origin) @ plane.lateral),
                     length_m=reach.real, axis_offset_m=reach.imag, offset_m=radius)

    def pitch_angles(self, links: list[complex], last: complex) -> None:
        """Append each pitch joint's zero (turn from the previous link) and direction."""
        previous = complex(1.0, 0.0)
        for pitch, link in zip(self.family.pitches, [*links, last], strict=True):
            turn = link * previous.conjugate()
            direction = -_sign(float(pitch.axis @ self.plane.lateral))
            self.angles.append((pitch, JointKind.PITCH,
                                math.degrees(math.atan2(turn.imag, turn.real)), direction))
            previous = link / abs(link)


def _yaw_zero_deg(plane: _Plane) -> float:
    """Return the yaw angle of the arm's forward direction at q = 0 [deg]."""
    return math.degrees(math.atan2(float(plane.forward[1]), float(plane.forward[0])))


def _sign(value: float) -> int:
    """Return +1 or -1."""
    return 1 if value >= 0.0 else -1


def _joint_parameters(chain_joint: ChainJoint, kind: JointKind, zero_deg: float, direction: int,
                      source: str, sources: dict[str, str]) -> JointParameters:
    """Return a joint's arm-file entry with its limits from the URDF."""
    joint = chain_joint.joint
    name = joint.name
    prefix = f'joints.{name}'
    local = ' '.join(f'{v:g}' for v in joint.axis)
    turned = ', '.join(f'{round(float(v), 6) + 0.0:g}' for v in chain_joint.axis)
    sources[f'{prefix}.zero_deg'] = (f'{kind.value} angle at position 0, from the joint origins '
                                     f'(xyz + rpy) at q = 0, {source}')
    sources[f'{prefix}.direction'] = (
        f'joint {name} <axis xyz="{local}"> is ({turned}) in the base frame at q = 0: '
        f"{'along' if direction == 1 else 'against'} the model's {kind.value} axis, {source}")
    # parse_urdf gives every revolute joint limits; only a continuous one may lack them.
    low, high = -180.0, 180.0
    limit = f'joint {name} is continuous without limits: one turn, -180 to 180'
    if joint.limits is not None:
        low, high = math.degrees(joint.limits.lower), math.degrees(joint.limits.upper)
        limit = (f'joint {name} <limit lower="{joint.limits.lower:g}" '
                 f'upper="{joint.limits.upper:g}"> rad, {source}')
    _check_range(name, low, high)
    sources[f'{prefix}.min_deg'] = sources[f'{prefix}.max_deg'] = limit
    # Home is the URDF's zero pose (the vendor's reference, usually mid-range), clamped into
    # the range when the range leaves zero out.
    home = min(max(0.0, low), high)
    sources[f'{prefix}.home_deg'] = ('position 0 (the URDF zero pose)' if home == 0.0 else
                                     'position 0 clamped into the range')
    return JointParameters(name=name, kind=kind, zero_deg=_wrap_deg(zero_deg),
                           direction=direction, min_deg=low, max_deg=high, home_deg=home)


def _check_range(name: str, low: float, high: float) -> None:
    """Refuse a joint range an arm file cannot hold."""
    if high - low > MAX_SPAN_DEG or max(abs(low), abs(high)) > MAX_POSITION_DEG:
        raise UrdfError(f'joint {name!r}: limits [{low:.6g}, {high:.6g}] deg, an arm file '
                        f'takes a range of at most {MAX_SPAN_DEG:g} deg within '
                        f'[-{MAX_POSITION_DEG:g}, {MAX_POSITION_DEG:g}]')


def _wrap_deg(angle: float) -> float:
    """Return ``angle`` wrapped into (-180, 180] [deg]."""
    wrapped = math.fmod(angle, 360.0)
    if wrapped <= -180.0:
        wrapped += 360.0
    elif wrapped > 180.0:
        wrapped -= 360.0
    return wrapped
