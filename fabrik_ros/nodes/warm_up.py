"""Warm a node's target path up shortly before the next streamed target is expected.

A process idle between targets runs the same code two to three times slower than one kept
busy: the caches and branch history hold other work after 20-50 ms (docs/performance.md).
In fabrik_ik, in-process at a 50 ms gap, parsing a target point took 74 µs and the solve 162
µs; run on the previous target 1.5 ms before, 18 and 25 µs (``bench/idle_cost.py`` shows the
effect without ROS). So while targets stream at ordinary rates, :class:`WarmUp` runs the
node's pure part of a target's way (no joint command, no motion) :data:`LEAD_S` before the
next target is expected, one interval after the last. Faster streams keep the process warm; slower
ones are no stream to expect a target from.

The hop between two nodes is cold as well: after 50 ms idle, publishing a joint command to
another process took 0.26 ms (median), 0.13 ms after a publish nobody reads 1.5 ms before,
and 0.07 ms after one to the same reader process (``bench/hop_cold.py``).
So fabrik_ik's warm-up also publishes its last command again, on a hidden topic beside
joint_commands (:func:`warm_up_topic`) that only servo_driver reads: the message warms
fabrik_ik's way out and servo_driver's way in, and servo_driver warms its own part on it
(:meth:`WarmUp.upstream_warms_up`). Its content moves nothing.
"""

from collections.abc import Callable
import math
import time

from rclpy.node import Node

from fabrik_ros.nodes.gap_pacer import FAST_S

# Before the next target expected, by the last interval [s]: long enough that a target a
# little early (DDS, the executor: up to a millisecond) rarely finds the warm-up running, short
# enough that the caches still hold the code.
LEAD_S = 0.0015
# Targets further apart than this are no stream: nothing to expect [s].
SLOWEST_S = 1.0
# A new interval that differs from the timer's by less than this keeps the timer's period [s].
PERIOD_TOLERANCE_S = 0.0005


def warm_up_topic(node: Node, commands_topic: str) -> str:
    """Return the hidden topic beside ``commands_topic`` (as remapped) that carries warm-ups.

    A name token that starts with an underscore hides the topic from ``ros2 topic list``.
    """
    return node.resolve_topic_name(commands_topic) + '/_warm_up'


def warm_up_delay_s(interval_s: float) -> float:
    """Return how long after a target to warm up, from the interval before it; nan: not at all.

    >>> round(warm_up_delay_s(0.05), 4)
    0.0485
    >>> math.isnan(warm_up_delay_s(0.002)), math.isnan(warm_up_delay_s(5.0))
    (True, True)
    """
    if FAST_S <= interval_s <= SLOWEST_S:
        return interval_s - LEAD_S
    return math.nan


class WarmUp:
    """Run ``warm`` once, :data:`LEAD_S` before the next target of a stream is expected.

    :param node: the node whose executor runs the timer (the target's own thread: the warm-up
        never runs beside a target)
    :param warm: the pure part of a target's way, on the latest target; it must not move or
        log, nor publish but on the warm-up topic
    """

    def __init__(self, node: Node, warm: Callable[[], None]) -> None:
        self._warm = warm
        self._target_s = -math.inf
        self._period_s = 1.0
        self._timer = node.create_timer(self._period_s, self._on_timer)
        self._timer.cancel()

    def after_target(self) -> None:
        """Note a target just handled: warm up before the next one, if a stream runs."""
        now_s = time.monotonic()
        delay_s = warm_up_delay_s(now_s - self._target_s)
        self._target_s = now_s
        if math.isnan(delay_s):
            self._timer.cancel()
            return
        if abs(delay_s - self._period_s) > PERIOD_TOLERANCE_S:
            self._period_s = delay_s
            self._timer.timer_period_ns = round(delay_s * 1e9)
        self._timer.reset()

    def upstream_warms_up(self) -> None:
        """Warm up now: the node upstream warms up for its next target, which comes here next.

        Once per gap, whichever comes first, this or the timer; nothing outside a stream.
        """
        if not self._timer.is_canceled():
            self._on_timer()

    def _on_timer(self) -> None:
        self._timer.cancel()            # once per target
        # An executor that fell behind may run the timer just after the target that reset it:
        # that target needs no warm-up any more.
        if time.monotonic() - self._target_s >= self._period_s / 2:
            self._warm()
