"""Build the kinematics core's Arm from an arm file's parameters, extended keys included.

The arm file loader does not read the extended model's keys yet (zero_deg, direction,
base_xyz_m and the offsets); until it does, the tests hand the core what the file says through
the Arm's own constructor, field by field, so ``Arm.fk`` and ``Arm.ik`` are exercised for real.
"""

import math

from fabrik_ros.kinematics import Arm, Joint, JointKind, Link, ServoMap
from fabrik_ros.kinematics.description.offsets import Offsets


def arm_of_file(params: dict) -> Arm:
    """Return the Arm an arm file's ``ros__parameters`` describe."""
    joints = []
    for name in params['joint_names']:
        entry = params['joints'][name]
        joints.append(Joint(name, JointKind(entry['kind']), math.radians(entry['min_deg']),
                            math.radians(entry['max_deg']), math.radians(entry['home_deg']),
                            zero_rad=math.radians(entry.get('zero_deg', 0.0)),
                            direction=entry.get('direction', 1)))
    geometry = params['geometry']
    pitches = [j.name for j in joints if j.kind is JointKind.PITCH]
    lengths = [*geometry['link_lengths_m'], geometry['tool_length_m']]
    offsets = Offsets(tuple(geometry.get('base_xyz_m', (0.0, 0.0, 0.0))),
                      geometry.get('shoulder_offset_m', 0.0),
                      geometry.get('lateral_offset_m', 0.0),
                      geometry.get('roll_axis_offset_m', 0.0),
                      geometry.get('tool_offset_m', 0.0))
    return Arm(params['base_frame'], tuple(joints), geometry['shoulder_height_m'],
               tuple(Link(n, length) for n, length in zip(pitches, lengths, strict=True)),
               ServoMap(tuple(joints), (), ()), offsets=offsets)
