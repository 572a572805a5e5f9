"""CommandStream: when the next command of a stream is expected, held targets included."""

from hypothesis import given
from hypothesis import strategies as st
import pytest

from fabrik_ros.servo_io.bus_stream import CommandStream, MISSED_MAX


def _stream(gap_s: float, commands: int = 4, start_s: float = 10.0) -> CommandStream:
    stream = CommandStream()
    for index in range(commands):
        stream.command(start_s + index * gap_s)
    return stream


def test_a_missing_command_moves_the_expected_one_a_beat_on_and_the_stream_goes_on():
    stream = _stream(0.05)                       # 20 Hz, the last command at 10.15 s
    assert stream.next_s(10.16) == pytest.approx(10.2)
    assert stream.next_s(10.2249) == pytest.approx(10.2)    # a little late: still expected
    assert stream.next_s(10.23) == pytest.approx(10.25)     # held still: the next beat
    assert stream.streaming(10.15 + (MISSED_MAX + 0.4) * 0.05)
    assert not stream.streaming(10.15 + (MISSED_MAX + 0.6) * 0.05)


@given(gap_s=st.floats(0.001, 0.25), elapsed=st.floats(0.0, MISSED_MAX + 0.5),
       start_s=st.floats(0.0, 1e5))
def test_the_link_thread_always_has_a_later_time_to_look_again(gap_s, elapsed, start_s):
    """A reconsider time at or before now would make the link's thread spin."""
    stream = _stream(gap_s, start_s=start_s)
    now_s = stream.last_s + elapsed * gap_s
    if stream.streaming(now_s):
        assert stream.reconsider_s(now_s) > now_s
        assert stream.next_s(now_s) > now_s - 0.5 * gap_s - 1e-9
