"""Simulated servo boards on pseudo-terminals, and the Uno firmware running in simavr.

Tests, benchmarks, the demo and ``sim.launch.py`` use these; the driver never imports them.
They speak the same bytes as real boards, through the codecs of
:mod:`fabrik_ros.servo_io.protocols`.
"""

from fabrik_ros.boardsim.board import SimBoard
from fabrik_ros.boardsim.servo_model import ServoModel

__all__ = ['ServoModel', 'SimBoard']
