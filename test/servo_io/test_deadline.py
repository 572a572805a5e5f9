"""Deadlines and link options: checked values, a replaceable clock."""

import pytest

from fabrik_ros.servo_io import Deadline, LinkOptions


def test_deadline_follows_the_injected_clock():
    now = [100.0]
    deadline = Deadline(1.0, clock=lambda: now[0])
    now[0] = 100.25
    assert not deadline.expired() and deadline.time_left() == 0.75
    now[0] = 101.0
    assert deadline.expired() and deadline.time_left() == 0.0


@pytest.mark.parametrize('field, value, fragment', [
    ('reply_timeout_s', 0.0, 'LinkOptions.reply_timeout_s = 0.0, must be finite and > 0'),
    ('poll_hz', -1.0, 'LinkOptions.poll_hz = -1.0, must be finite and >= 0'),
    ('max_rate_hz', float('inf'), 'LinkOptions.max_rate_hz = inf'),
    ('backoff_max_s', 0.01, 'backoff_max_s = 0.01, must be >= backoff_min_s'),
])
def test_link_options_refuse_values_that_make_no_sense(field, value, fragment):
    with pytest.raises(ValueError) as raised:
        LinkOptions(**{field: value})
    assert fragment in str(raised.value)
