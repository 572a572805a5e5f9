"""The nodes' timers: callbacks the executor calls without inspecting their signature."""

import inspect

import pytest

from fabrik_ros.nodes.executor import ExecutorKind
from fabrik_ros.nodes.timers import create_timer
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
