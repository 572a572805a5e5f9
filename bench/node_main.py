"""Run a node's entry point as a script: ``node_main.py <module>:<function> [--ros-args ...]``.

The node modules have no ``__main__`` block, and cProfile runs scripts, not ``-c`` strings;
this script lets the benchmark start (and profile) any node the same way. The executor the
nodes spin on follows ``FABRIK_ROS_EXECUTOR`` (fabrik_ros.nodes.executor), as it does for
the installed executables. The node ends with the process that started it, however that one
ends (see parent_watch.py).
"""

import importlib
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parent_watch import end_with_parent  # noqa: E402


def run() -> None:
    """Import ``module:function`` named by the first argument and call it with the rest."""
    end_with_parent()
    module, function = sys.argv[1].split(':')
    entry = getattr(importlib.import_module(module), function)
    sys.argv = [sys.argv[0]] + sys.argv[2:]
    entry()


if __name__ == '__main__':
    run()
