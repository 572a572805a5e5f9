"""Every process a benchmark test starts ends with the test (issue 34.3).

This session's processes carry a tag in their environment (set by test/conftest.py, inherited
by every child: see processes.py). After each test of this folder nothing of the package that
carries it may still run: what is left is ended, and the test errors naming it.
"""

import os

import pytest

from test.bench.processes import end_tagged, TAG, wait_until_gone

SESSION_TAG = os.environ[TAG]
# A node's cleanup takes well under this; only a leftover makes a test wait for it.
_CLEANUP_S = 10.0


@pytest.fixture(autouse=True)
def nothing_of_the_package_left_running():
    """Fail the test if a process it started (or its children) is still running after it."""
    yield
    left = wait_until_gone(SESSION_TAG, _CLEANUP_S)
    if left:
        end_tagged(SESSION_TAG)
        pytest.fail(f'still running after the test: {left}')
