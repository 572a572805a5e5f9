"""The seed's least-motion steps (single/seed_step.py) on arrays, one row per target."""

import numpy as np

from fabrik_ros.kinematics.elementwise import rotation, TURN
from fabrik_ros.kinematics.single.chain import Chain
from fabrik_ros.kinematics.single.seed_step import (
    DAMPING_M2,
    LARGEST_STEP_RAD,
    SETTLED,
    STEPS,
)


def batch_step_to(chain: Chain[complex], angles: np.ndarray, target: np.ndarray,
                  tolerance_m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return which rows :func:`seed_step.step_to` settles, their angles and tips.

    A row stops stepping once it settles (or gives up), as the single solver stops: the
    others go on. Angles of rows that settle are turned into their joints' ranges.

    :param angles: (M, n) the seeds' chain angles [rad]
    :param target: (M,) in-plane targets [m]
    :param tolerance_m: (M,) in-plane tolerances [m]
    """
    moved = np.array(angles, dtype=float)
    rows = len(moved)
    stepping = np.ones(rows, dtype=bool)
    failed = np.zeros(rows, dtype=bool)
    settled = SETTLED * tolerance_m
    for step in range(STEPS + 1):
        direction = np.full(rows, chain.base_direction, dtype=complex)
        point = np.full(rows, chain.base, dtype=complex)
        points = []
        for index, length in enumerate(chain.lengths):
            direction = direction * rotation(moved[:, index])
            points.append(point)
            point = point + length * direction
        error = target - point
        stepping &= np.abs(error) > settled
        if step == STEPS or not stepping.any():
            break
        columns = [1j * (point - joint) for joint in points]
        xx, yy, xy = np.full(rows, DAMPING_M2), np.full(rows, DAMPING_M2), np.zeros(rows)
        for column in columns:
            xx = xx + column.real * column.real
        for column in columns:
            yy = yy + column.imag * column.imag
        for column in columns:
            xy = xy + column.real * column.imag
        det = xx * yy - xy * xy
        wx = (yy * error.real - xy * error.imag) / det
        wy = (xx * error.imag - xy * error.real) / det
        turns = np.stack([c.real * wx + c.imag * wy for c in columns], axis=1)
        too_far = stepping & np.any(np.abs(turns) > LARGEST_STEP_RAD, axis=1)
        failed |= too_far
        stepping &= ~too_far
        moved[stepping] += turns[stepping]
    ok = ~failed & (np.abs(error) <= tolerance_m)
    for index, constraint in enumerate(chain.constraints):
        low = constraint.min_rad
        offset = (moved[:, index] - low) % TURN
        ok &= offset <= constraint.max_rad - low
        moved[:, index] = np.where(ok, low + offset, moved[:, index])
    return ok, moved, point
