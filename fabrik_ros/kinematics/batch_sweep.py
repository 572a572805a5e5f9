"""ArmIk._sweep for many planar targets: the tool fixed along directions, then halving."""

import math

import numpy as np

from fabrik_ros.kinematics.arm_ik import SWEEP_DIRECTIONS, SWEEP_HALVINGS
from fabrik_ros.kinematics.attempts import sweep_directions
from fabrik_ros.kinematics.batch_attempts import BatchAttempts
from fabrik_ros.kinematics.elementwise import rotation


def sweep(attempts: BatchAttempts, rows: np.ndarray) -> None:
    """Run ArmIk._sweep on rows: fixed tool directions, halving round the best, a free solve.

    The fixed-direction solves of a row all start from the same pose, so they run at once;
    they are then offered in the single solver's order, up to the first that settles the row
    (where ArmIk._sweep stops), and only those count as work done.
    """
    start = [p[rows].copy() for p in attempts.points]
    turns = np.array(list(sweep_directions(1 + 0j, SWEEP_DIRECTIONS)))
    tips = (attempts.directions[-1][rows, None] * turns[None, :]).reshape(-1)
    wide = np.repeat(np.arange(rows.size), SWEEP_DIRECTIONS)
    tried = attempts.solve(np.repeat(rows, SWEEP_DIRECTIONS), [p[wide] for p in start], tips)
    errors = np.full((rows.size, SWEEP_DIRECTIONS), np.inf)
    for index in range(SWEEP_DIRECTIONS):
        live = attempts.still_open(rows)
        picked = np.flatnonzero(live) * SWEEP_DIRECTIONS + index
        errors[live, index] = attempts.offer(rows[live], tried.rows(picked))
    best = np.argmin(errors, axis=1)
    error = errors[np.arange(rows.size), best]
    direction = tips.reshape(rows.size, SWEEP_DIRECTIONS)[np.arange(rows.size), best]
    _halve(attempts, rows, start, error, direction)
    live = rows[attempts.still_open(rows)]
    if live.size:
        attempts.run(live, [p[live] for p in attempts.points])


def _halve(attempts: BatchAttempts, rows: np.ndarray, start: list[np.ndarray],
           error: np.ndarray, direction: np.ndarray) -> None:
    """Turn each row's best sweep direction by halving steps either side, as ArmIk._sweep."""
    step = 2.0 * math.pi / SWEEP_DIRECTIONS
    for _ in range(SWEEP_HALVINGS):
        step *= 0.5
        for turned in (direction * rotation(step), direction * rotation(-step)):
            live = attempts.still_open(rows)
            turned_error = np.full(rows.size, np.inf)
            turned_error[live] = attempts.run(rows[live], [p[live] for p in start],
                                              tips=turned[live], swept=True)
            better = turned_error < error
            error = np.where(better, turned_error, error)
            direction = np.where(better, turned, direction)
