"""Targets far beyond any arm, answered through a stand-in on the same line.

Beyond :data:`RECKONING_M` from the base the solver aims at a stand-in target in the same
direction: squares of its coordinates stay finite, and the closest pose is the same to double
precision (at 1e12 m, the arm's own offsets turn the direction by less than 1e-12 rad).
"""

import numpy as np

from fabrik_ros.kinematics.vec3 import Vec3

RECKONING_M = 1e12


def within_reckoning(goal: Vec3) -> Vec3:
    """Return ``goal``, or for a far one (up to the float maximum) a stand-in along its line.

    >>> within_reckoning(Vec3(3e12, 0.0, -3e12))
    Vec3(x=1000000000000.0, y=0.0, z=-1000000000000.0)
    """
    largest = max(abs(goal.x), abs(goal.y), abs(goal.z))
    return goal if largest <= RECKONING_M else goal * (RECKONING_M / largest)


def rows_within_reckoning(goals: np.ndarray) -> np.ndarray:
    """Return ``goals`` (N, 3) with :func:`within_reckoning` applied to each row."""
    if goals.ndim != 2 or not np.all(np.isfinite(goals)):
        return goals    # the solver refuses these with the reason
    largest = np.max(np.abs(goals), axis=1, keepdims=True)
    return np.where(largest > RECKONING_M, goals * (RECKONING_M / np.maximum(largest, 1.0)),
                    goals)
