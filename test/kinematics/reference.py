"""An independent oracle for the closest reachable point: dense sampling, then refinement.

It shares nothing with the solver but the arm's joint list: its own forward kinematics, a grid
over every joint range (yaw included) and a pattern search in joint space from the best grid
points. Slow, simple and hard to get wrong: the yardstick unreachable targets are judged by.
"""

import math

import numpy as np

from fabrik_ros.kinematics import Arm, JointKind


def tool_points(arm: Arm, angles: np.ndarray) -> np.ndarray:
    """Return (N, 3) tool points for (N, n_joints) joint positions, from the file's conventions.

    Each joint turns by ``zero + direction * position``; the first pitch axis sits
    ``shoulder_offset_m`` forward and ``shoulder_height_m`` up from the base point, the plane
    ``lateral_offset_m`` aside; the tool ``tool_length_m`` along the last link, the roll axis
    ``roll_axis_offset_m`` above it, the tool point ``tool_offset_m`` off it, turned by the roll
    toward -y (docs/configuration.md).
    """
    count = len(angles)
    offsets = arm.offsets
    yaw, roll, pitch_sum = np.zeros(count), np.zeros(count), np.zeros(count)
    u = np.full(count, offsets.shoulder_offset_m)
    z = np.full(count, arm.shoulder_height_m)
    lengths = [link.length_m for link in arm.links]
    pitch_seen = 0
    for index, joint in enumerate(arm.joints):
        turned = joint.zero_rad + joint.direction * angles[:, index]
        if joint.kind is JointKind.YAW:
            yaw = turned
        elif joint.kind is JointKind.ROLL:
            roll = turned
        else:
            pitch_sum = pitch_sum + turned
            pitch_seen += 1
            if pitch_seen < len(lengths):
                u = u + lengths[pitch_seen - 1] * np.cos(pitch_sum)
                z = z + lengths[pitch_seen - 1] * np.sin(pitch_sum)
    across = offsets.roll_axis_offset_m + offsets.tool_offset_m * np.cos(roll)
    u = u + lengths[-1] * np.cos(pitch_sum) - across * np.sin(pitch_sum)
    z = z + lengths[-1] * np.sin(pitch_sum) + across * np.cos(pitch_sum)
    side = offsets.lateral_offset_m - offsets.tool_offset_m * np.sin(roll)
    x0, y0, z0 = offsets.base_xyz_m
    return np.stack([x0 + u * np.cos(yaw) - side * np.sin(yaw),
                     y0 + u * np.sin(yaw) + side * np.cos(yaw), z0 + z], axis=1)


def closest_distances(arm: Arm, targets: np.ndarray, *, step_deg: float = 6.0,
                      candidates: int = 4) -> np.ndarray:
    """Return, per target, the distance to the closest point the tool can reach [m]."""
    low = np.array([j.min_rad for j in arm.joints])
    high = np.array([j.max_rad for j in arm.joints])
    moving = [j.kind is not JointKind.ROLL or arm.offsets.tool_offset_m != 0.0
              for j in arm.joints]
    axes = [np.linspace(lo, hi, max(2, int(math.degrees(hi - lo) / step_deg) + 1)) if m
            else np.array([j.home_rad])
            for lo, hi, m, j in zip(low, high, moving, arm.joints, strict=True)]
    grid = np.stack([a.reshape(-1) for a in np.meshgrid(*axes, indexing='ij')], axis=1)
    points = tool_points(arm, grid)
    starts = []
    for target in targets:
        distance = np.linalg.norm(points - target, axis=1)
        starts.append(grid[np.argpartition(distance, candidates)[:candidates]])
    repeated = np.repeat(targets, candidates, axis=0)
    reached = _refine(arm, repeated, np.concatenate(starts), low, high)
    return reached.reshape(len(targets), candidates).min(axis=1)


def _refine(arm: Arm, targets: np.ndarray, starts: np.ndarray, low: np.ndarray,
            high: np.ndarray) -> np.ndarray:
    """Return the distances a compass search in joint space reaches from each start."""
    current = starts.copy()
    value = np.linalg.norm(tool_points(arm, current) - targets, axis=1)
    step = np.full(len(current), math.radians(4.0))
    count = current.shape[1]
    moves = np.concatenate([np.eye(count), -np.eye(count)])
    while np.any(step > 1e-7):
        trial = np.clip(current[:, None, :] + step[:, None, None] * moves[None], low, high)
        values = np.linalg.norm(
            tool_points(arm, trial.reshape(-1, count)).reshape(len(current), -1, 3)
            - targets[:, None, :], axis=2)
        best = np.argmin(values, axis=1)
        best_value = values[np.arange(len(current)), best]
        improved = best_value < value - 1e-12
        current[improved] = trial[improved, best[improved]]
        value = np.where(improved, best_value, value)
        step = np.where(improved, step, 0.5 * step)
    return value
