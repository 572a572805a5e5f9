"""A URDF document read into frozen dataclasses: the links, the joints and the root link.

Only what kinematics needs is kept (joint origins, axes and limits; no meshes, inertia or
collision). The text comes from outside (a vendor's file, a launch argument), so it is bounded
in size, parsed without a DOCTYPE (no entity expansion), and checked to describe a tree: every
joint names existing links, every link but one (the root) is the child of exactly one joint,
and every link is reachable from the root. Any breach raises :class:`UrdfError` naming the
element and the rule.
"""

from dataclasses import dataclass
import enum
import math
from xml.etree import ElementTree as ET

# A vendor URDF without meshes inlined is tens of kilobytes; a few megabytes is generous.
MAX_URDF_CHARS = 4_000_000

Triple = tuple[float, float, float]


class UrdfError(ValueError):
    """A URDF document is unreadable or breaks a rule; the message names the element."""


class UrdfJointType(enum.Enum):
    """The joint types of the URDF specification."""

    REVOLUTE = 'revolute'
    CONTINUOUS = 'continuous'
    PRISMATIC = 'prismatic'
    FIXED = 'fixed'
    FLOATING = 'floating'
    PLANAR = 'planar'


@dataclass(frozen=True)
class UrdfOrigin:
    """A joint's frame in its parent's: translation [m], fixed-axis roll-pitch-yaw [rad]."""

    xyz: Triple = (0.0, 0.0, 0.0)
    rpy: Triple = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class UrdfLimits:
    """A joint's position range [rad or m], as written in its ``<limit>`` element."""

    lower: float
    upper: float


@dataclass(frozen=True)
class UrdfJoint:
    """One ``<joint>`` of the URDF, its axis a unit vector in the joint frame.

    The axis is URDF's default ``1 0 0`` when absent, and for a fixed or floating joint
    whatever its ``<axis>`` says. ``limits`` is None for a fixed or floating joint and for a
    continuous joint whose ``<limit>`` gives no ``lower``/``upper``.
    """

    name: str
    type: UrdfJointType
    parent: str
    child: str
    origin: UrdfOrigin
    axis: Triple
    limits: UrdfLimits | None


@dataclass(frozen=True)
class UrdfModel:
    """A URDF robot: its name, links and joints in document order, and the root link."""

    name: str
    links: tuple[str, ...]
    joints: tuple[UrdfJoint, ...]
    root: str

    @property
    def movable_joint_names(self) -> tuple[str, ...]:
        """Return the names of the joints that are not fixed, in document order."""
        return tuple(j.name for j in self.joints if j.type is not UrdfJointType.FIXED)

    def joint_to(self, link: str) -> UrdfJoint | None:
        """Return the joint whose child is ``link`` (None for the root).

        :raises UrdfError: ``link`` is not a link of this robot.
        """
        if link not in self.links:
            raise UrdfError(f'link {link!r}: no such link (links: {", ".join(self.links)})')
        return next((j for j in self.joints if j.child == link), None)


def parse_urdf(text: str) -> UrdfModel:
    """Read a URDF document (xacro already expanded).

    :param text: the XML text, at most :data:`MAX_URDF_CHARS` characters.
    :return: the robot's links, joints and root.
    :raises UrdfError: the text is too long, not XML, or not a URDF tree.
    """
    if len(text) > MAX_URDF_CHARS:
        raise UrdfError(f'URDF of {len(text)} characters, at most {MAX_URDF_CHARS} are read')
    if '<!DOCTYPE' in text or '<!ENTITY' in text:
        raise UrdfError('URDF holds a DOCTYPE or ENTITY declaration, which URDF does not use')
    try:
        robot = ET.fromstring(text)
    except ET.ParseError as error:
        raise UrdfError(f'URDF is not well-formed XML: {error}') from None
    if robot.tag != 'robot':
        raise UrdfError(f'root element <{robot.tag}>, must be <robot>')
    links = _links(robot)
    joints = tuple(_joint(element, links) for element in robot.findall('joint'))
    root = _check_tree(links, joints)
    return UrdfModel(name=robot.get('name', ''), links=links, joints=joints, root=root)


def _links(robot: ET.Element) -> tuple[str, ...]:
    """Return the link names, each non-empty and unique."""
    names: list[str] = []
    for element in robot.findall('link'):
        name = element.get('name', '')
        if not name:
            raise UrdfError(f'<link> number {len(names) + 1} has no name')
        if name in names:
            raise UrdfError(f'link {name!r}: defined twice')
        names.append(name)
    if not names:
        raise UrdfError('<robot> has no <link>')
    return tuple(names)


