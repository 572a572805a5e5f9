"""A FollowJointTrajectory client and a JointTrajectory publisher for the node tests."""

from collections.abc import Sequence
import math
from typing import Optional

from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from rcl_interfaces.msg import Log
from rclpy.action import ActionClient
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

# Deadlines for conditions, never for how fast something is.
WAIT_S = 30.0
STATUS = {GoalStatus.STATUS_SUCCEEDED: 'SUCCEEDED', GoalStatus.STATUS_ABORTED: 'ABORTED',
          GoalStatus.STATUS_CANCELED: 'CANCELED'}


def duration(seconds: float) -> Duration:
    """Return ``seconds`` as a builtin_interfaces Duration."""
    whole = math.floor(seconds)
    return Duration(sec=int(whole), nanosec=int(round((seconds - whole) * 1e9)))


def point(t_s: float, positions: Sequence[float], velocities: Sequence[float] = (),
          accelerations: Sequence[float] = ()) -> JointTrajectoryPoint:
    """Return a trajectory point ``t_s`` after the start."""
    return JointTrajectoryPoint(positions=[float(p) for p in positions],
                                velocities=[float(v) for v in velocities],
                                accelerations=[float(a) for a in accelerations],
                                time_from_start=duration(t_s))


def trajectory(names: Sequence[str], points: Sequence[JointTrajectoryPoint]) -> JointTrajectory:
    """Return a JointTrajectory of ``points`` for the joints ``names`` (stamp zero: now)."""
    return JointTrajectory(joint_names=list(names), points=list(points))


def goal(names: Sequence[str], points: Sequence[JointTrajectoryPoint]
         ) -> FollowJointTrajectory.Goal:
    """Return a FollowJointTrajectory goal of ``points`` (stamp zero, default tolerances)."""
    return FollowJointTrajectory.Goal(trajectory=trajectory(names, points))


class TrajectoryClient:
    """A probe node with the action client, the topic publisher, joint_states and /rosout."""

    def __init__(self, ros, controller: str = 'arm_controller') -> None:
        self.ros = ros
        self.node = ros.probe('trajectory_client')
        prefix = f'{ros.namespace}/{controller}'
        self.client = ActionClient(self.node, FollowJointTrajectory,
                                   f'{prefix}/follow_joint_trajectory')
        self.publisher = self.node.create_publisher(JointTrajectory, f'{prefix}/joint_trajectory',
                                                    10)
        self.feedback: list = []
        self.states: list[JointState] = []
        self.logs: list[Log] = []
        self.node.create_subscription(JointState, 'joint_states', self.states.append, 10)
        self.node.create_subscription(Log, '/rosout', self._on_log, 100)

    def _on_log(self, msg: Log) -> None:
        if msg.name.startswith(self.ros.namespace.lstrip('/').replace('/', '.')):
            self.logs.append(msg)

    def close(self) -> None:
        """Destroy the action client (before its node goes)."""
        self.client.destroy()

    def wait_server(self) -> None:
        """Wait until the action server is there."""
        self.ros.spin_until(self.client.server_is_ready, timeout_s=WAIT_S,
                            what='the FollowJointTrajectory server')

    def send(self, request: FollowJointTrajectory.Goal):
        """Send a goal; return its client goal handle (``accepted`` says whether it was)."""
        self.wait_server()
        future = self.client.send_goal_async(
            request, feedback_callback=lambda msg: self.feedback.append(msg.feedback))
        self.ros.spin_until(future.done, timeout_s=WAIT_S, what='the goal response')
        return future.result()

    def send_once_ready(self, request: FollowJointTrajectory.Goal):
        """Send a goal until it is accepted: the driver refuses goals during its safe start."""
        handles = []

        def accepted() -> bool:
            handles.append(self.send(request))
            return handles[-1].accepted
        self.ros.spin_until(accepted, timeout_s=WAIT_S, what='the driver to accept the goal')
        return handles[-1]

    def result(self, handle):
        """Wait for the goal's result; return (status name, error_code, error_string)."""
        future = handle.get_result_async()
        self.ros.spin_until(future.done, timeout_s=WAIT_S, what='the goal result')
        response = future.result()
        return (STATUS.get(response.status, str(response.status)),
                response.result.error_code, response.result.error_string)

    def run(self, request: FollowJointTrajectory.Goal):
        """Send a goal that must be accepted; return its result as :meth:`result` does."""
        handle = self.send(request)
        assert handle.accepted, 'the goal was refused'
        return self.result(handle)

    def cancel(self, handle) -> None:
        """Ask to cancel the goal and wait for the answer (the goal is canceling)."""
        future = handle.cancel_goal_async()
        self.ros.spin_until(future.done, timeout_s=WAIT_S, what='the cancel response')
        assert future.result().goals_canceling, 'the cancel was refused'

    def publish(self, msg: JointTrajectory) -> None:
        """Publish ``msg`` on the JointTrajectory topic once the node subscribes."""
        self.ros.spin_until(lambda: self.publisher.get_subscription_count() > 0,
                            timeout_s=WAIT_S, what='the JointTrajectory subscription')
        self.publisher.publish(msg)

    def positions(self, names: Sequence[str]) -> Optional[list[float]]:
        """Return the latest joint_states positions of ``names``, None before one came."""
        if not self.states:
            return None
        latest = self.states[-1]
        by_name = dict(zip(latest.name, latest.position, strict=True))
        return [by_name[name] for name in names]

    def wait_at(self, names: Sequence[str], target: Sequence[float], tolerance: float,
                what: str) -> None:
        """Wait until joint_states show ``names`` within ``tolerance`` of ``target``."""
        def there() -> bool:
            now = self.positions(names)
            return now is not None and all(abs(a - b) <= tolerance
                                           for a, b in zip(now, target, strict=True))
        self.ros.spin_until(there, timeout_s=WAIT_S,
                            what=lambda: f'{what}: at {self.positions(names)}, not {target}')

    def wait_still(self, names: Sequence[str], count: int = 10,
                   tolerance: float = 1e-6) -> list[float]:
        """Wait for ``count`` more joint_states; return the first, checking the others are at it.

        :param tolerance: how far they may differ [rad] (a report's resolution)
        """
        start = len(self.states)
        self.ros.spin_until(lambda: len(self.states) >= start + count, timeout_s=WAIT_S,
                            what=f'{count} joint_states')
        seen = []
        for msg in self.states[start:]:
            by_name = dict(zip(msg.name, msg.position, strict=True))
            seen.append([by_name[name] for name in names])
        assert all(max(abs(a - b) for a, b in zip(s, seen[0], strict=True)) <= tolerance
                   for s in seen), f'the joints kept moving: {seen}'
        return seen[0]

    def warnings(self, text: str) -> list[str]:
        """Return the WARN lines of the test's nodes holding ``text``."""
        return [m.msg for m in self.logs if m.level == Log.WARN and text in m.msg]
