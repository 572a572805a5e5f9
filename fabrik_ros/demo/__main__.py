"""``python -m fabrik_ros.demo``: the ``make demo`` run (see :mod:`.cli`)."""

import sys

from fabrik_ros.demo.cli import main

sys.exit(main())
