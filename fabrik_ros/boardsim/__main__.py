"""``python -m fabrik_ros.boardsim``: the ``sim_device`` command (see :mod:`.cli`)."""

import sys

from fabrik_ros.boardsim.cli import main

sys.exit(main())
