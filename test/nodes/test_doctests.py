"""The examples in the node helpers' docstrings run and hold."""

import doctest

import pytest

from fabrik_ros.nodes import cause_throttle, path_follower, slew


@pytest.mark.parametrize('module', [cause_throttle, path_follower, slew], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    failures, tried = doctest.testmod(module)
    assert tried > 0
    assert failures == 0
