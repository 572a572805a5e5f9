"""Choose the executor that spins the nodes: rclpy's EventsExecutor where this rclpy has it.

The SingleThreadedExecutor rebuilds its wait set and walks every entity in Python on each
wake-up, work that grows with every message and timer and is a large share of what a node
does per target. The EventsExecutor (``rclpy.experimental``, ROS 2 Jazzy and later) does that
work in C++. Humble's rclpy has none, and the nodes run on the SingleThreadedExecutor there.

``FABRIK_ROS_EXECUTOR=single`` keeps the SingleThreadedExecutor where both exist (for a
fault in the newer one); ``events`` insists on the EventsExecutor and fails where it is
missing. Every executable, the demo and the node tests build their executor here.
"""

from collections.abc import Mapping
import enum
import os
from typing import Optional

from rclpy.context import Context
from rclpy.executors import Executor, SingleThreadedExecutor

EXECUTOR_VARIABLE = 'FABRIK_ROS_EXECUTOR'


class ExecutorKind(enum.Enum):
    """Which rclpy executor spins the nodes."""

    SINGLE = 'single'    # rclpy.executors.SingleThreadedExecutor
    EVENTS = 'events'    # rclpy.experimental.EventsExecutor


def events_executor_available() -> bool:
    """Return True if this rclpy has the EventsExecutor (Jazzy and later)."""
    try:
        from rclpy.experimental import EventsExecutor  # noqa: F401
    except ImportError:
        return False
    return True


def executor_kind(environ: Optional[Mapping[str, str]] = None) -> ExecutorKind:
    """Return the executor to use: ``FABRIK_ROS_EXECUTOR`` if set, else the fastest there is.

    :raises ValueError: naming the variable, its value and the choices, if the value is not
        one of them or asks for an executor this rclpy does not have
    """
    value = (os.environ if environ is None else environ).get(EXECUTOR_VARIABLE, '')
    if not value:
        return ExecutorKind.EVENTS if events_executor_available() else ExecutorKind.SINGLE
    try:
        kind = ExecutorKind(value)
    except ValueError:
        choices = ' or '.join(k.value for k in ExecutorKind)
        raise ValueError(f'{EXECUTOR_VARIABLE} = {value!r}, must be {choices} (or unset: '
                         'the EventsExecutor where rclpy has it)') from None
    if kind is ExecutorKind.EVENTS and not events_executor_available():
        raise ValueError(f'{EXECUTOR_VARIABLE} = {value!r}, but this rclpy has no '
                         'EventsExecutor (rclpy.experimental, ROS 2 Jazzy and later): '
                         'unset it or use single')
    return kind


def make_executor(context: Context, kind: Optional[ExecutorKind] = None) -> Executor:
    """Return a new executor of ``kind`` (default: :func:`executor_kind`) for ``context``.

    :raises ValueError: as :func:`executor_kind` does
    """
    if (kind or executor_kind()) is ExecutorKind.EVENTS:
        from rclpy.experimental import EventsExecutor
        return EventsExecutor(context=context)
    return SingleThreadedExecutor(context=context)
