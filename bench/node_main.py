"""Run a node's entry point as a script: ``node_main.py <module>:<function> [--ros-args ...]``.

The node modules have no ``__main__`` block, and cProfile runs scripts, not ``-c`` strings;
this script lets the benchmark start (and profile) any node the same way. The executor the
nodes spin on follows ``FABRIK_ROS_EXECUTOR`` (fabrik_ros.nodes.executor), as it does for
the installed executables.
"""

import importlib
import sys


def run() -> None:
    """Import ``module:function`` named by the first argument and call it with the rest."""
    module, function = sys.argv[1].split(':')
    entry = getattr(importlib.import_module(module), function)
    sys.argv = [sys.argv[0]] + sys.argv[2:]
    entry()


if __name__ == '__main__':
    run()
