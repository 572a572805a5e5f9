"""The closed-form answers of closed_form.py for many targets at once, one row per target."""

import numpy as np

from fabrik_ros.kinematics.single.closed_form import (
    CANDIDATE_STEPS,
    fits,
    stretched,
    triangle_angles,
    within,
)
from fabrik_ros.kinematics.single.planar_arm import PlanarArm, up_side

TRIANGLE_CHUNK = 8
"""Triangle candidates tried per numpy pass; later chunks run only on rows still open."""


def batch_closed_form(planar: PlanarArm, goal: np.ndarray, off_plane: np.ndarray,
                      side: np.ndarray, tolerance_m: float
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return which targets a closed-form pose answers, the pitch angles and the tool points.

    The rows of :func:`closed_form.closed_form`: the even arc, then (three bones, a target in
    the reach region) the tool triangles in candidate order, the first that fits per row;
    beyond reach, the stretched pose where the limits allow it.
    """
    in_plane = np.sqrt(tolerance_m ** 2 - np.minimum(off_plane, tolerance_m) ** 2)
    usable = (off_plane < tolerance_m) & (
        np.abs(goal - planar.chain.base) <= planar.chain.total_length + in_plane)
    first_side = np.where(side != 0, side, up_side(goal - planar.chain.base))
    arc = planar.arc_angles(goal, first_side)
    found, tip = fits(planar, arc, goal, side, in_plane)
    found &= usable
    pitch = np.stack(np.broadcast_arrays(*arc), axis=1)
    left = np.flatnonzero(usable & ~found)
    if len(planar.chain.lengths) == 3 and left.size:
        left = left[planar.reach_region.contains(goal[left])]
    if len(planar.chain.lengths) == 3 and left.size:
        tool = np.asarray(sum(arc))
        tri, good, tri_tip = triangle_pick(planar, goal[left], tool[left], first_side[left],
                                           side[left], in_plane[left])
        pitch[left[good]], tip[left[good]] = tri[good], tri_tip[good]
        found[left[good]] = True
    far = np.flatnonzero((off_plane < tolerance_m) & ~usable)
    if far.size:
        fit, pitch[far], tip[far] = stretched_rows(planar, goal[far], pitch[far], tip[far])
        found[far[fit]] = True
    return found, pitch, tip


def stretched_rows(planar: PlanarArm, goal: np.ndarray, pitch: np.ndarray,
                   tip: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return where the stretched pose fits targets beyond reach, with pitches and tips set."""
    found = stretched(planar, goal)
    assert found is not None  # arrays always come back; their rows are checked here
    straight, straight_tip = found
    fit = np.asarray(within(planar.chain, straight))
    pitch, tip = pitch.copy(), tip.copy()
    pitch[fit] = np.stack(np.broadcast_arrays(*straight), axis=1)[fit]
    tip[fit] = np.broadcast_to(straight_tip, len(goal))[fit]
    return fit, pitch, tip


def triangle_pick(planar: PlanarArm, goal: np.ndarray, tool: np.ndarray, first: np.ndarray,
                  side: np.ndarray, tolerance_m: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return, per row, the first tool triangle that fits, whether one does, and its tip.

    Candidates go in chunks of ``TRIANGLE_CHUNK``, each on the rows no earlier chunk settled.
    """
    steps = np.array(CANDIDATE_STEPS)
    pitch = np.zeros((len(goal), 3))
    tips = np.zeros(len(goal), dtype=complex)
    found = np.zeros(len(goal), dtype=bool)
    for start in range(0, len(steps), TRIANGLE_CHUNK):
        rows = np.flatnonzero(~found)
        if rows.size == 0:
            break
        offsets, elbows = steps[start:start + TRIANGLE_CHUNK].T
        angles, reachable = triangle_angles(planar.chain, goal[rows, None],
                                            tool[rows, None] + offsets[None, :],
                                            elbows[None, :] * first[rows, None])
        good, tip = fits(planar, angles, goal[rows, None], side[rows, None],
                         tolerance_m[rows, None])
        good = good & reachable
        chosen = np.argmax(good, axis=1)
        hit = good[np.arange(rows.size), chosen]
        stacked = np.stack([np.broadcast_to(a, good.shape) for a in angles], axis=2)
        pitch[rows[hit]] = stacked[np.flatnonzero(hit), chosen[hit]]
        tips[rows[hit]] = tip[np.flatnonzero(hit), chosen[hit]]
        found[rows[hit]] = True
    return pitch, found, tips
