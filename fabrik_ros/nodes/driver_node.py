"""servo_driver: joint commands in, calibrated servo units out to a servo board or bus."""

import time
from typing import Optional

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger

from fabrik_ros.driver.arm_state_machine import Actions, LogLine, Phase
from fabrik_ros.driver.aux_axis import COUNT_AUX_SPEED_RAD_S, PULSE_AUX_SPEED_PER_S
from fabrik_ros.driver.board_layout import check_board_channels
from fabrik_ros.driver.bus_output import bus_options, BusOutput
from fabrik_ros.driver.heat_guard import HeatLimits, TEMPERATURE_ERROR_C, TEMPERATURE_WARN_C
from fabrik_ros.driver.pulse_output import PulseOutput
from fabrik_ros.driver.servo_driver import (
    BUS_START_WAIT_S,
    FinalState,
    reply_of,
    ServoDriver,
    START_WAIT_S,
)
from fabrik_ros.driver.servo_output import servo_addresses, ServoHealth, ServoOutput
from fabrik_ros.nodes.configured_node import ConfiguredNode
from fabrik_ros.nodes.diagnostics import (
    diagnostic_array,
    diagnostic_status,
    Level,
    status_name,
)
from fabrik_ros.nodes.gripper_driver import (
    declare_driver_gripper_parameters,
    driver_gripper_actions,
)
from fabrik_ros.nodes.joint_states import JointStateMessage
from fabrik_ros.nodes.log_lines import log_line
from fabrik_ros.nodes.ros_parameters import (
    declare,
    declare_arm,
    ParameterConfigError,
    refuse_unknown_overrides,
    speed_limits_refusal,
)
from fabrik_ros.nodes.servo_jog import declare_jog_parameters, ServoJog
from fabrik_ros.nodes.spin import spin_until_shutdown
from fabrik_ros.nodes.timers import create_timer, set_period
from fabrik_ros.nodes.trajectory_actions import declare_trajectory_parameters, TrajectoryActions
from fabrik_ros.servo_io import (
    LinkOptions,
    OFFERED_PROTOCOLS,
    Protocol,
    WatchdogAction,
)
from fabrik_ros.servo_io.bus_line import BUS_BAUD

__all__ = ['FinalState', 'ServoDriverNode', 'main']

_SLOTTED_FRAME_S = 0.02       # the board's default frame: one 3 ms slot per channel, 50 Hz
# While the arm rests the control tick only looks for link news this often [s].
RESTING_TICK_S = 0.1
_CHOICES = {'protocol': [p.value for p in OFFERED_PROTOCOLS],
            'on_shutdown': [s.value for s in FinalState],
            'board_timeout_action': [FinalState.HOLD.value, FinalState.DETACH.value]}
# The line speed when `baud` is 0: our Uno firmware's (the SSC-32U and the Maestro set up as
# the docs say), and the bus servos' as they leave the factory (STS3215, Dynamixel X).
_PWM_BAUD = LinkOptions().baud
_BUS_BAUD = BUS_BAUD
_JOG_HOLDS = 'a calibration jog holds the servos (~/home or an empty ~/jog_us ends it)'
_PROTOCOL_NOTES = {
    Protocol.NATIVE: 'our Uno firmware, hardware/PROTOCOL.md',
    Protocol.SSC32: 'Lynxmotion SSC-32U', Protocol.MAESTRO: 'Pololu Maestro',
    Protocol.FEETECH: 'Feetech STS bus servos', Protocol.DYNAMIXEL: 'Dynamixel Protocol 2.0',
}


