"""attempts.Attempts for many planar targets: FABRIK attempts on the open rows, ranked alike."""

from typing import Any

import numpy as np

from fabrik_ros.kinematics.options import SolverOptions
from fabrik_ros.kinematics.single.chain import Chain
from fabrik_ros.kinematics.single.fabrik import (
    backward_pass,
    BestPose,
    forward_pass,
    iterate_from,
    progress,
    STALLS,
)
from fabrik_ros.kinematics.single.planar_arm import PlanarArm, side_of

SCALAR_ROWS = 8
"""Rows left iterating up to which the single solver's loop finishes them (no numpy cost)."""
Rows = list[np.ndarray]
"""A pose per row: one complex array per joint position (or bone direction), a row per target."""


class Solved:
    """Answers of one attempt: best poses, bone directions, residuals [m] and iterations."""

    def __init__(self, points: Rows, directions: Rows, error: np.ndarray,
                 iterations: np.ndarray) -> None:
        """Keep the arrays (a row per target)."""
        self.points, self.directions = points, directions
        self.error, self.iterations = error, iterations


class BatchAttempts:
    """The best attempt per target, ranked as attempts.Attempts ranks them.

    Reached first, then on the wanted side, then the smaller residual; a reached answer on the
    wrong side is also offered mirrored across its chord.
    """

    def __init__(self, planar: PlanarArm, goal: np.ndarray, side: np.ndarray,
                 options: SolverOptions) -> None:
        """Prepare to solve ``planar`` for the planar ``goal`` targets, nothing tried yet."""
        count, bones = len(goal), len(planar.chain.lengths)
        self._planar, self._goal, self._side, self._options = planar, goal, side, options
        self.points: Rows = [np.zeros(count, dtype=complex) for _ in range(bones + 1)]
        self.directions: Rows = [np.ones(count, dtype=complex) for _ in range(bones)]
        self.error = np.full(count, np.inf)
        self.reached = np.zeros(count, dtype=bool)
        self.wrong_side = np.zeros(count, dtype=bool)
        self._tried = np.zeros(count, dtype=bool)
        self.iterations = np.zeros(count, dtype=int)
        self.out_of_reach = np.zeros(count, dtype=bool)

    def open_rows(self) -> np.ndarray:
        """Return the rows not yet settled (as attempts.Attempts.done tells)."""
        return np.flatnonzero(self.still_open(slice(None)))

    def still_open(self, rows: np.ndarray | slice) -> np.ndarray:
        """Return, for each of ``rows``, True while its best answer is not settled."""
        settled = (self.reached[rows] & ~self.wrong_side[rows]) | self.out_of_reach[rows]
        return np.asarray(~settled)

    def run(self, rows: np.ndarray, starts: Rows, *,
            options: SolverOptions | None = None) -> np.ndarray:
        """Solve ``rows`` from ``starts``; offer the answers; return their residuals [m].

        :param options: other options for this attempt (default: the usual ones)
        """
        return self.offer(rows, Solved(*iterate(self._planar.chain, starts, self._goal[rows],
                                                options or self._options)))

    def offer(self, rows: np.ndarray, solved: 'Solved') -> np.ndarray:
        """Count the work of ``solved`` (one answer per row) and keep what ranks better.

        :return: the answers' residuals [m]
        """
        self.iterations[rows] += solved.iterations
        reached = solved.error <= self._options.tolerance_m
        self._offer(rows, solved.points, solved.directions, solved.error, reached)
        mirror = np.flatnonzero(reached & self.still_open(rows))
        if mirror.size:
            flipped, turned, usable = self._planar.mirror([p[mirror] for p in solved.points])
            keep = mirror[usable]
            self._offer(rows[keep], [np.asarray(p)[usable] for p in flipped],
                        [d[usable] for d in turned], solved.error[keep], reached[keep])
        return solved.error

    def _offer(self, rows: np.ndarray, points: Rows, directions: Rows, error: np.ndarray,
               reached: np.ndarray) -> None:
        """Keep each row's answer where it ranks before the best so far."""
        side = self._side[rows]
        wrong = (side != 0) & (side_of(points) == -side)
        old_missed, old_wrong = ~self.reached[rows], self.wrong_side[rows]
        missed = ~reached
        better = ~self._tried[rows] | (missed < old_missed) | ((missed == old_missed) & (
            (wrong < old_wrong) | ((wrong == old_wrong) & (error < self.error[rows]))))
        keep = rows[better]
        for saved, new in zip(self.points + self.directions, points + directions, strict=True):
            saved[keep] = np.broadcast_to(new, len(rows))[better]
        self.error[keep], self.reached[keep] = error[better], reached[better]
        self.wrong_side[keep] = wrong[better]
        self._tried[keep] = True


