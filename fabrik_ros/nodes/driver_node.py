"""servo_driver: joint commands in, calibrated pulses out to a serial servo board."""

from collections import deque
from collections.abc import Sequence
import enum
import math
import time
from typing import Optional

from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import (
    SetParametersResult,
)
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger

from fabrik_ros.driver.arm_state_machine import (
    Actions,
    ArmStateMachine,
    LogLevel,
    Phase,
    Reply,
)
from fabrik_ros.driver.board_layout import aux_pulse_us, BoardLayout, check_board_channels
from fabrik_ros.driver.feedback import report_confirms
from fabrik_ros.driver.motion import MotionPlanner, Send
from fabrik_ros.driver.slew import SlewLimiter
from fabrik_ros.monitoring.cause_throttle import CauseThrottle
from fabrik_ros.nodes.configured_node import ConfiguredNode
from fabrik_ros.nodes.diagnostics import (
    diagnostic_array,
    diagnostic_status,
    Level,
    status_name,
)
from fabrik_ros.nodes.joint_states import (
    joint_state_msg,
    JointCommandError,
    positions_by_name,
)
from fabrik_ros.nodes.ros_parameters import (
    declare,
    declare_arm,
    ParameterConfigError,
    refuse_unknown_overrides,
)
from fabrik_ros.nodes.servo_jog import declare_jog_parameters, ServoJog
from fabrik_ros.nodes.spin import spin_until_shutdown
from fabrik_ros.servo_io import (
    LinkError,
    LinkOptions,
    LinkState,
    LinkTimeout,
    NotABoard,
    OFFERED_PROTOCOLS,
    Protocol,
    ServoLink,
    WatchdogAction,
)


class FinalState(enum.Enum):
    """What the servos do when the driver stops (HOLD and DETACH also when the watchdog fires)."""

    HOLD = 'hold'      # keep pulsing at the last pose
    DETACH = 'detach'  # stop pulses: servos go limp
    HOME = 'home'      # move home at the safe-start speed, then hold there (driver stop only)


_SLOTTED_FRAME_S = 0.02       # the board's default frame: one 3 ms slot per channel, 50 Hz
_CHOICES = {'protocol': [p.value for p in OFFERED_PROTOCOLS],
            'on_shutdown': [s.value for s in FinalState],
            'board_timeout_action': [FinalState.HOLD.value, FinalState.DETACH.value]}
_WARN_EVERY_S = 5.0
_START_WAIT_S = 0.5      # after connecting, the longest wait for a first position report
_LINK_WARN_EVERY_S = 10.0   # one line per cause of link trouble this often, while it lasts
_SHUTDOWN_SYNC_S = 1.0
# Handed-over commands whose published copy has not come back yet; more are lost copies.
_HANDED_OVER_KEPT = 64
_UNKNOWN_NAMES_KEPT = 64   # names in joint_commands warned of once (more: warned again)


