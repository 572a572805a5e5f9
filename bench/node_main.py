"""Run a node module's ``main()`` as a script: ``node_main.py <module> [--ros-args ...]``.

The node modules have no ``__main__`` block, and cProfile runs scripts, not ``-c`` strings;
this script lets the benchmark start (and profile) any node the same way.
"""

import importlib
import sys


def run() -> None:
    """Import the module named by the first argument and call its main() with the rest."""
    module = importlib.import_module(sys.argv[1])
    sys.argv = [sys.argv[0]] + sys.argv[2:]
    module.main()


if __name__ == '__main__':
    run()
