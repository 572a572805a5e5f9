"""The tests' own URDF writer: random arms of the family, built in the base frame, written as URDF.

An arm is first laid out in the base frame at q = 0 (the yaw axis, the pitch axes, the roll
axis, the tool point), then every joint gets a frame of random orientation holding its axis,
and each ``<origin>`` is that frame seen from its parent's, as xyz + rpy. So a URDF written
here has tilted frames, axes such as ``0.6 0 -0.8`` and fixed joints in between, yet stays in
the family. Nothing here comes from the package under test.
"""

from dataclasses import dataclass, field
import math

import numpy as np

Z = np.array([0.0, 0.0, 1.0])


@dataclass
class UrdfJointSpec:
    """One joint laid out in the base frame at q = 0."""

    name: str
    type: str
    point: np.ndarray
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    limits: tuple[float, float] | None = None


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """Return a uniformly random rotation matrix."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def frame_holding(axis_world: np.ndarray, axis_local: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
    """Return a random rotation R with R @ axis_local == axis_world (both unit vectors)."""
    def basis(a: np.ndarray, spin: float) -> np.ndarray:
        helper = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        u = np.cross(a, helper)
        u /= np.linalg.norm(u)
        v = np.cross(a, u)
        u, v = math.cos(spin) * u + math.sin(spin) * v, -math.sin(spin) * u + math.cos(spin) * v
        return np.column_stack([u, v, a])
    return basis(axis_world, rng.uniform(-math.pi, math.pi)) @ basis(axis_local, 0.0).T


def rpy_of(rotation: np.ndarray) -> tuple[float, float, float]:
    """Return URDF's fixed-axis roll, pitch, yaw of R = Rz(yaw) Ry(pitch) Rx(roll)."""
    pitch = math.asin(max(-1.0, min(1.0, -rotation[2, 0])))
    roll = math.atan2(rotation[2, 1], rotation[2, 2])
    yaw = math.atan2(rotation[1, 0], rotation[0, 0])
    return roll, pitch, yaw


def local_axis(rng: np.random.Generator) -> np.ndarray:
    """Return how a URDF writes a joint axis in its own frame: a signed unit axis or any."""
    choices = [np.array(v, dtype=float) for v in
               ((1, 0, 0), (0, 1, 0), (0, 0, 1), (-1, 0, 0), (0, -1, 0), (0, 0, -1))]
    if rng.random() < 0.3:
        axis = rng.normal(size=3)
        return axis / np.linalg.norm(axis)
    return choices[rng.integers(len(choices))]


def urdf_text(joints: list[UrdfJointSpec], rng: np.random.Generator, *,
              name: str = 'random_arm', tool_link: str = 'tool') -> str:
    """Return the URDF of a serial chain ``base`` -> ... -> ``tool_link``.

    The joints are written in a shuffled order, with a spare link off the chain.
    """
    rotation, position = np.eye(3), np.zeros(3)
    parent = 'base'
    links = ['base']
    elements = []
    for index, joint in enumerate(joints):
        local = local_axis(rng)
        frame = frame_holding(joint.axis / np.linalg.norm(joint.axis), local, rng)
        xyz = rotation.T @ (joint.point - position)
        rpy = rpy_of(rotation.T @ frame)
        child = tool_link if index == len(joints) - 1 else f'link_{index}'
        links.append(child)
        elements.append(_joint_xml(joint, parent, child, xyz, rpy, local))
        rotation, position, parent = frame, joint.point, child
    elements.append(_joint_xml(UrdfJointSpec('spare_joint', 'fixed', np.zeros(3)), 'base',
                               'spare', np.array([0.01, 0.02, 0.03]), (0.1, 0.2, 0.3), Z))
    links.append('spare')
    order = rng.permutation(len(elements))
    body = [f'  <link name="{link}"/>' for link in links]
    body += [elements[i] for i in order]
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n' + '\n'.join(body) + '\n</robot>\n'


