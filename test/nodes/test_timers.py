"""The nodes' timers: callbacks the executor calls without inspecting their signature."""

import inspect

import pytest

from fabrik_ros.nodes.executor import ExecutorKind
from fabrik_ros.nodes.timers import create_timer, set_period
from test.nodes.ros_harness import RosHarness

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]


@pytest.mark.parametrize('kind', list(ExecutorKind), ids=lambda k: k.value)
def test_a_timer_calls_its_callback_with_no_arguments_and_states_so(kind):
    try:
        ros = RosHarness(kind)
    except ImportError:
        pytest.skip(f'this rclpy has no {kind.value} executor')
    try:
        node = ros.probe('timers')
        calls = []
        timer = create_timer(node, 0.01, lambda *args: calls.append(args))
        ros.spin_until(lambda: len(calls) >= 3, timeout_s=10.0, what='three timer calls')
        assert set(calls) == {()}, 'never handed a TimerInfo'
        stated = timer.callback.__signature__
        assert inspect.signature(timer.callback) is stated, 'answered without a look inside'
    finally:
        ros.close()


def test_set_period_changes_the_period_and_restarts_the_timer_only_when_it_differs(ros):
    node = ros.probe('timer_period')
    calls = []
    timer = create_timer(node, 0.01, lambda: calls.append(1))
    ros.spin_until(lambda: len(calls) >= 2, timeout_s=10.0, what='two calls at 10 ms')
    set_period(timer, 3600.0)
    assert timer.timer_period_ns == 3_600_000_000_000
    assert not timer.is_canceled()
    before = timer.time_until_next_call()
    set_period(timer, 3600.0)           # the same period: the count is not started again
    assert timer.time_until_next_call() <= before
    seen = len(calls)
    set_period(timer, 0.01)
    ros.spin_until(lambda: len(calls) >= seen + 2, timeout_s=10.0, what='calls at 10 ms again')
