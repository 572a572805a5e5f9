"""Several FABRIK solves of one planar target, ranked: reached, on the wanted side, closest."""

from collections.abc import Sequence

from fabrik_ros.kinematics.elementwise import phase
from fabrik_ros.kinematics.single.fabrik import FabrikSolver
from fabrik_ros.kinematics.single.planar_arm import PlanarArm, side_of
from fabrik_ros.kinematics.single.results import ChainSolution


class Attempts:
    """Solve one planar target from several starts and keep the best answer.

    Answers rank by: reached first, then on the wanted elbow side (``side`` +1 left of the
    base-to-tip chord, -1 right, 0 either), then (with a ``tip_direction``) by how far the
    last bone turns from it (a limit may hold it off while the tip reaches), then by residual.
    A reached answer on the wrong side is also tried mirrored across its chord, which keeps
    the tip where it is.
    """

    def __init__(self, solver: FabrikSolver, planar: PlanarArm, target: complex, *,
                 side: int, tip_direction: complex | None) -> None:
        """Prepare to solve ``planar`` for ``target``."""
        self._solver = solver
        self._planar = planar
        self._target = target
        self._side = side
        self._tip_direction = tip_direction
        self.best: ChainSolution[complex] | None = None
        self.iterations = 0
        self.out_of_reach = False

    @property
    def done(self) -> bool:
        """Return True once the best answer reaches on the wanted side, or none can reach.

        With a ``tip_direction``, the answer's last bone must lie along it too.
        """
        if self.out_of_reach:
            return True
        if self.best is None:
            return False
        reached, wrong_side, turn, _ = self._rank(self.best)
        return reached == 0 and wrong_side == 0 and turn <= DIRECTION_MET_RAD

    def run(self, start: Sequence[complex], *,
            solver: FabrikSolver | None = None) -> ChainSolution[complex]:
        """Solve from ``start`` and offer the answer.

        :param solver: a solver with other options for this attempt (default: the usual one)
        :return: this attempt's answer (check :attr:`done` for the overall verdict)
        """
        solution = (solver or self._solver).solve(self._planar.chain, self._target,
                                                  start=start, tip_direction=self._tip_direction)
        self.iterations += solution.iterations
        self.offer(solution)
        return solution

    def offer(self, solution: ChainSolution[complex]) -> None:
        """Keep ``solution`` if it ranks first (a reached one is also tried mirrored)."""
        self._offer(solution)
        if solution.reached and not self.done and self._tip_direction is None:
            self._offer_mirrored(solution)

    def _offer(self, solution: ChainSolution[complex]) -> None:
        if self.best is None or self._rank(solution) < self._rank(self.best):
            self.best = solution

    def _offer_mirrored(self, solution: ChainSolution[complex]) -> None:
        mirrored, directions, usable = self._planar.mirror(solution.points)
        if usable:
            self._offer(ChainSolution(tuple(mirrored), tuple(directions), True, solution.error_m,
                                      solution.iterations, solution.stop_reason))

    def _rank(self, solution: ChainSolution[complex]) -> tuple[int, int, float, float]:
        wrong_side = self._side != 0 and side_of(solution.points) == -self._side
        turn = (0.0 if self._tip_direction is None
                else abs(phase(solution.directions[-1] * self._tip_direction.conjugate())))
        return (0 if solution.reached else 1, int(wrong_side), turn, solution.error_m)


DIRECTION_MET_RAD = 1e-9
"""A last bone this near the asked tip direction lies along it (FABRIK lays it exactly)."""