class ServoDriverNode(ConfiguredNode):
    """Send speed-limited joint commands to the servos as calibrated units (µs or counts).

    The node is wiring: what it decides lives in :class:`ServoDriver` (pure, see
    :mod:`fabrik_ros.driver.servo_driver`), the servos behind a
    :class:`~fabrik_ros.driver.servo_output.ServoOutput` picked by ``protocol``.

    - Safe start: once the board answers, the servos are held where the board reports them
      (if it does), then the arm moves to its home pose over ``home_move_time_s`` (longer if
      the speed limits need it), then follows
      ``joint_commands`` (matched by joint name) at no more than ``max_speed_rad_s`` per joint
      (``aux_max_speed`` for the auxiliary servos, which start where they stand too).
      A command is stepped toward and sent as it arrives; the ``control_rate_hz`` tick carries
      on the moves the speed limits spread over time.
    - Commands are latched (the command-timeout behaviour is *hold*): without new commands
      the arm finishes the move to the last one and holds it, however long that is. If the
      driver itself dies, the board's watchdog (native protocol, ``board_timeout_s``) holds or
      detaches as ``board_timeout_action`` says.
    - A missing or unplugged port never stops the node: a WARN line (per cause, every 10 s)
      and /diagnostics say why, the link reopens the same path with back-off, an INFO line
      says when the board is back, and motion resumes toward the latest command from the
      pose the board reports.
    - ``~/home`` (Trigger) moves home slowly; ``~/enable`` (SetBool) attaches or detaches
      the servos. Both are requests to the state machine, which holds the enable request
      across connects and reconnects (while detached, commands are kept and followed after
      re-attaching, and ``~/home`` is refused with the reason).
    - ``~/reboot`` (Trigger) reboots the Dynamixel servos a hardware error shut down
      (overload, overheating, electrical shock: limp until rebooted), else every one; the
      reply names them. Each holds where it stands once it answers again, torqued as
      attached, then moves on to the latest command at the speed limits. Refused with the
      reason on Feetech (no reboot: its 0x06 is a factory reset) and PWM boards, while
      detached, and while the board is not connected.
    - ``joint_states`` carries every servo of the arm file: the joints [rad], then the
      auxiliary servos in their unit (PWM: the fraction of the pulse range; bus: rad).
      ``~/servo_positions`` carries the servos' raw units as the board reported them.
    - On shutdown the servos hold, detach, or move home and hold, as ``on_shutdown`` says.
    """

    def __init__(self, **node_options) -> None:
        super().__init__('servo_driver', **node_options)
        # The on-set callback checks every declaration, but applies speed and home-time
        # changes only once the driver, built from the declared values, exists.
        self._driver: Optional[ServoDriver] = None
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._arm = declare_arm(self)
        self._names = self._arm.joint_names
        self._declare_own_parameters()
        refuse_unknown_overrides(self)
        self._output = self._open_output()
        self._jog: Optional[ServoJog] = None
        self._driver = ServoDriver(
            self._arm, self._output, speeds_rad_s=self._parameter('max_speed_rad_s'),
            home_move_s=self._parameter('home_move_time_s'),
            step_s=1.0 / self._parameter('control_rate_hz'), clock=time.monotonic,
            log=self._log, busy=lambda: _JOG_HOLDS if self._jog and self._jog.active else '',
            start_wait_s=BUS_START_WAIT_S if self._output.protocol.is_bus else START_WAIT_S,
            aux_speed=self._parameter('aux_max_speed'), heat=self._heat_limits())
        self._gripper = driver_gripper_actions(self, self._driver, self._output, self._arm,
                                               self._gripper_parameters, log=self._log,
                                               after_command=self._pace_ticks)
        if isinstance(self._output, PulseOutput):
            self._jog = ServoJog(self, self._arm, self._output.layout, self._output.link,
                                 self._driver.planner, refusal=self._jog_refusal,
                                 go_home=lambda _now: reply_of(self._go_home()).message)
        self._output.start()
        self._trajectory = TrajectoryActions(self, self._core, self._trajectory_parameters,
                                             started=self._pace_ticks)
        self._states = self.create_publisher(JointState, 'joint_states', 10)
        self._servo_positions = self.create_publisher(JointState, '~/servo_positions', 10)
        self._states_msg, self._servo_positions_msg = JointStateMessage(), JointStateMessage()
        self._diagnostics = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.create_subscription(JointState, 'joint_commands', self._on_joint_commands, 10)
        self.create_service(Trigger, '~/home', self._on_home)
        self.create_service(SetBool, '~/enable', self._on_enable)
        self.create_service(Trigger, '~/reboot', self._on_reboot)
        # The control tick slows down while the arm rests (nothing to step toward).
        self._control_s = 1.0 / self._parameter('control_rate_hz')
        self._control_timer = create_timer(self, self._control_s, self._on_control_timer)
        create_timer(self, 1.0 / self._parameter('state_rate_hz'), self._publish_states)
        create_timer(self, self._parameter('diagnostics_period_s'), self._publish_diagnostics)

    # -- set-up ------------------------------------------------------------------------------

    def _declare_own_parameters(self) -> None:
        n = len(self._names)
        declare(self, 'port', '/dev/ttyUSB0', 'Serial port of the board; reopened by this '
                'name after an unplug (prefer /dev/serial/by-id/...)')
        declare(self, 'protocol', 'native', 'Board protocol: ' + ', '.join(
            f'{p.value} ({_PROTOCOL_NOTES[p]})' for p in OFFERED_PROTOCOLS),
            choices=_CHOICES['protocol'])
        declare(self, 'baud', 0, f"Serial line speed [bit/s]; 0 = the protocol's default: "
                f'{_PWM_BAUD} for PWM boards (native, ssc32, maestro), {_BUS_BAUD} for bus '
                'servos (feetech, dynamixel); else 300 .. 4000000', ints=(0, 4_000_000))
        declare(self, 'home_move_time_s', 3.0, 'Time the move home takes at start and on '
                '~/home, at least [s]', floats=(0.0, 60.0), read_only=False)
        declare(self, 'max_speed_rad_s', [1.5] * n, 'Fastest each joint may move, one value '
                f'per joint in joint_names order ({n}) [rad/s]', read_only=False)
        declare(self, 'aux_max_speed', 0.0, 'Fastest every auxiliary servo (a gripper) may '
                'move, per second in its unit: the fraction of its pulse range (PWM) or rad '
                f'(bus); 0 = gentle for a gripper: {PULSE_AUX_SPEED_PER_S} per s on PWM, '
                f'{COUNT_AUX_SPEED_RAD_S} rad/s on a bus', floats=(0.0, 100.0), read_only=False)
        declare(self, 'control_rate_hz', 50.0, 'How often a move the speed limits spread out '
                'is continued [Hz]; commands are sent on arrival, as fast as the line takes '
                'them', floats=(1.0, 500.0))
        declare(self, 'state_rate_hz', 20.0, 'How often joint_states and ~/servo_positions '
                'are published [Hz]', floats=(1.0, 500.0))
        declare(self, 'poll_rate_hz', 10.0, 'How often a PWM board is asked for its positions '
                '[Hz], 0 = never (joint_states then report the commanded pose); bus servos are '
                'read at the rate their line leaves room for (50 Hz at 1000000 bit/s)',
                floats=(0.0, 100.0))
        declare(self, 'board_timeout_s', 1.0, 'Board watchdog: if the host is silent this '
                'long the board acts (native protocol only) [s], 0 = off',
                floats=(0.0, 65.0))
        declare(self, 'board_timeout_action', 'hold', 'What the board watchdog does: hold '
                'or detach', choices=_CHOICES['board_timeout_action'])
        declare(self, 'frame_period_s', _SLOTTED_FRAME_S, 'Servo pulse frame [s]: 0.02 is the '
                '50 Hz frame every servo takes; shorter (native protocol, digital servos only) '
                'pulses every channel at once at that period, at least the widest limit + '
                '0.3 ms', floats=(0.0007, _SLOTTED_FRAME_S))
        declare(self, 'on_shutdown', 'hold', 'What the servos do when the driver stops: hold '
                '(keep the last pose), detach (limp) or home (move home as ~/home does, then '
                'hold; the driver exits once there)', read_only=False,
                choices=_CHOICES['on_shutdown'])
        declare(self, 'diagnostics_period_s', 1.0, 'Period of /diagnostics [s]',
                floats=(0.1, 60.0))
        declare(self, 'temperature_warn_c', TEMPERATURE_WARN_C, 'Bus servos: at or above this '
                'temperature [C] a servo is WARN in /diagnostics and logged once; it re-attaches '
                'only below it', floats=(0.0, 150.0))
        declare(self, 'temperature_error_c', TEMPERATURE_ERROR_C, 'Bus servos: at or above '
                'this temperature [C] the driver detaches that servo alone (ERROR); ~/enable '
                'false then true re-attaches it once cooled', floats=(0.0, 150.0))
        self._gripper_parameters = declare_driver_gripper_parameters(self)
        declare_jog_parameters(self)
        self._trajectory_parameters = declare_trajectory_parameters(self)

    def _on_set_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        """Refuse unusable values, naming the rule (ros_parameters checks the choices)."""
        for parameter in parameters:
            reason = self._check(parameter)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        driver = self._driver
        if driver is None:
            return SetParametersResult(successful=True)
        for parameter in parameters:
            if parameter.name == 'max_speed_rad_s':
                driver.set_speeds(parameter.value)
            elif parameter.name == 'home_move_time_s':
                driver.set_home_move_s(parameter.value)
            elif parameter.name == 'aux_max_speed':
                driver.set_aux_speed(parameter.value)
        return SetParametersResult(successful=True)

    def _check(self, parameter: Parameter) -> str:
        name, value = parameter.name, parameter.value
        if name == 'max_speed_rad_s':
            return speed_limits_refusal(value, self._names)
        if name == 'baud' and isinstance(value, int) and 0 < value < 300:
            return f"baud = {value}, must be 0 (the protocol's default) or 300 .. 4000000"
        return ''

    def _heat_limits(self) -> HeatLimits:
        """Return the temperature limits the parameters give.

        :raises ParameterConfigError: unless ``temperature_warn_c`` < ``temperature_error_c``
        """
        warn_c = self._parameter('temperature_warn_c')
        error_c = self._parameter('temperature_error_c')
        if not warn_c < error_c:
            raise ParameterConfigError('temperature_warn_c', warn_c, 'must be below '
                                       f'temperature_error_c = {error_c!r}')
        return HeatLimits(warn_c, error_c)

    def _open_output(self) -> ServoOutput:
        """Return the servos' output for ``protocol``, set up as the parameters say."""
        protocol = Protocol(self._parameter('protocol'))
        baud = self._parameter('baud') or (_BUS_BAUD if protocol.is_bus else _PWM_BAUD)
        port = self._parameter('port')
        if protocol.is_bus:
            self._refuse_a_fast_frame(protocol, 'bus servos')
            self._say_no_watchdog(protocol)
            bus = BusOutput(port, self._arm, protocol=protocol, options=bus_options(baud),
                            warn=self.get_logger().warning, heat=self._heat_limits())
            ids = ', '.join(str(i) for i in servo_addresses(self._arm.servo_map))
            self.get_logger().info(f'{protocol.value} bus on {bus.path} at {baud} bit/s, servo '
                                   f'ids {ids}')
            return bus
        check_board_channels(self._arm, protocol)
        # No rate cap but the line's: the link sends a command as soon as the line is free.
        options = LinkOptions(baud=baud, poll_hz=self._parameter('poll_rate_hz'))
        output = PulseOutput(port, self._arm, protocol=protocol, options=options)
        self._set_watchdog(output)
        self._set_frame(output)
        self.get_logger().info(f'{protocol.value} board on {output.path} at {baud} bit/s, '
                               f'{output.layout.channels} channels')
        return output

    def _set_watchdog(self, output: PulseOutput) -> None:
        if output.link.capabilities.watchdog:
            action = WatchdogAction[self._parameter('board_timeout_action').upper()]
            output.link.set_watchdog(self._parameter('board_timeout_s'), action)
        else:
            self._say_no_watchdog(output.protocol)

    def _say_no_watchdog(self, protocol: Protocol) -> None:
        if self._parameter('board_timeout_s') > 0.0:
            self.get_logger().info(f'protocol {protocol.value} has no board watchdog: '
                                   'board_timeout_s is not used')

    def _set_frame(self, output: PulseOutput) -> None:
        """Give a native board the fast frame of ``frame_period_s``; the default sends nothing.

        The slotted 50 Hz frame is what every board starts in after a reset, and the Uno
        resets when the port opens, so the default needs no request: that way boards flashed
        before SET_FRAME existed (which refuse it, and would then miss their limits) keep
        working. Other protocols only have the slotted frame.

        :raises ParameterConfigError: on a fast frame with another protocol, or one too short
            for the widest limit.
        """
        if not output.link.capabilities.fast_frame:
            self._refuse_a_fast_frame(output.protocol, 'only native boards pulse in another '
                                                       'frame')
            return
        period_s = self._parameter('frame_period_s')
        if period_s == _SLOTTED_FRAME_S:
            return
        try:
            output.link.set_frame(round(period_s * 1e6))
        except ValueError as error:
            raise ParameterConfigError('frame_period_s', period_s,
                                       f'must fit the servo limits ({error})') from error

    def _refuse_a_fast_frame(self, protocol: Protocol, why: str) -> None:
        """Refuse a fast frame with ``protocol``, saying ``why``.

        :raises ParameterConfigError: if ``frame_period_s`` is not the slotted 50 Hz.
        """
        period_s = self._parameter('frame_period_s')
        if period_s != _SLOTTED_FRAME_S:
            raise ParameterConfigError('frame_period_s', period_s, f'must be {_SLOTTED_FRAME_S} '
                                       f'with protocol {protocol.value}: {why}')

    def _log(self, line: LogLine) -> None:
        log_line(self.get_logger(), line)

    @property
    def _core(self) -> ServoDriver:
        if self._driver is None:
            raise RuntimeError('servo_driver: the driver core is used before it was built')
        return self._driver

    # -- callbacks ---------------------------------------------------------------------------

    def _on_joint_commands(self, msg: JointState) -> None:
        self._core.take_commands(msg.name, msg.position)
        self._pace_ticks()

    def command(self, angles_rad) -> None:
        """Take ``angles_rad`` [rad, in joint_names order] as a joint command, by a call.

        For a node in the same process (``fabrik_arm``), which saves the DDS hop: the command
        is clamped, speed-limited and sent as one from joint_commands would be. The copy the
        caller also publishes on joint_commands is recognised and not taken a second time.

        :raises ValueError: if there is not one finite angle per joint
        """
        self._core.command(angles_rad)
        self._pace_ticks()

    def _on_control_timer(self) -> None:
        self._core.tick()
        self._trajectory.poll()
        self._pace_ticks()

    def _pace_ticks(self) -> None:
        """Tick at ``control_rate_hz`` while a move goes on, else every ``RESTING_TICK_S``.

        At rest a tick only looks for link news (a loss, a reconnect); a command, ~/home or
        ~/enable brings the control rate back as it starts a move.
        """
        tick_s = max(RESTING_TICK_S, self._control_s) if self._core.resting else self._control_s
        set_period(self._control_timer, tick_s)

    def _on_home(self, request: Trigger.Request, response: Trigger.Response):
        reply = reply_of(self._go_home())
        response.success, response.message = reply.success, reply.message
        return response

    def _go_home(self) -> Actions:
        """Move home as the driver allows; a calibration jog ends once the arm goes."""
        actions = self._core.home()
        if actions.send is not None and self._jog is not None:
            self._jog.finish(actions.send.move_s)
        self._pace_ticks()
        return actions

    def _jog_refusal(self) -> str:
        """Return why ~/jog_us cannot move a servo now, '' when it can."""
        phase = self._core.phase
        if phase is Phase.RUNNING:
            return ''
        return (f'the servos are {phase.value}: a jog needs the board connected and the servos '
                'attached (~/enable)')

    def _on_enable(self, request: SetBool.Request, response: SetBool.Response):
        reply = self._core.enable(request.data)
        self._pace_ticks()
        response.success, response.message = reply.success, reply.message
        return response

    def _on_reboot(self, request: Trigger.Request, response: Trigger.Response):
        reply = self._core.reboot()
        self._pace_ticks()
        response.success, response.message = reply.success, reply.message
        return response

    def _publish_states(self) -> None:
        stamp = self.get_clock().now().to_msg()
        feedback = self._core.feedback()
        if feedback is not None:
            self._states.publish(self._states_msg.filled(feedback.names, feedback.positions,
                                                         stamp))
        if not self._servo_positions.get_subscription_count():
            return      # the raw units are for calibration: mostly nobody reads them
        names, units = self._core.servo_positions()
        if names:
            self._servo_positions.publish(self._servo_positions_msg.filled(names, units, stamp))

    def _publish_diagnostics(self) -> None:
        board = self._core.status()
        statuses = [self._status(board, self._output.path),
                    *(self._status(servo, self._output.path)
                      for servo in self._core.servo_health())]
        self._diagnostics.publish(diagnostic_array(self.get_clock().now().to_msg(), *statuses))

    def _status(self, health: ServoHealth, hardware_id: str) -> DiagnosticStatus:
        return diagnostic_status(status_name(self, health.name), hardware_id,
                                 Level(int(health.level)), health.message, health.values)

    @property
    def latest_command(self) -> tuple[float, ...]:
        """Return the pose the driver is moving to (or holding) [rad]."""
        return self._core.latest_command

    def shutdown(self) -> None:
        """Leave the servos holding, detached or home, as on_shutdown says; close the port."""
        self._trajectory.shutdown()
        if self._gripper is not None:
            self._gripper[1].shutdown()
        self._core.stop(FinalState(self._parameter('on_shutdown')), sleep=time.sleep)


def main(args=None) -> None:
    """Run servo_driver until Ctrl-C or shutdown."""
    spin_until_shutdown(ServoDriverNode, args)
