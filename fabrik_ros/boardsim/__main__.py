"""``python -m fabrik_ros.boardsim``: the ``sim_device`` command (see :mod:`.cli`)."""

from fabrik_ros.boardsim.cli import main

main()
