"""The ``cpu_wake_latency_us`` parameter: fabrik_ik and servo_driver keep idle CPUs quick to wake.

Both nodes hold the request (fabrik_ros.process.cpu_wake_latency) for as long as they run,
so either one alone on a robot (with another driver, or another IK) is as quick as the pair.
"""

from rclpy.node import Node

from fabrik_ros.nodes.ros_parameters import declare
from fabrik_ros.process.cpu_wake_latency import MAX_LATENCY_US, NOT_ASKED, WakeLatencyRequest

DOCS = 'docs/robot.md, "Latency at low target rates"'


def hold_wake_latency(node: Node) -> WakeLatencyRequest:
    """Declare ``cpu_wake_latency_us``, make the request it asks for, and say what came of it.

    :raises ParameterConfigError: if the parameter's override has another type or range
    """
    latency_us = declare(
        node, 'cpu_wake_latency_us', 0,
        'While the node runs, ask the kernel to keep every idle CPU within this wake-up '
        'latency [µs] (PM QoS, /dev/cpu_dma_latency): 0 keeps them polling instead of '
        'sleeping, so targets streamed at 20-50 Hz are not slowed by waking cores; '
        f'costs power while held. {NOT_ASKED}: ask nothing',
        ints=(NOT_ASKED, MAX_LATENCY_US))
    request = WakeLatencyRequest(latency_us)
    logger = node.get_logger()
    if request.held:
        logger.info(f'CPU wake-up latency held at {latency_us} us while this node runs '
                    f'({request.device}): idle CPUs answer each target at once '
                    f'(cpu_wake_latency_us:={NOT_ASKED} leaves them alone)')
    elif latency_us != NOT_ASKED:
        logger.info(f'CPU wake-up latency not held ({request.why_not}): targets streamed at '
                    f'20-50 Hz may take twice as long to reach the servos; {DOCS} says how '
                    f'to allow it')
    return request
