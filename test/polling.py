"""Wait for a condition under a deadline: what tests do instead of sleeping before an assert."""

from collections.abc import Callable
import threading

from fabrik_ros.servo_io import Deadline


def poll(condition: Callable[[], bool], timeout_s: float = 3.0) -> bool:
    """Return True as soon as ``condition()`` holds, False once ``timeout_s`` has passed."""
    deadline = Deadline(timeout_s)
    tick = threading.Event()
    while not condition():
        if deadline.expired():
            return False
        tick.wait(0.005)
    return True
