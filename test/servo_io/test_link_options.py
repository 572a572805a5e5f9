"""LinkOptions: every field is checked at construction, naming the value and the rule."""

import math

import pytest

from fabrik_ros.servo_io import LinkOptions

INT_FIELDS = ('baud', 'max_retries', 'lost_after', 'max_in_flight')
FLOAT_FIELDS = ('max_rate_hz', 'poll_hz', 'reply_timeout_s', 'write_timeout_s',
                'handshake_timeout_s', 'handshake_interval_s', 'backoff_min_s', 'backoff_max_s',
                'path_check_s')


@pytest.mark.parametrize('field, value, rule', [
    ('max_retries', 1.5, 'LinkOptions.max_retries = 1.5, must be an int'),
    ('lost_after', True, 'LinkOptions.lost_after = True, must be an int (not a bool)'),
    ('baud', 115200.0, 'LinkOptions.baud = 115200.0, must be an int'),
    ('baud', '115200', "LinkOptions.baud = '115200', must be an int"),
    ('max_retries', -1, 'LinkOptions.max_retries = -1, must be >= 0'),
    ('lost_after', 0, 'LinkOptions.lost_after = 0, must be > 0'),
    ('poll_hz', True, 'LinkOptions.poll_hz = True, must be a number (not a bool)'),
    ('reply_timeout_s', '0.1', "LinkOptions.reply_timeout_s = '0.1', must be a number"),
    ('reply_timeout_s', None, 'LinkOptions.reply_timeout_s = None, must be a number'),
    ('max_rate_hz', math.nan, 'LinkOptions.max_rate_hz = nan, must be finite and >= 0'),
    ('max_rate_hz', -1.0, 'LinkOptions.max_rate_hz = -1.0, must be finite and >= 0'),
    ('max_in_flight', 0, 'LinkOptions.max_in_flight = 0, must be > 0'),
])
def test_a_field_of_the_wrong_type_or_range_is_refused_by_name(field, value, rule):
    # Issue 12.5: max_retries=1.5 and lost_after=True used to raise TypeError in the I/O thread.
    with pytest.raises(ValueError) as raised:
        LinkOptions(**{field: value})
    assert str(raised.value) == rule


def test_every_field_is_checked():
    for field in INT_FIELDS:
        with pytest.raises(ValueError, match=f'LinkOptions.{field} = 2.5'):
            LinkOptions(**{field: 2.5})
    for field in FLOAT_FIELDS:
        with pytest.raises(ValueError, match=f'LinkOptions.{field} = True'):
            LinkOptions(**{field: True})
    assert set(INT_FIELDS + FLOAT_FIELDS) == set(LinkOptions.__dataclass_fields__)


def test_ints_are_taken_for_float_fields():
    options = LinkOptions(max_rate_hz=100, reply_timeout_s=1, poll_hz=0)
    assert options.max_rate_hz == 100 and options.poll_hz == 0
