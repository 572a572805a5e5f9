"""What warms a cold publish: a joint command's publish after a 50 ms idle gap, warmed up how.

fabrik_ik publishes each joint command from a process idle since the last target. This
times, in such a process, ``Publisher.publish`` of a serialized JointState (as fabrik_ik
publishes it) to a subscriber in another process, after the gap, with the last 1.5 ms before
it (WarmUp's lead) given to nothing, to unrelated Python work, to a publish on a topic nobody
reads, or to a publish on another topic the same reader process reads (what fabrik_ik's
warm-up does since step m). docs/performance.md ("Step m") quotes it.

    .venv/bin/python bench/hop_cold.py [--samples 100] [--gap-ms 50]
"""

import argparse
import statistics
import subprocess
import sys
import time

from ros_env import isolate_ros

_READER = """
import rclpy
from rclpy.executors import ExternalShutdownException
from sensor_msgs.msg import JointState
rclpy.init()
node = rclpy.create_node('hop_cold_reader')
for topic in ('commands', 'warm_up'):
    node.create_subscription(JointState, topic, lambda _: None, 10, raw=True)
try:
    rclpy.spin(node)
except (KeyboardInterrupt, ExternalShutdownException):
    pass
"""


def main() -> None:
    """Print the publish's p50 / p90 for each kind of warm-up, in turns."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--samples', type=int, default=100)
    parser.add_argument('--gap-ms', type=float, default=50.0)
    args = parser.parse_args()
    isolate_ros()
    import rclpy
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from fabrik_ros.nodes.warm_up import LEAD_S

    reader = subprocess.Popen([sys.executable, '-c', _READER])
    rclpy.init()
    node = rclpy.create_node('hop_cold')
    commands = node.create_publisher(JointState, 'commands', 10)
    warm_up = node.create_publisher(JointState, 'warm_up', 10)
    nobody = node.create_publisher(JointState, 'nobody_reads', 10)
    data = bytes(serialize_message(JointState(name=[f'joint_{i}' for i in range(5)],
                                              position=[0.1] * 5)))

    def unrelated_work() -> None:
        total = 0
        for value in range(3000):
            total += value

    ways = {'nothing': None, 'unrelated Python work': unrelated_work,
            'a publish nobody reads': lambda: nobody.publish(data),
            'a publish to the same reader process': lambda: warm_up.publish(data)}
    taken: dict[str, list[float]] = {way: [] for way in ways}
    try:
        deadline = time.monotonic() + 30.0
        while commands.get_subscription_count() < 1 or warm_up.get_subscription_count() < 1:
            if time.monotonic() > deadline:
                raise SystemExit('hop_cold: the reader process never subscribed')
            time.sleep(0.05)
        gap_s = args.gap_ms / 1e3
        for _ in range(args.samples):       # in turns, so that the host's noise hits all alike
            for way, warm in ways.items():
                time.sleep(gap_s - LEAD_S)
                if warm is not None:
                    warm()
                time.sleep(LEAD_S)
                started = time.perf_counter()
                commands.publish(data)
                taken[way].append(time.perf_counter() - started)
    finally:
        reader.terminate()
        reader.wait()
        node.destroy_node()
        rclpy.shutdown()
    print(f'publish of a serialized JointState after {args.gap_ms:g} ms, the last '
          f'{LEAD_S * 1e3:g} ms after ... (µs, {args.samples} each)')
    for way, times in taken.items():
        deciles = statistics.quantiles([1e6 * t for t in times], n=10)
        print(f'  {way:38s} p50 {statistics.median(times) * 1e6:6.1f}  p90 {deciles[-1]:6.1f}')


if __name__ == '__main__':
    main()
