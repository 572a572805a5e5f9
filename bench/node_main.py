"""Run a node's entry point as a script: ``node_main.py <module>:<function> [--ros-args ...]``.

The node modules have no ``__main__`` block, and cProfile runs scripts, not ``-c`` strings;
this script lets the benchmark start (and profile) any node the same way.

With ``FABRIK_BENCH_EXECUTOR=events`` in the environment, the nodes are spun by rclpy's
EventsExecutor (``rclpy.experimental``) instead of the SingleThreadedExecutor they ship with:
the benchmark swaps the class before the node module is imported, so the comparison runs the
same node code (e2e_latency.py ``--executor events``).
"""

import importlib
import os
import sys

EXECUTOR_VARIABLE = 'FABRIK_BENCH_EXECUTOR'


def use_events_executor() -> None:
    """Make rclpy.spin and SingleThreadedExecutor use the EventsExecutor from now on."""
    import rclpy
    import rclpy.executors
    from rclpy.experimental import EventsExecutor

    def spin(node, executor=None) -> None:
        executor = EventsExecutor() if executor is None else executor
        executor.add_node(node)
        try:
            executor.spin()
        finally:
            executor.remove_node(node)

    rclpy.spin = spin
    rclpy.executors.SingleThreadedExecutor = EventsExecutor


def run() -> None:
    """Import ``module:function`` named by the first argument and call it with the rest."""
    executor = os.environ.get(EXECUTOR_VARIABLE, 'single')
    if executor == 'events':
        use_events_executor()
    elif executor != 'single':
        raise SystemExit(f'{EXECUTOR_VARIABLE} = {executor!r}, must be single or events')
    module, function = sys.argv[1].split(':')
    entry = getattr(importlib.import_module(module), function)
    sys.argv = [sys.argv[0]] + sys.argv[2:]
    entry()


if __name__ == '__main__':
    run()
