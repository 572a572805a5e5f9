"""A node's periodic side work, each piece paced into the gaps between targets (gap_pacer).

fabrik_ik draws markers and reports diagnostics, servo_driver publishes joint_states and
diagnostics: each piece of Python (0.5-1 ms in a process idle between targets) that lands
where a target arrives holds it up. Traced on a servo bus at 20 Hz, the 1 Hz diagnostics of
servo_driver alone met 1.7 % of the targets, which then took 4-5 ms (bench/stage_trace.py).
:class:`GapWork` keeps one :class:`~fabrik_ros.nodes.gap_pacer.GapPacer` per piece and one
settle timer for all of them; while targets stream too fast for a settle gap, at most one
piece follows a target, the others the next ones.
"""

from collections.abc import Callable
import time

from rclpy.node import Node

from fabrik_ros.nodes.gap_pacer import Action, GapPacer, SETTLE_S


class GapWork:
    """Pieces of side work, each done in a gap after a target when due, or by its own timer.

    :param node: the node whose executor runs the settle timer
    """

    def __init__(self, node: Node) -> None:
        self._pieces: list[tuple[GapPacer, Callable[[], None]]] = []
        self._settle = node.create_timer(SETTLE_S, self._on_settle)
        self._settle.cancel()

    def add(self, period_s: float, work: Callable[[], None]) -> GapPacer:
        """Pace ``work`` at ``period_s``; the caller's own timer asks the returned pacer.

        :raises ValueError: if the period is not a positive finite number
        """
        pacer = GapPacer(period_s)
        self._pieces.append((pacer, work))
        return pacer

    def after_target(self) -> None:
        """Note a target just handled: do a due piece now, or arm the settle timer."""
        now_s = time.monotonic()
        settle, free = False, True
        for pacer, work in self._pieces:
            action = pacer.after_target(now_s, free=free)
            if action is Action.NOW:
                work()
                free = False
            settle = settle or action is Action.SETTLE
        if settle:
            self._settle.reset()        # once the target has gone its way

    def _on_settle(self) -> None:
        self._settle.cancel()
        now_s = time.monotonic()
        for pacer, work in self._pieces:
            if pacer.on_settle(now_s):
                work()
