"""An action server whose result is produced when the goal ends, not awaited while it runs.

rclpy runs a goal's execute callback as soon as ``goal_handle.execute()`` is called and takes
its return value as the result. A callback that awaits the goal's end is a coroutine task, and
rclpy's EventsExecutor resumes a waiting task without a pause: a busy core for as long as the
goal runs. A blocking one would stall the control tick. So here ``execute()`` only puts the
goal in EXECUTING (as ros2_control's controllers do once they accept a goal), and the execute
callback, a plain function, is scheduled by :meth:`ResultOnEndServer.send_result` once the
node's core says the goal has ended.
"""

from collections.abc import Callable
from typing import Any

from rclpy.action import ActionServer
from rclpy.action.server import ServerGoalHandle
from rclpy.node import Node

from fabrik_ros.servo_io import Deadline

# Longest shutdown waits for the results of the goals it ends to go out [s], and how long it
# then keeps the node up for them to reach their clients [s].
SHUTDOWN_RESULT_S = 1.0
RESULT_FLUSH_S = 0.2


class ResultOnEndServer(ActionServer):
    """An ActionServer whose execute callback ``result_of`` runs once the goal has ended.

    ``result_of(goal_handle)`` sets the goal's final state (succeed, abort, canceled) and
    returns its result; it must not block.
    """

    def __init__(self, node: Node, action_type: Any, name: str,
                 result_of: Callable[[ServerGoalHandle], Any], **callbacks: Any) -> None:
        super().__init__(node, action_type, name, execute_callback=result_of, **callbacks)
        self._result_of = result_of

    def notify_execute(self, goal_handle: Any, execute_callback: Any) -> None:
        """Do nothing: the result is produced once the goal ends (see :meth:`send_result`)."""

    def send_result(self, goal_handle: ServerGoalHandle) -> bool:
        """Schedule the goal's result; return False if the node is on no executor."""
        if self._node.executor is None:
            return False
        super().notify_execute(goal_handle, self._result_of)
        return True


def deliver_results(node: Node, pending: Callable[[], bool]) -> None:
    """Spin ``node`` until no result is ``pending``, then a moment more (the node is stopping).

    Call it while the node is still on its executor, after the goals' results were sent. A
    response written just before the node is destroyed is lost (rmw_fastrtps drops what its
    writer has not delivered yet): the results get :data:`RESULT_FLUSH_S` on the wire.
    """
    executor = node.executor
    if executor is None:
        return
    deadline = Deadline(SHUTDOWN_RESULT_S)
    while pending() and not deadline.expired():
        executor.spin_once(timeout_sec=0.01)
    flush = Deadline(RESULT_FLUSH_S)
    while not flush.expired():
        executor.spin_once(timeout_sec=0.01)
