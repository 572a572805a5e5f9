"""fabrik_ik and servo_driver hold the CPUs' wake-up latency while they run, as asked."""

import os

import pytest
from rclpy.exceptions import InvalidParameterValueException

from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.process.cpu_wake_latency import current_bound_us, DEVICE

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60),
              pytest.mark.skipif(not (DEVICE.exists() and os.access(DEVICE, os.W_OK)),
                                 reason=f'{DEVICE} is not writable here')]


def _requests_held() -> int:
    """Return how many descriptors of this process hold a request on the device."""
    held = 0
    for fd in os.listdir('/proc/self/fd'):
        try:
            held += os.readlink(f'/proc/self/fd/{fd}') == str(DEVICE)
        except OSError:
            continue          # the listing's own descriptor, closed by now
    return held


def _args(kind, arm_args, tmp_path, *extra):
    port = ('-p', f'port:={tmp_path / "ttyNONE"}') if kind is ServoDriverNode else ()
    return [*arm_args, *port, *extra]


@pytest.mark.parametrize('kind', [FabrikIkNode, ServoDriverNode])
def test_each_node_holds_a_request_of_0_us_by_default_until_it_stops(ros, arm_args, tmp_path,
                                                                       kind):
    before = _requests_held()
    node = ros.add(kind(context=ros.context, cli_args=_args(kind, arm_args, tmp_path)))
    assert node.get_parameter('cpu_wake_latency_us').value == 0
    assert _requests_held() == before + 1
    assert current_bound_us() == 0
    ros.destroy(node)
    assert _requests_held() == before


@pytest.mark.parametrize('kind', [FabrikIkNode, ServoDriverNode])
def test_minus_one_asks_for_nothing(ros, arm_args, tmp_path, kind):
    before = _requests_held()
    ros.add(kind(context=ros.context, cli_args=_args(
        kind, arm_args, tmp_path, '-p', 'cpu_wake_latency_us:=-1')))
    assert _requests_held() == before


def test_a_bound_out_of_range_stops_the_start_naming_the_parameter(ros, arm_args):
    with pytest.raises(InvalidParameterValueException,
                       match='cpu_wake_latency_us out of range. Min: -1'):
        FabrikIkNode(context=ros.context, cli_args=[*arm_args, '-p',
                                                    'cpu_wake_latency_us:=-5'])
