"""A target near the seed, reached by the least joint motion: damped least squares in the plane.

In a stream of targets (a path, a dragged marker, a teleoperated tool) each target lies a
little beyond the last answer. Moving every pitch joint by the least amount that brings the tip
there keeps the arm on its branch and its redundant joints where they were, which FABRIK from
the seed does not promise (it moves the joints nearest the tip most, and an arc start may take
another pose of the family). Each step solves ``J da = error`` for the tip's 2D error with the
damped pseudo-inverse of the 2 x n Jacobian (column j is ``i (tip - joint j)``). It is a seed's
first try (Arm's): when the steps do not settle on the target within every joint's range, the
solver carries on with FABRIK from the seed. Plain floats here, since every streamed target
takes it; batch_seed_step.py takes the same steps on arrays.
"""

import cmath
from collections.abc import Sequence

from fabrik_ros.kinematics.elementwise import TURN
from fabrik_ros.kinematics.single.chain import Chain

STEPS = 8
"""Steps at most: Newton's convergence takes two to four from a seed within a few degrees."""
DAMPING_M2 = 1e-6
"""Squared damping [m^2]: bounds a step near a stretched (singular) pose."""
SETTLED = 0.05
"""The steps stop once the tip is within this fraction of the tolerance of the target (5 um at
the default 0.1 mm): from a seed a millimetre away, one step gets there."""
LARGEST_STEP_RAD = 0.5
"""A step turning a joint further than this means the seed is no near answer: give up."""


def step_to(chain: Chain[complex], angles: Sequence[float], target: complex,
            tolerance_m: float, start: tuple[list[complex], complex] | None = None
            ) -> tuple[list[float], complex, list[complex]] | None:
    """Return the chain's angles moved onto ``target``, the tip and the joints, or None.

    :param angles: the seed's chain angles [rad]
    :param tolerance_m: the tip must end within this distance of the target [m]
    :param start: the joints and the tip at ``angles`` when known (the last answer's, in a
        stream), which saves the first forward pass
    :return: angles turned into their joints' ranges, the tip and the joints before it [m];
        None when the steps do not settle within tolerance, would turn a joint too far, or
        leave a range
    """
    moved = list(angles)
    lengths = chain.lengths
    settled = SETTLED * tolerance_m
    rect = cmath.rect
    if start is None:
        direction, point = chain.base_direction, chain.base
        points = []
        for length, angle in zip(lengths, moved, strict=True):
            direction *= rect(1.0, angle)
            points.append(point)
            point += length * direction
    else:
        points, point = start
    error = target - point
    step = 0
    while abs(error) > settled and step < STEPS:
        step += 1
        xx, yy, xy = DAMPING_M2, DAMPING_M2, 0.0
        deltas = []
        for joint in points:      # column j is i * delta: summed as batch_seed_step sums
            delta = point - joint
            deltas.append(delta)
            across, up = delta.real, delta.imag
            xx += up * up
            yy += across * across
            xy -= across * up
        det = xx * yy - xy * xy
        wx = (yy * error.real - xy * error.imag) / det
        wy = (xx * error.imag - xy * error.real) / det
        direction, point = chain.base_direction, chain.base
        points = []
        for index, delta in enumerate(deltas):      # each joint turned, then the forward pass
            turn = delta.real * wy - delta.imag * wx
            if abs(turn) > LARGEST_STEP_RAD:
                return None
            angle = moved[index] = moved[index] + turn
            direction *= rect(1.0, angle)
            points.append(point)
            point += lengths[index] * direction
        error = target - point
    if abs(error) > tolerance_m:
        return None
    for index, constraint in enumerate(chain.constraints):
        low, angle = constraint.min_rad, moved[index]
        if low <= angle <= constraint.max_rad:
            continue
        offset = (angle - low) % TURN
        if offset > constraint.max_rad - low:
            return None
        moved[index] = low + offset
    return moved, point, points
