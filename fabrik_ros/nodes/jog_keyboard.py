"""jog_keyboard: jog the tool from a terminal's keys (TwistStamped on jog/twist, the gripper).

Run it in a terminal with the arm file, as every node: ``ros2 run fabrik_ros jog_keyboard
--ros-args --params-file <arm file>``. It prints its keys, reads them one at a time
(:class:`~fabrik_ros.hand_input.raw_terminal.RawTerminal`; the terminal's settings come back
on every way out: q, Ctrl-C, SIGTERM) and publishes ``jog/twist`` in the arm's base frame at
``rate_hz`` while a motion key is on, then one zero twist
(:class:`~fabrik_ros.hand_input.KeyJog` says when a key's motion ends: a terminal reports no
key releases). fabrik_ik's jog stops the arm when the twists stop (its timeout), so a stalled
terminal cannot leave it moving. o and c send GripperCommand goals as gripper_buttons does
(:mod:`fabrik_ros.nodes.gripper_goals`). Without a terminal on stdin it refuses to start.
"""

import signal
import sys
import time

from geometry_msgs.msg import TwistStamped
from rclpy.duration import Duration

from fabrik_ros.hand_input import KeyJog, KeyJogSettings, Twist
from fabrik_ros.hand_input.gripper_buttons import Jaw
from fabrik_ros.hand_input.key_jog import HELP, KeyAction
from fabrik_ros.hand_input.raw_terminal import RawTerminal
from fabrik_ros.nodes.configured_node import ConfiguredNode
from fabrik_ros.nodes.gripper_goals import declare_gripper_goals
from fabrik_ros.nodes.ros_parameters import declare, declare_arm, refuse_unknown_overrides
from fabrik_ros.nodes.spin import spin_until_shutdown
from fabrik_ros.nodes.timers import create_timer

TWIST_DEPTH = 10
_ZERO_ACK_S = 0.5
"""How long the last zero twist waits for its readers' acknowledgement at exit [s]."""


class JogKeyboardNode(ConfiguredNode):
    """Publish the keys' jog twists and send their gripper goals (see the module docstring).

    :param terminal_fd: the terminal to read (stdin's by default)
    :raises NotATerminalError: if it is not a terminal
    """

    def __init__(self, *, terminal_fd: int = 0, **node_options) -> None:
        terminal = RawTerminal(terminal_fd)       # refused before anything else is made
        super().__init__('jog_keyboard', **node_options)
        arm = declare_arm(self)
        rate = declare(self, 'rate_hz', 50.0, 'How often jog/twist is published while a key '
                       "moves [Hz] (fabrik_ik's jog stops 0.1 s after the last one)",
                       floats=(20.0, 200.0))
        settings = KeyJogSettings(
            linear_m_s=declare(self, 'linear_speed_m_s', 0.05, 'Speed of a linear key (w s a '
                               'd r f) at speed scale 1 [m/s]', floats=(0.001, 1.0)),
            angular_rad_s=declare(self, 'angular_speed_rad_s', 0.5, 'Speed of an angular key '
                                  '(i k j l) at speed scale 1 [rad/s]', floats=(0.01, 5.0)),
            tap_hold_s=declare(self, 'tap_hold_s', 0.6, "How long a key's first press moves "
                               "[s]: above the keyboard's auto-repeat delay, so a held key "
                               'moves without a gap', floats=(0.05, 2.0)),
            repeat_hold_s=declare(self, 'repeat_hold_s', 0.15, 'How long each auto-repeat '
                                  'keeps the motion on [s]: the motion ends this long after '
                                  'the key is let go', floats=(0.03, 1.0)))
        self._goals = declare_gripper_goals(self, arm)
        refuse_unknown_overrides(self)
        self._frame = arm.base_frame
        self._jog = KeyJog(settings)
        self._twists = self.create_publisher(TwistStamped, 'jog/twist', TWIST_DEPTH)
        self._terminal = terminal
        self._terminal.enter()
        self._say(HELP.format(tap=settings.tap_hold_s, repeat=settings.repeat_hold_s))
        self._say(f'Publishing on {self._twists.topic_name} in frame {self._frame!r}; '
                  + (f'gripper goals to {self._goals.action_name}.' if self._goals is not None
                     else 'the arm has no gripper: o and c do nothing.'))
        self._timer = create_timer(self, 1.0 / rate, self._on_tick)

    def _on_tick(self) -> None:
        now = time.monotonic()
        for char in self._terminal.read_keys():
            self._on_key(char, now)
        if self._terminal.closed:
            self._stop_process('the terminal closed')
        twist = self._jog.tick(now)
        if twist is not None:
            self._publish(twist)

    def _on_key(self, char: str, now: float) -> None:
        action = self._jog.key(char, now_s=now)
        if action in (KeyAction.OPEN, KeyAction.CLOSE):
            jaw = Jaw.OPEN if action is KeyAction.OPEN else Jaw.CLOSE
            self._say(self._goals.send(jaw) if self._goals is not None
                      else 'the arm has no gripper')
        elif action in (KeyAction.FASTER, KeyAction.SLOWER):
            settings, scale = self._jog.settings, self._jog.scale
            self._say(f'speed x{scale:.2f}: {settings.linear_m_s * scale:.3f} m/s, '
                      f'{settings.angular_rad_s * scale:.2f} rad/s')
        elif action is KeyAction.STOP:
            self._say('stop')
        elif action is KeyAction.QUIT:
            self._stop_process('quit')

    def _publish(self, twist: Twist) -> None:
        message = TwistStamped()
        message.header.stamp = self.get_clock().now().to_msg()
        message.header.frame_id = self._frame
        message.twist.linear.x, message.twist.linear.y, message.twist.linear.z = twist.linear
        message.twist.angular.x, message.twist.angular.y, message.twist.angular.z = (
            twist.angular)
        self._twists.publish(message)

    def _stop_process(self, why: str) -> None:
        """Ask the process to stop as Ctrl-C does (spin's stop request runs the cleanup)."""
        self._jog.stop()
        self._say(f'{why}: stopping')
        signal.raise_signal(signal.SIGINT)

    def _say(self, text: str) -> None:
        print(text, flush=True)

    def shutdown(self) -> None:
        """Send the zero twist if a key was moving, give the terminal its settings back."""
        if self._jog.moving:
            self._publish(Twist())
            # The process ends next: let the readers have it first (fabrik_ik's jog.timeout_s
            # would stop the arm anyway, later).
            self._twists.wait_for_all_acked(Duration(seconds=_ZERO_ACK_S))
        self._terminal.restore()

    def destroy_node(self) -> None:
        """Restore the terminal (if shutdown() did not), destroy the node."""
        terminal = getattr(self, '_terminal', None)
        if terminal is not None:
            terminal.restore()
        goals = getattr(self, '_goals', None)
        if goals is not None:
            goals.destroy()
        super().destroy_node()


def main(args=None) -> None:
    """Run jog_keyboard in this terminal until q, Ctrl-C or SIGTERM."""
    spin_until_shutdown(JogKeyboardNode, args if args is not None else sys.argv)


if __name__ == '__main__':
    main()