def iterate(chain: Chain[complex], starts: Rows, targets: np.ndarray,
            options: SolverOptions) -> tuple[Rows, Rows, np.ndarray, np.ndarray]:
    """Run FabrikSolver._iterate on every row: the same passes, best keeping and stall rule.

    :return: best poses, their bone directions, residuals [m] and iterations, per row
    """
    count = len(targets)
    points, directions = _settled(backward_pass(chain, starts, None), count)
    state = _Rows(points, [p.copy() for p in points], [d.copy() for d in directions],
                  np.abs(points[-1] - targets), np.zeros(count, dtype=int),
                  np.zeros(count, dtype=int))
    active = np.flatnonzero(state.best_error > options.tolerance_m)
    cap = options.max_iterations
    for _ in range(cap):
        if active.size <= SCALAR_ROWS:
            break
        active = _pass_pair(chain, targets, state, active, options)
    for row in active[state.iterations[active] < cap]:
        _finish_row(chain, targets[row], state, row, options)
    return state.best_points, state.best_directions, state.best_error, state.iterations


def _pass_pair(chain: Chain[complex], targets: np.ndarray, state: '_Rows', active: np.ndarray,
               options: SolverOptions) -> np.ndarray:
    """Run one forward and backward pass on the ``active`` rows; return those still open."""
    state.iterations[active] += 1
    moved = forward_pass(chain, [p[active] for p in state.points], targets[active], None)
    moved, turned = _settled(backward_pass(chain, moved, None), active.size)
    error = np.abs(moved[-1] - targets[active])
    improved, state.stalls[active] = progress(state.best_error[active], error,
                                              state.stalls[active], options.min_improvement_m)
    keep = active[improved]
    state.best_error[keep] = error[improved]
    for saved, new in zip(state.best_points + state.best_directions, moved + turned,
                          strict=True):
        saved[keep] = new[improved]
    for saved, new in zip(state.points, moved, strict=True):
        saved[active] = new
    still = (state.best_error[active] > options.tolerance_m) & (state.stalls[active] < STALLS)
    return np.asarray(active[still])


class _Rows:
    """The per-row state of :func:`iterate`: current poses, best poses, stalls, work."""

    def __init__(self, points: Rows, best_points: Rows, best_directions: Rows,
                 best_error: np.ndarray, stalls: np.ndarray, iterations: np.ndarray) -> None:
        """Keep the arrays (updated in place)."""
        self.points, self.best_points, self.best_directions = points, best_points, best_directions
        self.best_error, self.stalls, self.iterations = best_error, stalls, iterations


def _finish_row(chain: Chain[complex], target: complex, state: _Rows, row: int,
                options: SolverOptions) -> None:
    """Run one row's remaining pass pairs with the single solver's loop (fabrik.iterate_from)."""
    best = BestPose([complex(p[row]) for p in state.best_points],
                    [complex(d[row]) for d in state.best_directions],
                    float(state.best_error[row]), int(state.stalls[row]))
    points = [complex(p[row]) for p in state.points]
    state.iterations[row], _ = iterate_from(chain, complex(target), points, best, options,
                                            tip_direction=None,
                                            iterations=int(state.iterations[row]),
                                            cap=options.max_iterations)
    for saved, value in zip(state.best_points + state.best_directions,
                            best.points + best.directions, strict=True):
        saved[row] = value
    state.best_error[row] = best.error_m


def _settled(passed: tuple[list[Any], list[Any]], count: int) -> tuple[Rows, Rows]:
    """Return a backward pass's points and directions as full arrays (the base is one value)."""
    return tuple([np.full(count, v, dtype=complex) if np.ndim(v) == 0 else v for v in part]
                 for part in passed)  # type: ignore[return-value]
