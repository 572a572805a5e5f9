"""The ROS side of `make demo`: fabrik_ik + servo_driver + a client, in one rclpy Context."""

from collections.abc import Callable
from dataclasses import dataclass
import enum
import math
import os
from pathlib import Path
import time
from typing import Optional

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PoseStamped
from nav_msgs.msg import Path as PathMsg
import numpy as np
import rclpy
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState

from fabrik_ros.demo.pin_board import PinBoard, readout_for
from fabrik_ros.kinematics import Arm
from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.executor import make_executor
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.process.stop import StopRequest

WAIT_S = 15.0
_SPIN_STEP_S = 0.01
_ARRIVED_M = 1e-3
# A path has ended when fabrik_ik has sent nothing for this long (it sends a command every
# control period while it follows): a command within _ARRIVED_M of the end may not be the last.
_PATH_QUIET_S = 0.3


class Kind(enum.Enum):
    """How a target is sent to fabrik_ik."""

    POINT = 'target_point'
    POSE = 'target_pose'
    PATH = 'target_path'


class Outcome(enum.Enum):
    """What became of a target."""

    REACHED = 'reached'
    CLOSEST = 'closest pose'    # out of reach: the arm stretches toward it
    REJECTED = 'rejected'       # not finite, or not in the base frame: the arm stays


@dataclass(frozen=True)
class Step:
    """One target of the sequence (a path: its poses) and the outcome it should have."""

    label: str
    kind: Kind
    points: tuple[tuple[float, float, float], ...]
    expect: Outcome
    frame_id: str = 'base_link'


@dataclass(frozen=True)
class Row:
    """What became of one step: the pose commanded and what the board's outputs hold.

    :param residual_m: distance from the commanded pose's tool point to the (last) target
    :param held: the board's pulses [µs] or the bus servos' positions [counts]
        (:class:`~fabrik_ros.demo.pin_board.Readout`)
    :param seconds: from sending the target until the board held the commanded pose
        (for a rejected one: until fabrik_ik reported the rejection)
    :param commands: joint commands fabrik_ik published for the step
    """

    step: Step
    outcome: Outcome
    residual_m: float
    angles_rad: Optional[tuple[float, ...]]
    held: tuple[int, ...]
    seconds: float
    commands: int


class DemoError(RuntimeError):
    """A step did not complete in time."""


class DemoStopped(Exception):  # noqa: N818 (a stop asked for, not an error)
    """SIGINT or SIGTERM asked the demo to stop (not a failure)."""