class ServoDriverNode(ConfiguredNode):
    """Send speed-limited joint commands to a servo board as calibrated pulses.

    - Safe start: once the board answers, the servos are held where the board reports them
      (if it does), then the arm moves to its home pose over ``home_move_time_s`` (longer if
      the speed limits need it), then follows
      ``joint_commands`` (matched by joint name) at no more than ``max_speed_rad_s`` per joint.
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
      the servos. Both are requests to :class:`ArmStateMachine`, which holds the enable
      request across connects and reconnects (while detached, commands are kept and
      followed after re-attaching, and ``~/home`` is refused with the reason).
    - On shutdown the servos hold, detach, or move home and hold, as ``on_shutdown`` says.
    """

    def __init__(self, **node_options) -> None:
        super().__init__('servo_driver', **node_options)
        # The on-set callback checks every declaration, but applies speed and home-time
        # changes only once the planner, built from the declared values, exists.
        self._planner_built = False
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._arm = declare_arm(self)
        self._names = self._arm.joint_names
        self._rejections = CauseThrottle(_WARN_EVERY_S)
        self._declare_own_parameters()
        refuse_unknown_overrides(self)
        self._layout = BoardLayout.of(self._arm)
        self._planner = MotionPlanner(SlewLimiter(tuple(self._parameter('max_speed_rad_s'))),
                                      self._arm.home,
                                      home_move_s=self._parameter('home_move_time_s'),
                                      step_s=1.0 / self._parameter('control_rate_hz'))
        self._planner_built = True
        self._machine = ArmStateMachine(self._planner, start_wait_s=_START_WAIT_S,
                                        warn_every_s=_LINK_WARN_EVERY_S)
        # Link state changes, appended by the link's I/O thread, taken by the control tick.
        self._link_events: deque[LinkState] = deque()
        self._connected_at = 0.0
        self._link = self._open_link()
        self._clamped: tuple[str, ...] = ()
        self._aux = {servo.name: servo for servo in self._arm.servo_map.aux}
        self._aux_us: dict[int, int] = {}       # commanded auxiliary pulses by channel [µs]
        self._unknown_names: set[str] = set()   # names in joint_commands already warned of
        self._handed_over: deque[tuple[float, ...]] = deque(maxlen=_HANDED_OVER_KEPT)
        self._jog = ServoJog(self, self._arm, self._layout, self._link, self._planner,
                             refusal=self._jog_refusal,
                             go_home=lambda now: _reply_of(self._go_home(now)).message)
        self._states = self.create_publisher(JointState, 'joint_states', 10)
        self._diagnostics = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.create_subscription(JointState, 'joint_commands', self._on_joint_commands, 10)
        self.create_service(Trigger, '~/home', self._on_home)
        self.create_service(SetBool, '~/enable', self._on_enable)
        self.create_timer(1.0 / self._parameter('control_rate_hz'), self._on_control_timer)
        self.create_timer(1.0 / self._parameter('state_rate_hz'), self._on_state_timer)
        self.create_timer(self._parameter('diagnostics_period_s'), self._on_diagnostics_timer)

    # -- set-up ------------------------------------------------------------------------------

    def _declare_own_parameters(self) -> None:
        n = len(self._names)
        declare(self, 'port', '/dev/ttyUSB0', 'Serial port of the board; reopened by this '
                'name after an unplug (prefer /dev/serial/by-id/...)')
        declare(self, 'baud', 115200, 'Serial line speed [bit/s]', ints=(300, 4_000_000))
        declare(self, 'protocol', 'native', 'Board protocol: native (hardware/PROTOCOL.md), '
                'ssc32 (Lynxmotion SSC-32U) or maestro (Pololu Maestro)',
                choices=_CHOICES['protocol'])
        declare(self, 'home_move_time_s', 3.0, 'Time the move home takes at start and on '
                '~/home, at least [s]', floats=(0.0, 60.0), read_only=False)
        declare(self, 'max_speed_rad_s', [1.5] * n, 'Fastest each joint may move, one value '
                f'per joint in joint_names order ({n}) [rad/s]', read_only=False)
        declare(self, 'control_rate_hz', 50.0, 'How often a move the speed limits spread out '
                'is continued [Hz]; commands are sent on arrival, as fast as the line takes '
                'them', floats=(1.0, 500.0))
        declare(self, 'state_rate_hz', 20.0, 'How often joint_states is published [Hz]',
                floats=(1.0, 500.0))
        declare(self, 'poll_rate_hz', 10.0, 'How often the board is asked for its positions '
                '[Hz], 0 = never (joint_states then report the commanded pose)',
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
        declare_jog_parameters(self)

    def _on_set_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        """Refuse unusable speed limits, naming the rule (ros_parameters checks the choices)."""
        for parameter in parameters:
            reason = self._check(parameter)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        for parameter in parameters if self._planner_built else ():
            if parameter.name == 'max_speed_rad_s':
                self._planner.set_speeds(parameter.value)
            elif parameter.name == 'home_move_time_s':
                self._planner.home_move_s = parameter.value
        return SetParametersResult(successful=True)

    def _check(self, parameter: Parameter) -> str:
        name, value = parameter.name, parameter.value
        if name == 'max_speed_rad_s':
            values = list(value) if value is not None else []
            if len(values) != len(self._names) or not all(0.0 < v <= 100.0 for v in values):
                return (f'max_speed_rad_s = {values!r}, must hold {len(self._names)} values '
                        f'(one per joint: {", ".join(self._names)}), each within (0.0, 100.0]')
        return ''

    def _open_link(self) -> ServoLink:
        protocol = Protocol(self._parameter('protocol'))
        check_board_channels(self._arm, protocol)
        # No rate cap but the line's: the link sends a command as soon as the line is free.
        options = LinkOptions(baud=self._parameter('baud'),
                              poll_hz=self._parameter('poll_rate_hz'))
        link = ServoLink(self._parameter('port'), protocol=protocol,
                         channels=self._layout.channels, options=options,
                         on_state=self._link_events.append)
        link.set_limits(self._layout.limits_us)
        timeout_s = self._parameter('board_timeout_s')
        if link.capabilities.watchdog:
            action = WatchdogAction[self._parameter('board_timeout_action').upper()]
            link.set_watchdog(timeout_s, action)
        elif timeout_s > 0.0:
            self.get_logger().info(f'protocol {protocol.value} has no board watchdog: '
                                   'board_timeout_s is not used')
        self._set_frame(link)
        self.get_logger().info(f'{protocol.value} board on {link.path}, '
                               f'{self._layout.channels} channels')
        return link.start()

    def _set_frame(self, link: ServoLink) -> None:
        """Give a native board the fast frame of ``frame_period_s``; the default sends nothing.

        The slotted 50 Hz frame is what every board starts in after a reset, and the Uno
        resets when the port opens, so the default needs no request: that way boards flashed
        before SET_FRAME existed (which refuse it, and would then miss their limits) keep
        working. Other protocols only have the slotted frame.

        :raises ParameterConfigError: on a fast frame with another protocol, or one too short
            for the widest limit.
        """
        period_s = self._parameter('frame_period_s')
        slotted = period_s == _SLOTTED_FRAME_S
        if not link.capabilities.fast_frame:
            if not slotted:
                raise ParameterConfigError(
                    'frame_period_s', period_s, f'must be {_SLOTTED_FRAME_S} with protocol '
                    f'{link.protocol.value}: only native boards pulse in another frame')
            return
        if slotted:
            return
        try:
            link.set_frame(round(period_s * 1e6))
        except ValueError as error:
            raise ParameterConfigError('frame_period_s', period_s,
                                       f'must fit the servo limits ({error})') from error

    # -- commands ----------------------------------------------------------------------------

    def _on_joint_commands(self, msg: JointState) -> None:
        self._warn_unknown_names(msg.name)
        if len(msg.name) == len(msg.position) and self._take_aux(msg):
            if not any(name in self._names for name in msg.name):
                return
        try:
            targets = positions_by_name(msg, self._names, self._planner.target)
        except JointCommandError as error:
            if self._rejections.allow(error.cause):
                self.get_logger().warning(f'joint_commands ignored: {error}')
            return
        if targets in self._handed_over:
            # The published copy of a command handed over by a call: taken already, and by
            # now perhaps replaced by a newer one.
            self._handed_over.remove(targets)
            return
        self._follow(targets)

    def _warn_unknown_names(self, names: Sequence[str]) -> None:
        """Warn once per name that is neither a joint nor an auxiliary servo of the arm.

        At most one line per throttle period (a stream of made-up names cannot flood the
        log), and only the first ``_UNKNOWN_NAMES_KEPT`` names are remembered.
        """
        known = [n for n in names if n in self._names or n in self._aux]
        unknown = sorted({n for n in names if n not in known and n not in self._unknown_names})
        if not known:
            return      # the message is refused, and that warning names them
        if not unknown or not self._rejections.allow('unknown names'):
            return
        if len(self._unknown_names) < _UNKNOWN_NAMES_KEPT:
            self._unknown_names.update(unknown)
        self.get_logger().warning(
            f'joint_commands: {unknown} not in the arm file, ignored (joints: '
            f'{list(self._names)}, auxiliary servos: {list(self._aux)}); said once a name')

    def _take_aux(self, msg: JointState) -> bool:
        """Take the auxiliary servos' positions (0.0 = min_us, 1.0 = max_us); True if any."""
        given = [(self._aux[n], p) for n, p in zip(msg.name, msg.position, strict=True)
                 if n in self._aux]
        for servo, position in given:
            if not math.isfinite(position):
                if self._rejections.allow(('aux', servo.name)):
                    self.get_logger().warning('joint_commands ignored: positions not '
                                              f'finite: {{{servo.name!r}: {position}}}')
                continue
            pulse, clamped = aux_pulse_us(servo, position)
            if clamped and self._rejections.allow(('aux clamped', servo.name)):
                self.get_logger().warning(
                    f'joint_commands: {servo.name} = {position}, must be within [0.0, 1.0] '
                    f'(min_us {servo.min_us} .. max_us {servo.max_us}); clamped to {pulse} us')
            self._aux_us[servo.channel] = pulse
        if given:
            self._apply(self._machine.command_aux(time.monotonic()))
        return bool(given)

    def command(self, angles_rad: Sequence[float]) -> None:
        """Take ``angles_rad`` [rad, in joint_names order] as a joint command, by a call.

        For a node in the same process (``fabrik_arm``), which saves the DDS hop: the command
        is clamped, speed-limited and sent as one from joint_commands would be. The copy the
        caller also publishes on joint_commands is recognised and not taken a second time.

        :raises ValueError: if there is not one finite angle per joint
        """
        angles = tuple(float(a) for a in angles_rad)
        if len(angles) != len(self._names) or not all(math.isfinite(a) for a in angles):
            raise ValueError(f'angles_rad = {angles!r}, must hold {len(self._names)} finite '
                             f'values (one per joint: {", ".join(self._names)})')
        self._handed_over.append(angles)
        self._follow(angles)

    def _follow(self, targets: tuple[float, ...]) -> None:
        if self._jog.active:
            self.get_logger().warning('joint_commands ignored: a calibration jog holds the '
                                      'servos (~/home or an empty ~/jog_us ends it)',
                                      throttle_duration_sec=_WARN_EVERY_S)
            return
        clamped = tuple(j.clamp(t) for j, t in zip(self._arm.joints, targets, strict=True))
        if clamped != targets:
            self.get_logger().warning(f'joint_commands {targets} outside the joint limits, '
                                      f'clamped to {clamped}',
                                      throttle_duration_sec=_WARN_EVERY_S)
        # Stepped now rather than on the next tick if the servos follow: up to a period sooner.
        self._apply(self._machine.command(time.monotonic(), clamped))

    def _on_control_timer(self) -> None:
        """Pass on link changes, then let the state machine start, hold or step the arm."""
        now = time.monotonic()
        self._take_link_events(now)
        phase = self._machine.phase
        reported = self._reported_angles(now) if phase is Phase.READING else None
        synced = phase is Phase.HOLDING and self._board_answered_everything()
        self._apply(self._machine.tick(now, reported, synced=synced))

    def _take_link_events(self, now: float) -> None:
        """Tell the state machine each connect and each loss the link's thread reported."""
        while self._link_events:
            state = self._link_events.popleft()
            if state is LinkState.READY:
                self._connected_at = now
                board = self._link.board
                self._apply(self._machine.connect(now, board.firmware if board else 'board'))
            elif state in (LinkState.DISCONNECTED, LinkState.CLOSED):
                error = self._link.last_error   # its text starts with the port's path
                reason = str(error) if error is not None else f'{self._link.path}: closed'
                # A refusal shows the device's bytes, new each time: one line per cause.
                cause = NotABoard if isinstance(error, NotABoard) else None
                self._apply(self._machine.lose(now, reason, cause=cause))

    def _apply(self, actions: Actions) -> Actions:
        """Do what the state machine decided: send, attach or detach, log."""
        self._send(actions.send)
        if actions.attach is not None:
            self._link.enable(self._layout.enable_mask if actions.attach else 0)
        for line in actions.logs:
            # rclpy ties a severity to each call site: one call per level.
            if line.level is LogLevel.WARN:
                self.get_logger().warning(line.text)
            else:
                self.get_logger().info(line.text)
        return actions

    def _board_answered_everything(self) -> bool:
        """Return True once the board took or refused all that was set (waiting is over).

        Taken: acknowledged (native) or written (the others). Refused: answered NACK, which
        waiting longer would not change.
        """
        try:
            self._link.sync(0.0)
        except LinkTimeout:
            return False
        except LinkError:
            return True     # refused (NACK): waiting longer would not change that
        return True

    def _send(self, send: Optional[Send]) -> None:
        if send is None:
            return
        command = self._arm.servo_map.to_units(send.angles_rad)
        if command.clamped:
            self.get_logger().warning(f'servo pulses clamped for {list(command.clamped)}',
                                      throttle_duration_sec=_WARN_EVERY_S)
        self._clamped = command.clamped
        self._link.set_pulses(self._layout.pulse_vector(command, self._aux_us),
                              min(send.move_s, 65.0))

    def _reported_pulses(self, now: float) -> Optional[tuple[list[float], float]]:
        """Return the joints' pulses the board reported since it connected, and their step."""
        positions = self._link.positions()
        poll_hz = self._parameter('poll_rate_hz')
        if (positions is None or poll_hz <= 0.0 or now - positions.stamp_s > 3.0 / poll_hz
                or positions.stamp_s < self._connected_at):
            return None
        pulses = self._layout.joint_pulses(positions.pulses_us)
        return None if pulses is None else (pulses, positions.resolution_us)

    def _reported_angles(self, now: float) -> Optional[tuple[float, ...]]:
        """Return the joint angles the board reported lately, None if it has not."""
        reported = self._reported_pulses(now)
        if reported is None:
            return None
        return tuple(float(a) for a in self._arm.servo_map.to_angles(reported[0]))

    def _feedback(self, now: float) -> tuple[Optional[tuple[float, ...]], str]:
        """Return the angles to publish and where they come from.

        The commanded angles where the board's report confirms them (an SSC-32U reports in
        10 µs steps, about 2 mm at the tool), else the report, else (no recent report) the
        commanded angles.
        """
        reported, sent = self._reported_pulses(now), self._planner.sent
        if reported is None:
            return sent, 'commanded'
        pulses, resolution_us = reported
        if sent is not None and report_confirms(
                pulses, self._arm.servo_map.to_units(sent).units, resolution_us):
            return sent, f'commanded, confirmed by the board ({resolution_us:g} us steps)'
        angles = tuple(float(a) for a in self._arm.servo_map.to_angles(pulses))
        return angles, f'board ({resolution_us:g} us steps)'

    # -- services ----------------------------------------------------------------------------

    def _on_home(self, request: Trigger.Request, response: Trigger.Response):
        now = time.monotonic()
        self._take_link_events(now)
        reply = _reply_of(self._go_home(now))
        response.success, response.message = reply.success, reply.message
        return response

    def _go_home(self, now: float) -> Actions:
        """Move home as the state machine allows; a calibration jog ends once the arm goes."""
        actions = self._apply(self._machine.home(now))
        if actions.send is not None:
            self._jog.finish(actions.send.move_s)
        return actions

    def _jog_refusal(self) -> str:
        """Return why ~/jog_us cannot move a servo now, '' when it can."""
        phase = self._machine.phase
        if phase is Phase.RUNNING:
            return ''
        return (f'the servos are {phase.value}: a jog needs the board connected and the servos '
                'attached (~/enable)')

    def _on_enable(self, request: SetBool.Request, response: SetBool.Response):
        now = time.monotonic()
        self._take_link_events(now)
        reply = _reply_of(self._apply(self._machine.enable(now, request.data)))
        response.success, response.message = reply.success, reply.message
        return response

    # -- outputs -----------------------------------------------------------------------------

    def _on_state_timer(self) -> None:
        angles, _ = self._feedback(time.monotonic())
        if angles is not None:
            stamp = self.get_clock().now().to_msg()
            self._states.publish(joint_state_msg(self._names, angles, stamp))

    def _on_diagnostics_timer(self) -> None:
        link, stats = self._link, self._link.stats()
        state = link.state
        if state is LinkState.READY:
            level = Level.OK
            message = 'connected' if self._machine.enabled else 'connected, servos detached'
        else:
            level = Level.ERROR
            message = f'board not connected ({state.value}): {link.last_error or "waiting"}'
        values = {
            'port': link.path, 'protocol': link.protocol.value, 'state': state.value,
            'board': link.board.firmware if link.board else '', 'enabled': self._machine.enabled,
            'feedback': self._feedback(time.monotonic())[1],
            'reconnects': stats.reconnects, 'nacks': stats.nacks, 'timeouts': stats.timeouts,
            'retries': stats.retries, 'commands': stats.commands,
            'coalesced': stats.coalesced, 'board resets': stats.board_resets,
            'round trip median [ms]': _ms(stats.rtt_median_s),
            'round trip p99 [ms]': _ms(stats.rtt_p99_s),
            'clamped joints': ', '.join(self._clamped)}
        status = diagnostic_status(status_name(self, 'servo board'), link.path, level, message,
                                   values)
        self._diagnostics.publish(diagnostic_array(self.get_clock().now().to_msg(), status))

    @property
    def latest_command(self) -> tuple[float, ...]:
        """Return the pose the driver is moving to (or holding) [rad]."""
        return self._planner.target

    def shutdown(self) -> None:
        """Leave the servos holding or detached, as on_shutdown says, and close the port."""
        if self._link.state is LinkState.CLOSED:
            return
        final = FinalState(self._parameter('on_shutdown'))
        try:
            if final is FinalState.HOME and self._link.state is LinkState.READY:
                self._home_before_exit()
            if final is FinalState.DETACH:
                self._link.detach()
            elif self._link.capabilities.watchdog:
                self._link.set_watchdog(0.0)
            if self._link.state is LinkState.READY:
                self._link.sync(_SHUTDOWN_SYNC_S)
            else:
                self.get_logger().warning(
                    f'on_shutdown {final.value}: no board connected ({self._link.state.value}), '
                    f'the servos stay as the board left them')
        except LinkError as error:
            self.get_logger().warning(f'on_shutdown {final.value} not confirmed: {error}')
        self._link.close()

    def _home_before_exit(self) -> None:
        """Move home as ~/home does and tick the move through (the timers no longer run).

        Bounded by the move's own duration: a stop request during it is already taken, so a
        second Ctrl-C waits for the arm instead of cutting the move short.
        """
        now = time.monotonic()
        self._take_link_events(now)
        actions = self._go_home(now)
        if actions.send is None:
            reason = actions.reply.message if actions.reply else 'the servos cannot move'
            self.get_logger().warning(f'on_shutdown home: {reason}; the servos stay put')
            return
        period_s = 1.0 / self._parameter('control_rate_hz')
        end = now + actions.send.move_s + period_s
        self.get_logger().info(f'on_shutdown home: moving home over {actions.send.move_s:.1f} s')
        while time.monotonic() < end:
            time.sleep(period_s)
            self._on_control_timer()


def _reply_of(actions: Actions) -> Reply:
    """Return the reply the state machine gives to a service request (~/home, ~/enable).

    :raises RuntimeError: if it gave none: every request is answered, so that is a bug
    """
    if actions.reply is None:
        raise RuntimeError(f'actions = {actions!r}: a service request must be answered with '
                           'a reply')
    return actions.reply


def _ms(seconds: Optional[float]) -> object:
    return '' if seconds is None else 1e3 * seconds


def main(args=None) -> None:
    """Run servo_driver until Ctrl-C or shutdown."""
    spin_until_shutdown(ServoDriverNode, args)
