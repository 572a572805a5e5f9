"""The examples in the web view's pure modules run and hold."""

import doctest

import pytest

from fabrik_ros.webview import calibration, servo_yaml, status_view


@pytest.mark.parametrize('module', [calibration, servo_yaml, status_view],
                         ids=lambda m: m.__name__)
def test_docstring_examples(module):
    failures, tried = doctest.testmod(module)
    assert tried > 0
    assert failures == 0
