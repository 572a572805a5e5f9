"""The nodes spin on rclpy's EventsExecutor where it exists; FABRIK_ROS_EXECUTOR overrides."""

import os
from pathlib import Path
import subprocess
import sys
import time

import pytest
from rclpy.executors import SingleThreadedExecutor

from fabrik_ros.nodes import executor as executor_module
from fabrik_ros.nodes.executor import (
    events_executor_available,
    executor_kind,
    EXECUTOR_VARIABLE,
    ExecutorKind,
)
from test.nodes.conftest import ARM_CONFIG
from test.nodes.ros_harness import RosHarness

BIN = Path(sys.executable).parent


def test_unset_picks_the_events_executor_where_rclpy_has_it():
    expected = ExecutorKind.EVENTS if events_executor_available() else ExecutorKind.SINGLE
    assert executor_kind({}) is expected
    assert executor_kind({EXECUTOR_VARIABLE: ''}) is expected


def test_single_is_kept_on_request():
    assert executor_kind({EXECUTOR_VARIABLE: 'single'}) is ExecutorKind.SINGLE


def test_an_unknown_value_is_refused_naming_the_choices():
    with pytest.raises(ValueError) as caught:
        executor_kind({EXECUTOR_VARIABLE: 'multi'})
    assert str(caught.value).startswith(
        "FABRIK_ROS_EXECUTOR = 'multi', must be single or events")


def test_events_is_refused_where_rclpy_has_no_events_executor(monkeypatch):
    monkeypatch.setattr(executor_module, 'events_executor_available', lambda: False)
    assert executor_kind({}) is ExecutorKind.SINGLE
    with pytest.raises(ValueError) as caught:
        executor_kind({EXECUTOR_VARIABLE: 'events'})
    assert 'this rclpy has no EventsExecutor' in str(caught.value)


KINDS = [ExecutorKind.SINGLE] + ([ExecutorKind.EVENTS] if events_executor_available() else [])


@pytest.mark.ros
@pytest.mark.timeout(60)
@pytest.mark.parametrize('kind', KINDS, ids=lambda k: k.value)
def test_each_executor_runs_a_timer_that_is_cancelled_and_reset(kind):
    """The nodes cancel and reset their marker and path timers: both executors must honour it."""
    ros = RosHarness(kind)
    try:
        assert isinstance(ros.executor, SingleThreadedExecutor) == (kind is ExecutorKind.SINGLE)
        ticks: list[float] = []
        timer = ros.probe('timer_probe').create_timer(
            0.01, lambda: ticks.append(time.monotonic()))
        ros.spin_until(lambda: len(ticks) >= 3, timeout_s=5.0, what='3 ticks')
        timer.cancel()
        cancelled_at = time.monotonic()
        ros.spin_until(lambda: time.monotonic() > cancelled_at + 0.1, timeout_s=5.0,
                       what='0.1 s after the cancel')
        assert not [t for t in ticks if t > cancelled_at + 0.005]
        timer.reset()
        before = len(ticks)
        ros.spin_until(lambda: len(ticks) >= before + 3, timeout_s=5.0,
                       what='3 ticks after the reset')
    finally:
        ros.close()


@pytest.mark.ros
@pytest.mark.timeout(120)
def test_a_refused_executor_choice_stops_the_start_with_one_line():
    env = {**os.environ, EXECUTOR_VARIABLE: 'multi'}
    result = subprocess.run([str(BIN / 'fabrik_ik'), '--ros-args', '--params-file',
                             str(ARM_CONFIG)], capture_output=True, text=True, timeout=60,
                            env=env, check=False)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "fabrik_ik: cannot start: FABRIK_ROS_EXECUTOR = 'multi', must be single or events "
        '(or unset: the EventsExecutor where rclpy has it)']
