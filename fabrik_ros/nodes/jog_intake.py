"""fabrik_ik's jog topics: ``jog/twist`` (TwistStamped) and ``jog/joints`` (JointJog).

MoveIt Servo's semantics: a twist (linear m/s, angular rad/s, in its header's frame) or joint
velocities (rad/s) hold until a newer command or until ``jog.timeout_s`` after the command
(its stamp, or its arrival for a zero stamp), and are integrated at ``jog.rate_hz`` by the
pure core (:mod:`fabrik_ros.kinematics.jog`) into joint commands within limits and the joint
speed limits ``max_speed_rad_s``. The tick timer runs only while a jog does.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from control_msgs.msg import JointJog
from geometry_msgs.msg import TwistStamped
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.time import Time

from fabrik_ros.kinematics import Arm, TargetError
from fabrik_ros.kinematics.jog import (
    checked_components,
    JogError,
    JogLimits,
    JogStep,
    joint_step,
    joint_velocities,
    tool_rotation,
    TwistJog,
)
from fabrik_ros.monitoring.cause_throttle import CauseThrottle
from fabrik_ros.nodes.ros_parameters import declare, speed_limits_refusal
from fabrik_ros.nodes.timers import create_timer

TOOL_FRAME = 'tool_link'
"""The generated URDF's tool link: a twist in it is turned into the base frame by the arm's
own FK of the current command (current, where tf would lag)."""
STAMP_SKEW_S = 0.05
"""A command stamped further than this ahead of the node's clock is refused [s]."""
_LATEST = 1
_WARN_EVERY_S = 2.0
_HELD = {'edge': 'the tool is at the edge of its reach: it slides along what it can reach',
         'limit': 'the approach or the roll cannot be kept there (a joint limit, the reach): '
                  'it gives way, the point moves on',
         'slow': 'near a singular pose (the arm stretched or folded, the tool over the base) '
                 'the joint speed limits allow only a small part of the twist: jog another way '
                 'first',
         'jump': 'no step within the joint speed limits goes that way (the arm stretched or '
                 'folded): holding still'}

RotationToBase = Callable[[str, Time], np.ndarray]
"""Return the rotation that turns a vector of ``frame_id`` (at ``stamp``) into the base frame;
raise a TargetError naming the frame when it cannot."""


def base_frame_only(base_frame: str) -> RotationToBase:
    """Return a RotationToBase that knows the base frame ('' too) and refuses any other."""
    def rotation(frame_id: str, stamp: Time) -> np.ndarray:
        if frame_id in ('', base_frame):
            return np.eye(3)
        raise JogError('wrong frame', f"frame_id {frame_id!r} is neither the arm's base frame "
                                      f"'{base_frame}' nor its tool frame '{TOOL_FRAME}' (no "
                                      f"tf2 here: send twists in '{base_frame}' or "
                                      f"'{TOOL_FRAME}')")
    return rotation


@dataclass(frozen=True)
class _Command:
    """The jog being made: a twist (base or tool frame) or joint velocities, and its end [ns]."""

    ends_ns: int
    linear: np.ndarray
    angular: np.ndarray
    in_tool: bool
    velocities: Optional[dict[int, float]] = None


