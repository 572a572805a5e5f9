"""The servo driver's ``~/jog_us`` topic: move one servo by raw pulse width, for calibration.

A message (sensor_msgs/JointState) names joints in ``name`` and gives their pulse widths in
``position`` [µs]. Each pulse must lie in the jog guard (``jog_guard_us``, default
500-2500 µs); it is sent speed-limited like any command, and the board watchdog stays on.
While a jog session lasts, the jogged channels' board limits are opened to the guard and
joint commands are ignored. An empty message, or ``~/home``, ends it: the arm goes home
slowly, and the board limits of the calibration come back once it is there.
"""

from collections.abc import Callable
import time

from rclpy.node import Node
from sensor_msgs.msg import JointState

from fabrik_ros.driver.board_layout import BoardLayout
from fabrik_ros.driver.motion import MotionPlanner
from fabrik_ros.driver.pulse_jog import DEFAULT_GUARD_US, JogError, JogGuard, PulseJog
from fabrik_ros.kinematics import Arm
from fabrik_ros.nodes.ros_parameters import declare
from fabrik_ros.servo_io import MOVE_MAX_S, ServoLink

_WARN_EVERY_S = 2.0
GUARD_PARAMETER = 'jog_guard_us'
_RESTORE_CHECK_S = 0.1


def declare_jog_parameters(node: Node) -> None:
    """Declare ``jog_guard_us`` among the driver's parameters, before unknown ones are refused."""
    bounds = declare(node, GUARD_PARAMETER, list(DEFAULT_GUARD_US), 'Pulse widths a '
                     'calibration jog on ~/jog_us may reach: [min, max] [µs]')
    JogGuard.of(bounds)     # refused now, before the driver opens its port


class ServoJog:
    """Serve ``~/jog_us`` for a servo driver node (see the module docstring).

    :param refusal: returns why the driver cannot jog now ('' when it can)
    :param go_home: moves the arm home as ``~/home`` does (which calls :meth:`finish` if
        the arm goes) and returns its reply
    """

    def __init__(self, node: Node, arm: Arm, layout: BoardLayout, link: ServoLink,
                 planner: MotionPlanner, *, refusal: Callable[[], str],
                 go_home: Callable[[float], str]) -> None:
        self._node, self._arm, self._layout = node, arm, layout
        self._link, self._planner = link, planner
        self._refusal, self._go_home = refusal, go_home
        bounds = node.get_parameter(GUARD_PARAMETER).value
        guard = JogGuard.of(bounds).within(*link.capabilities.pulse_range_us)
        calibrations = {c.joint: c for c in arm.servo_map.pulse_servos()[0]}
        self._jog = PulseJog(calibrations, guard,
                             min_move_s=1.0 / node.get_parameter('control_rate_hz').value)
        self._restore_at_s = 0.0
        self._restore_timer = node.create_timer(_RESTORE_CHECK_S, self._on_restore_timer)
        self._restore_timer.cancel()
        node.create_subscription(JointState, '~/jog_us', self._on_jog, 10)

    @property
    def active(self) -> bool:
        """Return True while a jog session holds the servos (joint commands wait)."""
        return self._jog.active

    def _on_jog(self, msg: JointState) -> None:
        if not msg.name:
            reply = self._go_home(time.monotonic()) if self._jog.active else ''
            if self._jog.active:
                self._warn(f'jog_us: the jog goes on, the arm cannot go home: {reply}')
            return
        reason = self._refusal() or _shape_error(msg)
        if reason:
            self._warn(f'jog_us ignored: {reason}')
            return
        for joint, pulse in zip(msg.name, msg.position, strict=True):
            try:
                self._send(joint, float(pulse))
            except JogError as error:
                self._warn(f'jog_us ignored: {error}')

    def _send(self, joint: str, pulse_us: float) -> None:
        index = self._arm.joint_names.index(self._jog.calibration(joint).joint)
        sent = self._planner.sent or self._planner.home_rad    # every servo's position
        start_us = self._arm.servo_map.calibrations[index].units(sent[index])
        speeds = self._node.get_parameter('max_speed_rad_s').value
        move = self._jog.move(joint, pulse_us, speed_rad_s=speeds[index], start_us=start_us)
        self._restore_timer.cancel()
        self._link.set_limits(self._jog.widened_limits(self._layout.limits_us))
        pulses = [0] * self._layout.channels
        pulses[move.channel] = move.pulse_us
        self._link.set_pulses(pulses, min(move.move_s, MOVE_MAX_S))
        angles = list(sent)
        angles[index] = move.angle_rad
        self._planner.moved(angles, time.monotonic() + move.move_s)

    def finish(self, home_move_s: float) -> None:
        """End the jog session; the board limits come back after the move home [s] ends."""
        if self._jog.finish():
            self._restore_at_s = time.monotonic() + max(home_move_s, 0.0)
            self._restore_timer.reset()

    def _on_restore_timer(self) -> None:
        """Put the calibration's board limits back once the servos are home, not mid-move."""
        if self._jog.active:
            self._restore_timer.cancel()
        elif time.monotonic() >= self._restore_at_s:
            self._restore_timer.cancel()
            self._link.set_limits(self._layout.limits_us)

    def _warn(self, text: str) -> None:
        self._node.get_logger().warning(text, throttle_duration_sec=_WARN_EVERY_S)


def _shape_error(msg: JointState) -> str:
    if len(msg.position) != len(msg.name):
        return (f'{len(msg.name)} names and {len(msg.position)} positions, must be as many '
                'pulse widths [µs] as names')
    return ''
