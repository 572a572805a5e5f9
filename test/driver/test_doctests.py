"""The examples in the docstrings of the pure helpers outside kinematics run and hold."""

import doctest

import pytest

from fabrik_ros.driver import arm_state_machine, board_layout, feedback, pulse_jog, slew
from fabrik_ros.monitoring import cause_throttle


@pytest.mark.parametrize('module', [arm_state_machine, board_layout, cause_throttle, feedback,
                                    pulse_jog, slew], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    failures, tried = doctest.testmod(module)
    assert tried > 0
    assert failures == 0