class JogIntake:
    """fabrik_ik's jog: subscriptions, the tick timer, the checks of every command.

    :param node: fabrik_ik
    :param arm: returns the node's current arm (solver options change at run time)
    :param seed: returns where the arm is (the last command in a stream, else joint_states)
    :param send: publishes one joint command: (angles, tool point, approach or None, reached)
    :param stop_path: ends a path being followed (a jog ends it)
    :param rotation_to_base: turns another frame's vectors into the base frame
    """

    def __init__(self, node: Node, *, arm: Callable[[], Arm],
                 seed: Callable[[], Optional[tuple[float, ...]]],
                 send: Callable[[tuple[float, ...], tuple, Optional[tuple], bool], None],
                 stop_path: Callable[[], None],
                 rotation_to_base: Optional[RotationToBase] = None) -> None:
        self._node, self._arm, self._seed, self._send = node, arm, seed, send
        self._stop_path = stop_path
        self._rotation = rotation_to_base or base_frame_only(arm().base_frame)
        self._warnings = CauseThrottle(_WARN_EVERY_S)
        node.add_on_set_parameters_callback(self._on_set_parameters)    # checks the declaration
        self._declare()
        self._twists = TwistJog(arm())
        self._command: Optional[_Command] = None
        self._twist_topic = node.resolve_topic_name('jog/twist')
        self._joints_topic = node.resolve_topic_name('jog/joints')
        node.create_subscription(TwistStamped, 'jog/twist', self._on_twist, _LATEST)
        node.create_subscription(JointJog, 'jog/joints', self._on_joints, _LATEST)
        self._timer = create_timer(node, self._dt_s, self._on_tick)
        self._timer.cancel()

    def _declare(self) -> None:
        node, n = self._node, len(self._arm().joints)
        rate_hz = declare(node, 'jog.rate_hz', 50.0, 'How often a jog is integrated into a '
                          'joint command [Hz]', floats=(1.0, 200.0))
        self._dt_s = 1.0 / rate_hz
        declare(node, 'jog.timeout_s', 0.1, 'A jog command older than this stops the motion '
                '(its stamp, or its arrival for a zero stamp) [s]', floats=(0.01, 10.0),
                read_only=False)
        declare(node, 'jog.max_linear_m_s', 0.1, "Cap on the jogged tool point's speed [m/s]",
                floats=(0.001, 2.0), read_only=False)
        declare(node, 'jog.max_angular_rad_s', 1.0, "Cap on the jogged approach's turning "
                'speed [rad/s]', floats=(0.01, 20.0), read_only=False)
        declare(node, 'max_speed_rad_s', [1.5] * n, 'Fastest each joint may move, one value '
                f'per joint in joint_names order ({n}), as servo_driver takes it: a jog keeps '
                'within it [rad/s]', read_only=False)

    def _on_set_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        """Refuse a ``max_speed_rad_s`` that is not one speed in (0, 100] per joint."""
        names = self._arm().joint_names
        for parameter in parameters:
            reason = (speed_limits_refusal(parameter.value, names)
                      if parameter.name == 'max_speed_rad_s' else '')
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    @property
    def active(self) -> bool:
        """Return True while a jog command holds (its tick timer runs)."""
        return self._command is not None

    def stop(self) -> None:
        """End the jog (a target came): nothing more until the next command."""
        if self._command is not None:
            self._command = None
            self._timer.cancel()

    # -- commands ----------------------------------------------------------------------------

    def _on_twist(self, msg: TwistStamped) -> None:
        topic = self._twist_topic
        try:
            stamp = _stamp(msg.header.stamp, topic)
            ends_ns = self._ends_ns(stamp, topic)
            linear = checked_components(f'{topic} linear', _xyz(msg.twist.linear))
            angular = checked_components(f'{topic} angular', _xyz(msg.twist.angular))
            frame = msg.header.frame_id
            in_tool = frame == TOOL_FRAME
            if not in_tool:
                rotation = self._rotation(frame, stamp)
                linear, angular = rotation @ linear, rotation @ angular
        except TargetError as error:
            self._refuse(topic, error)
            return
        self._start(_Command(ends_ns, linear, angular, in_tool),
                    moving=bool(linear.any() or angular.any()))

    def _on_joints(self, msg: JointJog) -> None:
        topic = self._joints_topic
        try:
            ends_ns = self._ends_ns(_stamp(msg.header.stamp, topic), topic)
            if not msg.velocities and msg.displacements:
                raise JogError('displacements', f'{topic} takes velocities (as MoveIt Servo '
                                                f'does); displacements are not used')
            velocities = joint_velocities(self._arm().joint_names, list(msg.joint_names),
                                          list(msg.velocities), topic=topic)
        except TargetError as error:
            self._refuse(topic, error)
            return
        zero = np.zeros(3)
        self._start(_Command(ends_ns, zero, zero, False, velocities),
                    moving=any(v != 0.0 for v in velocities.values()))

    def _ends_ns(self, stamped: Time, topic: str) -> int:
        """Return when a command stamped ``stamped`` times out [ns], or refuse it."""
        now = self._node.get_clock().now().nanoseconds
        timeout_ns = int(self._node.get_parameter('jog.timeout_s').value * 1e9)
        stamp = stamped.nanoseconds or now
        if stamp - now > STAMP_SKEW_S * 1e9:
            raise JogError('future', f'{topic} is stamped {(stamp - now) * 1e-9:.3f} s in the '
                                     f"future of this node's clock (more than "
                                     f'{STAMP_SKEW_S} s): clocks out of step?')
        if now - stamp > timeout_ns:
            raise JogError('stale', f'{topic} is {(now - stamp) * 1e-9:.3f} s old, older than '
                                    f'jog.timeout_s ({timeout_ns * 1e-9:g} s)')
        return min(stamp, now) + timeout_ns

    def _start(self, command: _Command, *, moving: bool) -> None:
        """Make ``command`` the jog; a zero one stops it (nothing to integrate)."""
        if not moving:
            self.stop()
            return
        self._stop_path()
        if self._command is None:
            self._timer.reset()
        self._command = command

    def _refuse(self, topic: str, error: TargetError) -> None:
        if self._warnings.allow((topic, getattr(error, 'cause', 'unsolvable'))):
            text = str(error)
            where = '' if text.startswith(topic) else f'{topic}: '
            self._node.get_logger().warning(f'jog dropped: {where}{text}')

    # -- ticks -------------------------------------------------------------------------------

    def _on_tick(self) -> None:
        command = self._command
        if command is None or self._node.get_clock().now().nanoseconds > command.ends_ns:
            self.stop()
            return
        arm = self._arm()
        angles = self._seed() or tuple(float(a) for a in arm.home)
        speeds = tuple(self._node.get_parameter('max_speed_rad_s').value)
        if command.velocities is not None:
            self._joint_tick(arm, angles, command.velocities, speeds)
        else:
            self._twist_tick(arm, angles, command, speeds)

    def _twist_tick(self, arm: Arm, angles: tuple[float, ...], command: _Command,
                    speeds: tuple[float, ...]) -> None:
        linear, angular = command.linear, command.angular
        if command.in_tool:
            rotation = tool_rotation(arm, angles)
            linear, angular = rotation @ linear, rotation @ angular
        limits = JogLimits(speeds, self._node.get_parameter('jog.max_linear_m_s').value,
                           self._node.get_parameter('jog.max_angular_rad_s').value)
        try:
            step: JogStep = self._twists.step(arm, angles, linear, angular, self._dt_s, limits)
        except TargetError as error:
            self._refuse(self._twist_topic, error)
            self.stop()
            return
        if step.held and self._warnings.allow((self._twist_topic, step.held)):
            self._node.get_logger().warning(f'{self._twist_topic}: {_HELD[step.held]}')
        if step.held != 'jump':
            self._send(step.angles_rad, step.goal_m, step.approach, step.held != 'edge')

    def _joint_tick(self, arm: Arm, angles: tuple[float, ...], velocities: dict[int, float],
                    speeds: tuple[float, ...]) -> None:
        moved, held = joint_step(arm, angles, velocities, self._dt_s, speeds)
        if held and self._warnings.allow((self._joints_topic, 'limit')):
            self._node.get_logger().warning(
                f'{self._joints_topic}: {", ".join(held)} at a limit: held there')
        tool = tuple(float(v) for v in arm.fk(moved)[-1])
        self._send(moved, tool, None, True)


def _xyz(vector) -> tuple[float, float, float]:
    return (vector.x, vector.y, vector.z)


def _stamp(stamp_msg, topic: str) -> Time:
    """Return a header's stamp as a Time, or refuse one that is no time (negative seconds)."""
    try:
        return Time.from_msg(stamp_msg)
    except ValueError:
        raise JogError('bad stamp', f'{topic}: stamp {stamp_msg.sec} s {stamp_msg.nanosec} ns '
                                    f'is not a time') from None