def _joint(element: ET.Element, links: tuple[str, ...]) -> UrdfJoint:
    """Read one ``<joint>`` element."""
    name = element.get('name', '')
    if not name:
        raise UrdfError('a <joint> has no name')
    where = f'joint {name!r}'
    try:
        kind = UrdfJointType(element.get('type', ''))
    except ValueError:
        allowed = ', '.join(t.value for t in UrdfJointType)
        raise UrdfError(f'{where}: type {element.get("type")!r}, must be one of {allowed}') \
            from None
    parent = _link_ref(element, 'parent', where, links)
    child = _link_ref(element, 'child', where, links)
    origin_element = element.find('origin')
    origin = UrdfOrigin()
    if origin_element is not None:
        origin = UrdfOrigin(xyz=_triple(origin_element, 'xyz', where, (0.0, 0.0, 0.0)),
                            rpy=_triple(origin_element, 'rpy', where, (0.0, 0.0, 0.0)))
    axis_element = element.find('axis')
    axis = (1.0, 0.0, 0.0)
    # A fixed or floating joint has no axis to speak of; exporters write ``0 0 0`` there.
    if axis_element is not None and kind not in (UrdfJointType.FIXED, UrdfJointType.FLOATING):
        axis = _unit(_triple(axis_element, 'xyz', where, axis), where)
    return UrdfJoint(name=name, type=kind, parent=parent, child=child, origin=origin,
                     axis=axis, limits=_limits(element, kind, where))


def _link_ref(element: ET.Element, tag: str, where: str, links: tuple[str, ...]) -> str:
    """Return the link named by a joint's ``<parent>`` or ``<child>``, which must exist."""
    ref = element.find(tag)
    link = '' if ref is None else ref.get('link', '')
    if not link:
        raise UrdfError(f'{where}: <{tag} link="..."/> missing')
    if link not in links:
        raise UrdfError(f'{where}: {tag} link {link!r} is not a <link> of the robot')
    return link


def _triple(element: ET.Element, attribute: str, where: str, default: Triple) -> Triple:
    """Return three finite numbers from a space-separated attribute."""
    text = element.get(attribute)
    if text is None:
        return default
    try:
        values = tuple(float(v) for v in text.split())
    except ValueError:
        values = ()
    if len(values) != 3 or not all(math.isfinite(v) for v in values):
        raise UrdfError(f'{where}: <{element.tag} {attribute}="{text}">, '
                        'must be three finite numbers')
    return (values[0], values[1], values[2])


def _unit(axis: Triple, where: str) -> Triple:
    """Return ``axis`` scaled to length 1."""
    norm = math.sqrt(sum(v * v for v in axis))
    if norm < 1e-9:
        raise UrdfError(f'{where}: <axis xyz="{" ".join(map(str, axis))}"> has no direction')
    return (axis[0] / norm, axis[1] / norm, axis[2] / norm)


def _limits(element: ET.Element, kind: UrdfJointType, where: str) -> UrdfLimits | None:
    """Return the position range of a revolute, prismatic or (if given) continuous joint."""
    if kind not in (UrdfJointType.REVOLUTE, UrdfJointType.PRISMATIC,
                    UrdfJointType.CONTINUOUS):
        return None
    limit = element.find('limit')
    if limit is None:
        if kind is UrdfJointType.CONTINUOUS:
            return None
        raise UrdfError(f'{where}: a {kind.value} joint needs a <limit> element')
    if kind is UrdfJointType.CONTINUOUS and limit.get('lower') is None \
            and limit.get('upper') is None:
        return None
    lower = _number(limit, 'lower', where)
    upper = _number(limit, 'upper', where)
    if lower > upper:
        raise UrdfError(f'{where}: <limit lower="{lower}" upper="{upper}">, '
                        'lower must not exceed upper')
    return UrdfLimits(lower=lower, upper=upper)


def _number(element: ET.Element, attribute: str, where: str) -> float:
    """Return a finite number attribute (URDF's default for a limit bound is 0)."""
    text = element.get(attribute, '0')
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise UrdfError(f'{where}: <{element.tag} {attribute}="{text}">, must be a finite number')
    return value


def _check_tree(links: tuple[str, ...], joints: tuple[UrdfJoint, ...]) -> str:
    """Return the root link after checking the joints make one tree over all the links."""
    parent_of: dict[str, str] = {}
    children: dict[str, list[str]] = {}
    names: set[str] = set()
    for joint in joints:
        if joint.name in names:
            raise UrdfError(f'joint {joint.name!r}: defined twice')
        names.add(joint.name)
        if joint.child in parent_of:
            raise UrdfError(f'joint {joint.name!r}: link {joint.child!r} already has parent '
                            f'joint {parent_of[joint.child]!r}; a URDF is a tree')
        parent_of[joint.child] = joint.name
        children.setdefault(joint.parent, []).append(joint.child)
    roots = [link for link in links if link not in parent_of]
    if len(roots) != 1:
        raise UrdfError(f'links without a parent joint: {roots}; a URDF has exactly one root')
    reached = {roots[0]}
    frontier = [roots[0]]
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in reached:
                reached.add(child)
                frontier.append(child)
    unreached = [link for link in links if link not in reached]
    if unreached:
        raise UrdfError(f'links {unreached} are not reachable from the root {roots[0]!r} '
                        '(their joints form a loop)')
    return roots[0]
