"""Forward kinematics of the extended arm model, written from its definition (an oracle).

Written from the lead's note on the extended arm model (issue 21), term by term: in-plane
complex coordinates ``along + i*height``, geometric angle = zero + direction * position, the
tool at ``P_n + D_n (t + i (e + r cos phi))`` and lateral ``d - r sin phi``. It shares no code
with the package, so a parameter read off a URDF wrongly shows up as a tool point that differs
from the URDF's own forward kinematics.
"""

import cmath
import math

import numpy as np


def model_tool_point(arm_file: dict, positions_rad: dict[str, float]) -> np.ndarray:
    """Return the tool point [m] in the base frame for joint positions [rad].

    :param arm_file: the arm file's ``ros__parameters`` as read by yaml.safe_load
    """
    geometry = arm_file['geometry']
    angles = {'yaw': 0.0, 'roll': 0.0}
    pitches = []
    for name in arm_file['joint_names']:
        joint = arm_file['joints'][name]
        angle = (math.radians(joint.get('zero_deg', 0.0))
                 + joint.get('direction', 1) * positions_rad[name])
        if joint['kind'] == 'pitch':
            pitches.append(angle)
        else:
            angles[joint['kind']] = angle
    point = complex(geometry.get('shoulder_offset_m', 0.0), geometry['shoulder_height_m'])
    direction = complex(1.0, 0.0)
    lengths = geometry['link_lengths_m']
    for k, angle in enumerate(pitches):
        direction *= cmath.exp(1j * angle)
        if k < len(lengths):
            point += lengths[k] * direction
    r = geometry.get('tool_offset_m', 0.0)
    e = geometry.get('roll_axis_offset_m', 0.0)
    tool = point + direction * complex(geometry['tool_length_m'],
                                       e + r * math.cos(angles['roll']))
    lateral = geometry.get('lateral_offset_m', 0.0) - r * math.sin(angles['roll'])
    psi = angles['yaw']
    base = np.array(geometry.get('base_xyz_m', [0.0, 0.0, 0.0]))
    return base + np.array([tool.real * math.cos(psi) - lateral * math.sin(psi),
                            tool.real * math.sin(psi) + lateral * math.cos(psi), tool.imag])