def _joint_xml(joint: UrdfJointSpec, parent: str, child: str, xyz: np.ndarray,
               rpy: tuple[float, float, float], axis: np.ndarray) -> str:
    """Return one <joint> element."""
    def numbers(values) -> str:
        return ' '.join(repr(float(v)) for v in values)
    lines = [f'  <joint name="{joint.name}" type="{joint.type}">',
             f'    <parent link="{parent}"/>', f'    <child link="{child}"/>',
             f'    <origin xyz="{numbers(xyz)}" rpy="{numbers(rpy)}"/>']
    if joint.type != 'fixed':
        lines.append(f'    <axis xyz="{numbers(axis)}"/>')
    if joint.limits is not None:
        lines.append(f'    <limit lower="{joint.limits[0]!r}" upper="{joint.limits[1]!r}" '
                     'effort="1.0" velocity="1.0"/>')
    lines.append('  </joint>')
    return '\n'.join(lines)


def random_limits(rng: np.random.Generator, *,
                  continuous: bool = True) -> tuple[float, float] | None:
    """Return a random range anywhere within two turns, or None (a continuous joint)."""
    if continuous and rng.random() < 0.1:
        return None
    span = rng.uniform(0.5, 2 * math.pi if continuous else 1.9 * math.pi)
    lower = rng.uniform(-2 * math.pi, 2 * math.pi - span)
    return lower, lower + span


def random_family_arm(rng: np.random.Generator, *, yaw: bool, roll: bool, pitches: int,
                      continuous: bool = True) -> list[UrdfJointSpec]:
    """Return a random arm of the family laid out in the base frame, fixed joints included.

    :param continuous: whether joints may be continuous or span up to a whole turn
    """
    joints = [UrdfJointSpec('mount', 'fixed', rng.uniform(-0.2, 0.2, 3))]
    origin = rng.uniform(-0.2, 0.2, 3)
    heading = rng.uniform(-math.pi, math.pi) if yaw else 0.0
    forward = np.array([math.cos(heading), math.sin(heading), 0.0])
    lateral = np.array([-math.sin(heading), math.cos(heading), 0.0])
    if yaw:
        joints.append(_revolute('yaw', origin, Z * rng.choice([-1.0, 1.0]), rng, continuous))

    def in_plane(along: float, height: float, side: float) -> np.ndarray:
        return origin + along * forward + side * lateral + height * Z

    for k in range(pitches):
        point = in_plane(rng.uniform(-0.15, 0.15), rng.uniform(-0.15, 0.15),
                         rng.uniform(-0.05, 0.05))
        if k and rng.random() < 0.3:  # a fixed joint halfway, with a frame of its own
            joints.append(UrdfJointSpec(f'bracket_{k}', 'fixed', rng.uniform(-0.2, 0.2, 3)))
        joints.append(_revolute(f'pitch_{k}', point, lateral * rng.choice([-1.0, 1.0]), rng,
                                continuous))
    side = rng.uniform(-0.05, 0.05)
    if roll:
        angle = rng.uniform(-math.pi, math.pi)
        axis = (math.cos(angle) * forward + math.sin(angle) * Z) * rng.choice([-1.0, 1.0])
        joints.append(_revolute('roll', in_plane(rng.uniform(-0.1, 0.1),
                                                 rng.uniform(-0.1, 0.1), side), axis, rng,
                                continuous))
    else:
        side += rng.uniform(-0.05, 0.05)
    tool = in_plane(rng.uniform(-0.15, 0.15), rng.uniform(-0.15, 0.15), side)
    if roll:
        tool = tool + rng.uniform(-0.03, 0.03) * lateral
    joints.append(UrdfJointSpec('tool_joint', 'fixed', tool))
    return joints


def _revolute(name: str, point: np.ndarray, axis: np.ndarray, rng: np.random.Generator,
              continuous: bool) -> UrdfJointSpec:
    """Return a revolute joint, or a continuous one when the random range says so."""
    limits = random_limits(rng, continuous=continuous)
    return UrdfJointSpec(name, 'continuous' if limits is None else 'revolute', point, axis,
                         limits)
