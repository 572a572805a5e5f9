"""Timers whose callbacks the executor calls without inspecting them first.

Before each call of a timer's callback, rclpy's executors (the EventsExecutor included) look
at the callback's signature, to hand it a TimerInfo if it takes one. For a bound method that
look costs about as much as a periodic callback with nothing to do, and the nodes' timers run
whether targets come or not. A callback object that states its signature (no arguments)
answers the question at once. A timer that slows down while there is nothing to do gets its
new period through :func:`set_period`.
"""

from collections.abc import Callable
import inspect

from rclpy.node import Node
from rclpy.timer import Timer


class _NoArguments:
    """Call ``callback()``; its stated signature takes no TimerInfo."""

    __slots__ = ('_callback',)
    __signature__ = inspect.Signature()

    def __init__(self, callback: Callable[[], None]) -> None:
        self._callback = callback

    def __call__(self) -> None:
        self._callback()


def create_timer(node: Node, period_s: float, callback: Callable[[], None]) -> Timer:
    """Return ``node``'s new timer that calls ``callback()`` every ``period_s`` [s]."""
    return node.create_timer(period_s, _NoArguments(callback))


def set_period(timer: Timer, period_s: float) -> None:
    """Give ``timer`` the period ``period_s`` [s], counted from now; nothing if it has it."""
    period_ns = int(period_s * 1e9)       # as Node.create_timer converts it
    if timer.timer_period_ns != period_ns:
        timer.timer_period_ns = period_ns
        timer.reset()