class DemoSession:
    """Run fabrik_ik and servo_driver against ``board`` and send them targets one by one."""

    def __init__(self, arm: Arm, board: PinBoard, config: Path, *,
                 max_speed_rad_s: float = 3.0, home_move_s: float = 1.0,
                 stop: Optional[StopRequest] = None) -> None:
        self._arm = arm
        self._stop = stop
        self._board = board
        self.readout = readout_for(arm)
        self._context = rclpy.Context()
        # The caller handles SIGINT and SIGTERM (``stop``): rclpy's handlers would raise
        # KeyboardInterrupt in the middle of the cleanup.
        rclpy.init(context=self._context, signal_handler_options=SignalHandlerOptions.NO)
        self._executor = make_executor(self._context)
        speeds = ', '.join([str(max_speed_rad_s)] * len(arm.joints))
        # A namespace of its own, so that nothing else in the DDS domain can talk to it.
        namespace = f'fabrik_demo_{os.getpid()}'
        common = ['--ros-args', '--params-file', str(config), '-r', f'__ns:=/{namespace}',
                  '-p', 'diagnostics_period_s:=0.2']
        self._ik = FabrikIkNode(context=self._context, cli_args=[
            *common, '-p', 'interactive_target:=false', '-p', 'path_speed_m_s:=0.1'])
        self._driver = ServoDriverNode(context=self._context, cli_args=[
            *common, '-p', f'port:={board.path}', '-p', f'protocol:={board.protocol.value}',
            '-p', f'home_move_time_s:={home_move_s}', '-p', f'max_speed_rad_s:=[{speeds}]'])
        self._client = rclpy.create_node('demo_client', namespace=namespace,
                                         context=self._context)
        self._ik_status = f'{namespace}/fabrik_ik: inverse kinematics'
        self._driver_status = f'{namespace}/servo_driver: servo board'
        self._nodes = (self._ik, self._driver, self._client)
        for node in self._nodes:
            self._executor.add_node(node)
        self._commands: list[JointState] = []
        self._last_command_s = 0.0
        self._statuses: dict[str, dict[str, str]] = {}
        self._client.create_subscription(JointState, 'joint_commands', self._on_command, 100)
        self._client.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics,
                                         10)
        self._publishers = {
            Kind.POINT: self._client.create_publisher(PointStamped, Kind.POINT.value, 10),
            Kind.POSE: self._client.create_publisher(PoseStamped, Kind.POSE.value, 10),
            Kind.PATH: self._client.create_publisher(PathMsg, Kind.PATH.value, 10)}

    def __enter__(self) -> 'DemoSession':
        """Return the session; the nodes already run."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop the driver (servos hold), the nodes and the Context."""
        self._driver.shutdown()
        for node in self._nodes:
            self._executor.remove_node(node)
            node.destroy_node()
        self._executor.shutdown()
        rclpy.shutdown(context=self._context)

    def wait_home(self) -> float:
        """Wait for the safe start to bring the arm home; return how long it took [s]."""
        started = time.monotonic()
        self._spin_until(lambda: all(p.get_subscription_count() for p in
                                     self._publishers.values()), 'fabrik_ik to subscribe')
        self._wait_board(self._arm.home, 'the safe start to bring the arm home')
        return time.monotonic() - started

    def run(self, step: Step) -> Row:
        """Send ``step``, wait for its outcome and for the board, and describe what happened."""
        commands_before = len(self._commands)
        rejected_before = self._rejected()
        started = time.monotonic()
        self._publishers[step.kind].publish(_message(step))

        def done() -> bool:
            return (self._rejected() > rejected_before
                    or self._arrived(step, commands_before))

        self._spin_until(done, f'fabrik_ik to answer step {step.label!r}')
        if self._rejected() > rejected_before:
            return Row(step, Outcome.REJECTED, math.nan, None, self._pins(),
                       time.monotonic() - started, 0)
        angles = tuple(float(a) for a in self._commands[-1].position)
        self._wait_board(angles, f'the board to hold the pose of step {step.label!r}')
        residual = float(np.linalg.norm(self._arm.fk(angles)[-1] - step.points[-1]))
        outcome = (Outcome.REACHED if residual <= self._arm.options.tolerance_m
                   else Outcome.CLOSEST)
        return Row(step, outcome, residual, angles, self._pins(), time.monotonic() - started,
                   len(self._commands) - commands_before)

    def driver_summary(self) -> str:
        """Return the driver's last diagnostics in one line (a bus has no nacks: left out)."""
        values = self._statuses.get(self._driver_status, {})
        keys = ('state', 'commands', 'coalesced', 'nacks', 'retries', 'reconnects',
                'round trip median [ms]', 'round trip p99 [ms]')
        heard = ', '.join(f'{key} {values[key]}' for key in keys if key in values)
        return 'servo_driver: ' + (heard or 'no diagnostics heard')

    # -- helpers -----------------------------------------------------------------------------

    def _arrived(self, step: Step, commands_before: int) -> bool:
        """Return True once fabrik_ik published the (last) command for ``step``."""
        if len(self._commands) <= commands_before:
            return False
        if step.kind is not Kind.PATH:
            return True
        tip = self._arm.fk(list(self._commands[-1].position))[-1]
        return (float(np.linalg.norm(tip - step.points[-1])) < _ARRIVED_M
                and time.monotonic() - self._last_command_s >= _PATH_QUIET_S)

    def _on_command(self, msg: JointState) -> None:
        self._commands.append(msg)
        self._last_command_s = time.monotonic()

    def _wait_board(self, angles, what: str) -> None:
        expected = tuple(self.readout.expected(angles))
        self._spin_until(lambda: self._pins() == expected, what)

    def _pins(self) -> tuple[int, ...]:
        return self.readout.read(self._board)

    def _rejected(self) -> int:
        return int(self._statuses.get(self._ik_status, {}).get('rejected targets', 0))

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            self._statuses[status.name] = {kv.key: kv.value for kv in status.values}

    def _spin_until(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while not condition():
            if self._stop is not None and self._stop.signal is not None:
                raise DemoStopped(f'stopped by {self._stop.signal.name} waiting for {what}')
            if time.monotonic() > deadline:
                raise DemoError(f'timed out after {WAIT_S} s waiting for {what}')
            self._executor.spin_once(timeout_sec=_SPIN_STEP_S)


def _message(step: Step):
    """Return the message that sends ``step`` on its topic."""
    if step.kind is Kind.POINT:
        msg = PointStamped()
        msg.header.frame_id = step.frame_id
        msg.point.x, msg.point.y, msg.point.z = step.points[0]
        return msg
    poses = [_pose(point, step.frame_id) for point in step.points]
    if step.kind is Kind.POSE:
        return poses[0]
    path = PathMsg()
    path.header.frame_id = step.frame_id
    path.poses = poses
    return path


def _pose(point, frame_id: str) -> PoseStamped:
    pose = PoseStamped()
    pose.header.frame_id = frame_id
    pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = point
    pose.pose.orientation.w = 1.0
    return pose
