"""What servo_driver does with each event, without ROS: the node's callbacks call one method.

:class:`ServoDriver` joins the parts of the driver: the command intake (names, auxiliary
servos, clamping), the :class:`~fabrik_ros.driver.arm_state_machine.ArmStateMachine` (safe
start, enable, home, reconnects), the speed-limited motion, the map from angles to servo units
and back (feedback), and the move home before the driver exits. It talks to the servos
through a :class:`~fabrik_ros.driver.servo_output.ServoOutput` (a PWM board or a bus), reads
time from the clock it is given and hands every line to log to the ``log`` callable, so any
sequence of events can be run in a test with a fake clock and a fake output.

The motion covers every servo, the auxiliary ones too: its positions are the joints' angles
[rad] in joint order, then each auxiliary servo's position in its own unit (PWM: the fraction
of its pulse range; bus: rad), each with its own speed limit. So a gripper starts where it
stands, and moves at its speed limit on start, re-attach, home and command alike.

Bus servos report their temperature: the :class:`~fabrik_ros.driver.heat_guard.HeatGuard`
warns of a hot one and detaches one too hot, alone (the others keep their torque and goals);
``~/enable`` false, then true, re-attaches it once it cooled.
"""

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
import enum
import math
from typing import Optional

from fabrik_ros.driver.arm_state_machine import (
    Actions,
    ArmStateMachine,
    LogLevel,
    LogLine,
    Phase,
    Reply,
)
from fabrik_ros.driver.aux_axis import aux_axes
from fabrik_ros.driver.command_intake import CommandIntake, WARN_EVERY_S
from fabrik_ros.driver.feedback import report_confirms
from fabrik_ros.driver.heat_guard import DEFAULT_HEAT_LIMITS, HeatGuard, HeatLimits
from fabrik_ros.driver.motion import Angles, MotionPlanner, Send
from fabrik_ros.driver.servo_output import (
    HealthLevel,
    servo_addresses,
    servo_names,
    ServoHealth,
    ServoOutput,
    ServoReport,
)
from fabrik_ros.driver.slew import SlewLimiter
from fabrik_ros.driver.trajectory import (
    Outcome,
    Refusal,
    TrajectoryEnd,
    TrajectoryExecutor,
    TrajectoryFeedback,
    TrajectoryGoal,
    TrajectorySettings,
)
from fabrik_ros.kinematics import Arm, ServoCommand
from fabrik_ros.monitoring.cause_throttle import CauseThrottle
from fabrik_ros.servo_io.errors import LinkError, NotABoard
from fabrik_ros.servo_io.link_options import LinkState

START_WAIT_S = 0.5        # after connecting, the longest wait for a first position report
# A bus reports every servo's position once it is admitted (tens of ms after the connect);
# waiting longer for it on a loaded host beats the slow move home from an unknown pose.
BUS_START_WAIT_S = 2.0
LINK_WARN_EVERY_S = 10.0  # one line per cause of link trouble this often, while it lasts
SHUTDOWN_SYNC_S = 1.0     # how long the exit waits for the servos to confirm their final state
# Handed-over commands whose published copy has not come back yet; more are lost copies.
_HANDED_OVER_KEPT = 64
_UNIT_WORDS = {'us': 'pulses', 'count': 'counts'}
# A joint servo that reported during a trajectory and then stays silent this long (detached,
# unplugged, unpowered) aborts the trajectory: one missed read of a bus is no reason, nor a
# report late on a loaded host while the link says the servo answers (named_silent False).
SILENT_SERVO_ABORT_S = 0.5
# How often the servos' temperatures are looked at: they are read with the telemetry, one
# servo at a time (a servo's reading is a second or two old), and heat takes tens of seconds.
HEAT_CHECK_S = 0.25


class FinalState(enum.Enum):
    """What the servos do when the driver stops (HOLD and DETACH also when the watchdog fires)."""

    HOLD = 'hold'      # keep holding the last pose
    DETACH = 'detach'  # go limp
    HOME = 'home'      # move home at the safe-start speed, then hold there (driver stop only)


@dataclass(frozen=True)
class Feedback:
    """The positions to publish on joint_states, and where they come from.

    :param names: the joints', then the auxiliary servos' names (a servo that never
        reported and was never sent anything is left out)
    :param positions: joints [rad], then auxiliary servos in their unit (PWM: fraction of
        the pulse range; bus: rad)
    :param source: for /diagnostics: the command, the board's report, or the command the
        report confirms; then the servos that did not report, if any
    """

    names: tuple[str, ...]
    positions: tuple[float, ...]
    source: str


class ServoDriver:
    """Drive an arm's servos from joint commands and service requests (module docstring).

    :param arm: the arm (joints, limits, home pose, servo map)
    :param output: the servos
    :param speeds_rad_s: the fastest each joint may move [rad/s], joint order
    :param aux_speed: the fastest every auxiliary servo may move, in its unit per second;
        0 = each one's :attr:`~fabrik_ros.driver.aux_axis.AuxAxis.default_speed`
    :param home_move_s: the shortest move home [s]
    :param step_s: the control period: how far ahead a speed-limited step reaches [s]
    :param clock: monotonic time [s], the same clock the output stamps its reports with
    :param log: takes each line the driver has to say
    :param busy: returns why joint commands must wait ('' when they need not): a
        calibration jog holding the servos
    :param start_wait_s: after connecting, the longest wait for a position report [s]
        before the safe start moves home slowly from an unknown pose
    :param trajectory_settings: the trajectory goals' default tolerances (default:
        :class:`~fabrik_ros.driver.trajectory.TrajectorySettings`'s)
    :param heat: the temperatures at which a servo is warned of and detached
    """

    def __init__(self, arm: Arm, output: ServoOutput, *, speeds_rad_s: Sequence[float],
                 home_move_s: float, step_s: float, clock: Callable[[], float],
                 log: Callable[[LogLine], None], busy: Callable[[], str] = lambda: '',
                 start_wait_s: float = START_WAIT_S, aux_speed: float = 0.0,
                 trajectory_settings: Optional[TrajectorySettings] = None,
                 heat: HeatLimits = DEFAULT_HEAT_LIMITS) -> None:
        self._arm, self._output = arm, output
        self._clock, self._log, self._busy = clock, log, busy
        self._step_s = step_s
        self._axes = aux_axes(arm.servo_map)
        self._joint_count = len(arm.joints)
        self._joint_speeds = tuple(float(s) for s in speeds_rad_s)
        self._aux_speed = float(aux_speed)
        self._aux_speed_of: dict[str, float] = {}   # a gripper goal's own speed, by servo
        home = (*map(float, arm.home), *(axis.home for axis in self._axes))
        self.planner = MotionPlanner(SlewLimiter(self._speeds()), home,
                                     home_move_s=home_move_s, step_s=step_s)
        self._machine = ArmStateMachine(self.planner, start_wait_s=start_wait_s,
                                        warn_every_s=LINK_WARN_EVERY_S)
        self._intake = CommandIntake(arm.joints, self._axes, clock=clock)
        self._names = servo_names(arm.servo_map)
        self._heat = HeatGuard(tuple(
            f'servo {name} (id {address})'
            for name, address in zip(self._names, servo_addresses(arm.servo_map), strict=True)),
            heat)
        self._heat_due_s = -math.inf
        self._throttle = CauseThrottle(WARN_EVERY_S, clock=clock)
        self._handed_over: deque[Angles] = deque(maxlen=_HANDED_OVER_KEPT)
        # The units of the angles last sent, for joint_states to compare reports with.
        self._sent_units: tuple[Optional[Angles], list[float]] = (None, [])
        self._feedback_key: tuple[object, ...] = ('none yet',)
        self._feedback: Optional[Feedback] = None
        self.clamped: tuple[str, ...] = ()
        self._trajectory = TrajectoryExecutor(
            arm.joints, self._joint_speeds, trajectory_settings or TrajectorySettings(),
            aux_names=tuple(axis.name for axis in self._axes))
        # When each joint's servo last reported during the running trajectory [s].
        self._heard_s: list[Optional[float]] = [None] * self._joint_count

    # -- state -------------------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """Return where the arm is between the link and the servos."""
        return self._machine.phase

    @property
    def resting(self) -> bool:
        """Return True while the servos follow and hold the target: a tick has nothing to do.

        Nothing, that is, but take the link's news; any command, ~/home or ~/enable may end it.
        """
        return (self._machine.phase is Phase.RUNNING and self.planner.settled
                and self._trajectory.active_goal is None)

    @property
    def enabled(self) -> bool:
        """Return True unless the servos were asked to go limp (``~/enable`` false)."""
        return self._machine.enabled

    @property
    def latest_command(self) -> Angles:
        """Return the pose the driver is moving to (or holding) [rad, joint order]."""
        return self.planner.target[:self._joint_count]

    def set_speeds(self, speeds_rad_s: Sequence[float]) -> None:
        """Change the per-joint speed limits [rad/s] from the next step on."""
        self._joint_speeds = tuple(float(s) for s in speeds_rad_s)
        self.planner.set_speeds(self._speeds())
        self._trajectory.set_speeds(self._joint_speeds)

    def set_aux_speed(self, aux_speed: float) -> None:
        """Change the auxiliary servos' speed limit [unit/s, 0 = default] from the next step."""
        self._aux_speed = float(aux_speed)
        self.planner.set_speeds(self._speeds())

    def set_aux_speed_of(self, name: str, speed: Optional[float]) -> None:
        """Lower one auxiliary servo's speed limit to ``speed`` [unit/s]; None: the usual."""
        if speed is None:
            self._aux_speed_of.pop(name, None)
        else:
            self._aux_speed_of[name] = float(speed)
        self.planner.set_speeds(self._speeds())

    def _speeds(self) -> tuple[float, ...]:
        """Return the speed limit of every servo, in servo order (each in its unit per s)."""
        usual = [self._aux_speed or axis.default_speed for axis in self._axes]
        return (*self._joint_speeds,
                *(min(speed, self._aux_speed_of.get(axis.name, speed))
                  for axis, speed in zip(self._axes, usual, strict=True)))

    def set_home_move_s(self, home_move_s: float) -> None:
        """Change the shortest move home [s] from the next move home on."""
        self.planner.home_move_s = home_move_s

    # -- commands ----------------------------------------------------------------------------

    def take_commands(self, names: Sequence[str], positions: Sequence[float]) -> None:
        """Take a joint_commands message: its joints and auxiliary servos, as one target."""
        target, count = self.planner.target, self._joint_count
        intake = self._intake.take(names, positions, target[:count])
        self._say(intake.logs)
        command = intake.command
        if command is None:
            return
        joints = command.joints
        if joints is not None and joints in self._handed_over:
            # The published copy of a command handed over by a call: taken already, and by
            # now perhaps replaced by a newer one.
            self._handed_over.remove(joints)
            joints = None
        if joints is None and not command.aux:
            return
        if joints is not None:
            self._abort_trajectory('replaced by a joint_commands message', hold=False)
        aux = tuple(command.aux.get(axis.name, old)
                    for axis, old in zip(self._axes, target[count:], strict=True))
        self._follow((*(target[:count] if joints is None else joints), *aux))

    def command(self, angles_rad: Sequence[float]) -> None:
        """Take ``angles_rad`` [rad, joint order] as a joint command handed over by a call.

        For a node in the same process (``fabrik_arm``), which saves the DDS hop; the copy it
        also publishes on joint_commands is recognised and not taken a second time.

        :raises ValueError: if there is not one finite angle per joint
        """
        angles = tuple(float(a) for a in angles_rad)
        joints = self._arm.joints
        if len(angles) != len(joints) or not all(math.isfinite(a) for a in angles):
            raise ValueError(f'angles_rad = {angles!r}, must hold {len(joints)} finite values '
                             f'(one per joint: {", ".join(self._arm.joint_names)})')
        clamped, logs = self._intake.clamp(angles)
        self._say(logs)
        self._abort_trajectory('replaced by a joint command', hold=False)
        self._handed_over.append(clamped)
        self._follow((*clamped, *self.planner.target[self._joint_count:]))

    def _follow(self, targets: Angles) -> None:
        """Make ``targets`` (every servo's position, servo order) the pose to move to."""
        reason = self._busy()
        if reason:
            if self._throttle.allow('busy'):
                self._log(LogLine(LogLevel.WARN, f'joint_commands ignored: {reason}'))
            return
        self._take_admitted()
        # Stepped now rather than on the next tick if the servos follow: up to a period sooner.
        self._apply(self._machine.command(self._clock(), targets))

    # -- time and the link --------------------------------------------------------------------

    def tick(self) -> None:
        """Pass on link changes, then let the state machine start, hold or step the arm."""
        now = self._clock()
        self._take_link_events(now)
        self._take_admitted()
        self._check_heat(now)
        if self._trajectory.active_goal is not None:
            self._follow_trajectory(now)
        phase = self._machine.phase
        reported = self._reported_angles(now) if phase is Phase.READING else None
        synced = phase is Phase.HOLDING and self._output.synced()
        self._apply(self._machine.tick(now, reported, synced=synced))

    def _take_link_events(self, now: float) -> None:
        """Tell the state machine each connect and each loss the link reported."""
        for event in self._output.take_events():
            if event.state is LinkState.READY:
                self._apply(self._machine.connect(now, self._output.board_name or 'board'))
            elif event.state in (LinkState.DISCONNECTED, LinkState.CLOSED):
                error = event.error     # its text starts with the port's path
                reason = str(error) if error is not None else f'{self._output.path}: closed'
                # A refusal shows the device's bytes, new each time: one line per cause.
                cause = NotABoard if isinstance(error, NotABoard) else None
                self._apply(self._machine.lose(now, reason, cause=cause))
                self._abort_trajectory(f'board lost: {reason}')

    def _take_admitted(self) -> None:
        """Move servos that rejoined the bus on from where they hold, not from where they were.

        A bus servo that stopped answering (a loose cable, its supply cycled, the host stalled)
        and answers again holds where it stands; the steps go on from there at the speed
        limits, so the arm reaches the latest command, even one that is not repeated.
        """
        held = self._output.take_admitted()
        if not held or self._machine.phase is not Phase.RUNNING:
            return
        positions = self._unit_positions()
        self.planner.resume_servos({index: float(positions[index](units))
                                    for index, units in held.items()})

    def _check_heat(self, now: float) -> None:
        """Warn of a servo getting hot; detach one too hot, alone (see :mod:`heat_guard`)."""
        if now < self._heat_due_s:
            return
        self._heat_due_s = now + HEAT_CHECK_S
        temperatures = self._output.temperatures()
        if not temperatures:
            return
        actions = self._heat.check(temperatures)
        for servo in actions.detach:
            self._output.limp(servo, True)
        self._say(actions.logs)

    @property
    def detached_for_heat(self) -> frozenset[int]:
        """Return the servos (servo order) detached for overheating, not yet re-attached."""
        return self._heat.detached

    def _apply(self, actions: Actions) -> Actions:
        """Do what the state machine decided: send, attach or detach, log."""
        if actions.send is not None:
            self._send(actions.send)
        if actions.attach is not None:
            self._output.attach(actions.attach)
        self._say(actions.logs)
        return actions

    def _send(self, send: Send) -> None:
        """Send the servos their units, then say which joints the calibration clamped."""
        command = self._arm.servo_map.to_units(send.angles_rad[:self._joint_count])
        units = self._units(send.angles_rad, command)
        self._output.send(units, send.move_s)
        self._sent_units = (send.angles_rad, units)
        if command.clamped and self._throttle.allow('units clamped'):
            self._log(LogLine(LogLevel.WARN, f'servo {_UNIT_WORDS[self._output.unit]} '
                                             f'clamped for {list(command.clamped)}'))
        self.clamped = command.clamped

    def _units(self, positions: Angles, joints: Optional[ServoCommand] = None) -> list[float]:
        """Return the servo units of every servo's position [servo order].

        :param joints: the joints' units, if the caller has them already
        """
        count = self._joint_count
        if joints is None:
            joints = self._arm.servo_map.to_units(positions[:count])
        aux = (axis.units(p) for axis, p in zip(self._axes, positions[count:], strict=True))
        return [*joints.units.tolist(), *map(float, aux)]

    def _say(self, lines: Sequence[LogLine]) -> None:
        for line in lines:
            self._log(line)

    # -- services ----------------------------------------------------------------------------

    def home(self) -> Actions:
        """Move home slowly (``~/home``); the reply says whether and how, or why not."""
        now = self._clock()
        self._take_link_events(now)
        actions = self._apply(self._machine.home(now))
        if actions.reply is not None and actions.reply.success:
            self._abort_trajectory('replaced by ~/home (moving home)', hold=False)
        return actions

    def enable(self, on: bool) -> Reply:
        """Attach (``on``) or detach the servos (``~/enable``); the reply says what happens."""
        now = self._clock()
        self._take_link_events(now)
        heat_note = self._release_cooled() if on else ''
        reply = reply_of(self._apply(self._machine.enable(now, on)))
        if heat_note:
            reply = Reply(reply.success, f'{reply.message}; {heat_note}')
        if not on:
            self._abort_trajectory('servos detached (~/enable false): call ~/enable with true, '
                                   'then send the trajectory again')
        return reply

    def _release_cooled(self) -> str:
        """Re-attach the servos detached for heat that cooled, if the arm was detached.

        :returns: what the reply says of those that stay detached ('' if none)
        """
        if not self._heat.detached:
            return ''
        if self._machine.enabled:
            names = ', '.join(self._heat.names[s] for s in sorted(self._heat.detached))
            return (f'{names} detached for overheating: call ~/enable false, then true, to '
                    're-attach it once it cooled')
        released, kept = self._heat.release(self._output.temperatures())
        for servo in released:
            self._output.limp(servo, False)
        return kept

    def reboot(self) -> Reply:
        """Reboot the servos in a hardware error, else every one (``~/reboot``); say which.

        A Dynamixel servo shut down by a hardware error (overload, overheating, electrical
        shock) stays limp until rebooted. Each rebooted servo rejoins the bus holding where
        it stands, torqued as attached, and moves on from there to the latest command at
        the speed limits (:meth:`_take_admitted`). Refused, with the reason, on servos
        without a reboot (Feetech, PWM), while detached, and while the board is not
        connected. A running trajectory is aborted: a servo that restarts cannot keep to it.
        """
        now = self._clock()
        self._take_link_events(now)
        refusal = self._output.reboot_refusal or self._reboot_not_ready()
        if refusal:
            return Reply(False, refusal)
        order = self._output.reboot()
        if order.refusal:
            return Reply(False, order.refusal)
        self._abort_trajectory('servos rebooted (~/reboot)')
        self._log(LogLine(LogLevel.INFO, f'~/reboot: rebooted {"; ".join(order.rebooted)}'))
        return Reply(True, f'rebooted {"; ".join(order.rebooted)}; each holds where it stands '
                           'once it answers again, then moves on to the latest command at '
                           'the speed limits')

    def _reboot_not_ready(self) -> str:
        """Return why the servos cannot be rebooted now ('' when they can)."""
        if not self._machine.enabled:
            return ('servos detached (~/enable false): call ~/enable with true first, then '
                    '~/reboot (a rebooted servo comes back holding, as attached)')
        if self._machine.phase is Phase.OFFLINE or self._output.state is not LinkState.READY:
            return (f'board not connected ({self._output.state.value}): nothing to reboot; '
                    'call ~/reboot once it is')
        return ''

    # -- trajectories (FollowJointTrajectory goals, JointTrajectory messages) ---------------

    def set_trajectory_settings(self, settings: TrajectorySettings) -> None:
        """Change the trajectory goals' default tolerances, from the next goal on."""
        self._trajectory.set_settings(settings)

    def check_trajectory(self, goal: TrajectoryGoal) -> Optional[Refusal]:
        """Return why ``goal`` would be refused now, None if :meth:`start_trajectory` takes it."""
        now = self._clock()
        self._take_link_events(now)
        return self._not_ready(now) or self._trajectory.check(goal, now_s=now,
                                                              current=self._joint_command())

    def start_trajectory(self, goal_id: Hashable, goal: TrajectoryGoal) -> Optional[Refusal]:
        """Follow ``goal`` from the current command on, replacing a running goal; or say why not.

        The arm follows the sampled trajectory at the control rate through the speed-limited
        motion (never above ``max_speed_rad_s``: a goal that needs more is refused).
        """
        now = self._clock()
        self._take_link_events(now)
        refusal = self._not_ready(now) or self._trajectory.start(
            goal_id, goal, now_s=now, current=self._joint_command())
        if refusal is None:
            self._heard_s = [None] * self._joint_count
            self._follow_trajectory(now)
        return refusal

    def cancel_trajectory(self, goal_id: Hashable) -> bool:
        """Cancel the goal ``goal_id`` if it runs: the arm holds where it is. True if it ran."""
        now = self._clock()
        actual, _ = self._trajectory_actual(now)
        canceled = self._trajectory.cancel(goal_id, now_s=now, actual=actual)
        self._hold_after_trajectory()
        return canceled

    def trajectory_feedback(self) -> Optional[tuple[Hashable, TrajectoryFeedback]]:
        """Return the running goal's id and where it is, None if no goal runs."""
        if self._trajectory.active_goal is None:
            return None
        now = self._clock()
        return self._trajectory.feedback(now, self._trajectory_actual(now)[0])

    def take_trajectory_ends(self) -> list[TrajectoryEnd]:
        """Return the goals that ended since the last call, oldest first."""
        return self._trajectory.take_ends()

    def _not_ready(self, now: float) -> Optional[Refusal]:
        """Return why the arm cannot follow a trajectory now, None if it can."""
        machine, reason = self._machine, ''
        if not machine.enabled:
            reason = 'servos detached (~/enable false): call ~/enable with true first'
        elif machine.phase is Phase.OFFLINE:
            reason = (f'board not connected ({self._output.state.value}): the arm follows '
                      'trajectories once it is')
        elif machine.phase is not Phase.RUNNING:
            reason = 'servos attaching (held where the board reports them): send it again soon'
        elif self._busy():
            reason = self._busy()
        elif self.planner.busy_for_s(now) > 0.0:
            reason = (f'the arm is moving home ({self.planner.busy_for_s(now):.1f} s more): '
                      'send it again then')
        return Refusal(Outcome.INVALID_GOAL, reason) if reason else None

    def _joint_command(self) -> tuple[float, ...]:
        """Return the joints' command: where the servos were last sent [rad, joint order]."""
        sent = self.planner.sent
        return (sent if sent is not None else self.planner.target)[:self._joint_count]

    def _trajectory_actual(self, now: float) -> tuple[tuple[float, ...], bool]:
        """Return where the joints are and whether that is measured (every joint reported).

        Else the command: a board that reports no pulses, or a servo that did not answer.
        """
        reported = self._reported(self._output.report(now))[:self._joint_count]
        for index, position in enumerate(reported):
            if position is not None:
                self._heard_s[index] = now
        if all(p is not None for p in reported):
            return tuple(float(p) for p in reported if p is not None), True
        return self._joint_command(), False

    def _follow_trajectory(self, now: float) -> None:
        """Check the running goal against the servos, then aim at its pose one step ahead."""
        executor = self._trajectory
        actual, measured = self._trajectory_actual(now)
        silent = [(name, now - heard) for index, (name, heard) in enumerate(zip(
                      self._arm.joint_names, self._heard_s, strict=True))
                  if heard is not None and now - heard > SILENT_SERVO_ABORT_S
                  and self._output.named_silent(index) is not False]
        if silent:
            names = ', '.join(f'{name} ({quiet_s:.1f} s)' for name, quiet_s in silent)
            executor.abort(f'servos silent (detached, unplugged or unpowered?): {names}',
                           actual=actual)
        else:
            executor.update(now, actual, measured)
        # The board gets there one step from now, as the JTC commands its next sample.
        desired = executor.desired(now + self._step_s)
        if desired is None:
            return
        if not all(math.isfinite(p) for p in desired):
            # The goal check refuses a curve that is not finite; never send one regardless.
            self._abort_trajectory(f'the trajectory sampled {desired!r}: not finite')
            return
        self._command_joints(desired)

    def _command_joints(self, positions: Sequence[float]) -> None:
        """Make the joints' target ``positions`` (within the limits), the aux servos' kept."""
        joints = tuple(j.clamp(p) for j, p in zip(self._arm.joints, positions, strict=True))
        self.planner.command((*joints, *self.planner.target[self._joint_count:]))

    def _abort_trajectory(self, message: str, *, hold: bool = True) -> None:
        """End the running goal, if any, ABORTED with ``message``; hold where the arm is."""
        if self._trajectory.active_goal is None:
            return
        actual, _ = self._trajectory_actual(self._clock())
        self._trajectory.abort(message, actual=actual, hold=hold)
        self._hold_after_trajectory()

    def _hold_after_trajectory(self) -> None:
        """Take the pose a goal that just ended leaves to hold, if it leaves one."""
        if self._trajectory.active_goal is not None:
            return
        hold = self._trajectory.desired(self._clock())
        if hold is not None:
            self._command_joints(hold)

    # -- feedback ----------------------------------------------------------------------------

    def feedback(self) -> Optional[Feedback]:
        """Return the positions of every servo to publish, None before anything is known.

        Each servo's from its own report where it has one: the commanded positions where the
        reports confirm them (an SSC-32U reports in 10 µs steps, about 2 mm at the tool),
        else the reports. A servo without a report (silent, or none is recent) has its
        commanded position, and the source names it; one never sent anything is left out.
        The answer is kept until the report or the angles sent change: joint_states come
        more often than a board reports while the arm holds still.
        """
        report = self._output.report(self._clock())
        sent = self.planner.sent
        key = (report, sent)
        if key != self._feedback_key:
            self._feedback_key, self._feedback = key, self._feedback_of(report, sent)
        return self._feedback

    def _feedback_of(self, report: Optional[ServoReport],
                     sent: Optional[Angles]) -> Optional[Feedback]:
        reported = self._reported(report)
        if report is None or all(p is None for p in reported):
            return None if sent is None else Feedback(self._names, sent, 'commanded')
        steps = f'{report.resolution:g} {self._output.unit} steps'
        silent = [n for n, p in zip(self._names, reported, strict=True) if p is None]
        note = ''
        if silent:
            note = (f'; commanded for {silent} (no report)' if sent is not None
                    else f'; {silent} left out (no report, nothing sent)')
        if sent is not None and self._confirms(report, sent):
            return Feedback(self._names, sent,
                            f'commanded, confirmed by the board ({steps}){note}')
        known = [(name, sent[i] if p is None and sent is not None else p)
                 for i, (name, p) in enumerate(zip(self._names, reported, strict=True))]
        pairs = [(name, float(p)) for name, p in known if p is not None]
        return Feedback(tuple(n for n, _ in pairs), tuple(p for _, p in pairs),
                        f'board ({steps}){note}')

    def _confirms(self, report: ServoReport, sent: Angles) -> bool:
        """Return True if every reported servo stands where it was sent, as far as it tells."""
        angles, units = self._sent_units
        commanded = units if angles is sent else self._units(sent)
        pairs = [(r, c) for r, c in zip(report.units, commanded, strict=True) if r is not None]
        return report_confirms([r for r, _ in pairs], [c for _, c in pairs], report.resolution)

    def _reported(self, report: Optional[ServoReport]) -> tuple[Optional[float], ...]:
        """Return each servo's reported position [servo order], None where it reported none."""
        if report is None:
            return (None,) * len(self._names)
        return tuple(None if u is None or not math.isfinite(u) else float(to_position(u))
                     for to_position, u in zip(self._unit_positions(), report.units,
                                               strict=True))

    def _unit_positions(self) -> tuple[Callable[[float], float], ...]:
        """Return each servo's units-to-position map [servo order]: radians, or the aux unit."""
        return (*(cal.angle_rad for cal in self._arm.servo_map.calibrations),
                *(axis.position for axis in self._axes))

    def _reported_angles(self, now: float) -> Optional[Angles]:
        """Return where every servo stands by its report, None unless every joint reported.

        An auxiliary servo without a report (a PWM board that reports none) is taken where
        it was last sent, else at home: the best there is.
        """
        reported = self._reported(self._output.report(now))
        count = self._joint_count
        if any(p is None for p in reported[:count]):
            return None
        fallback = self.planner.sent or self.planner.home_rad
        return tuple(float(f if p is None else p) for p, f in zip(reported, fallback, strict=True))

    def servo_positions(self) -> tuple[tuple[str, ...], tuple[float, ...]]:
        """Return the servos' names and raw units exactly as last reported (those reported)."""
        report = self._output.report(self._clock())
        if report is None:
            return (), ()
        pairs = [(n, u) for n, u in zip(self._names, report.units, strict=True) if u is not None]
        return tuple(n for n, _ in pairs), tuple(u for _, u in pairs)

    def servo_health(self) -> tuple[ServoHealth, ...]:
        """Return each servo's condition for /diagnostics; one detached for heat is ERROR."""
        return tuple(self._heat.health(servo, health)
                     for servo, health in enumerate(self._output.health()))

    def status(self) -> ServoHealth:
        """Return the condition of the link and the arm for the board's diagnostic status."""
        output = self._output
        if output.state is LinkState.READY:
            level = HealthLevel.OK
            message = 'connected' if self.enabled else 'connected, servos detached'
        else:
            level = HealthLevel.ERROR
            message = (f'board not connected ({output.state.value}): '
                       f'{output.last_error or "waiting"}')
        feedback = self.feedback()
        values = {**output.link_values(), 'enabled': self.enabled,
                  'feedback': feedback.source if feedback else '',
                  'clamped joints': ', '.join(self.clamped)}
        return ServoHealth('servo board', level, message, values)

    # -- exit --------------------------------------------------------------------------------

    def stop(self, final: FinalState, *, sleep: Callable[[float], None]) -> None:
        """Leave the servos as ``final`` says and close the link (the driver is exiting).

        :param sleep: waits a number of seconds (the move home is ticked through by hand,
            since the node's timers no longer run)
        """
        output = self._output
        if output.state is LinkState.CLOSED:
            return
        self._abort_trajectory('the driver is stopping', hold=False)
        try:
            if final is FinalState.HOME and output.state is LinkState.READY:
                self._home_before_exit(sleep)
            output.release(detach=final is FinalState.DETACH)
            if output.state is LinkState.READY:
                output.sync(SHUTDOWN_SYNC_S)
            else:
                self._log(LogLine(LogLevel.WARN, f'on_shutdown {final.value}: no board '
                                                 f'connected ({output.state.value}), the servos '
                                                 f'stay as the board left them'))
        except LinkError as error:
            self._log(LogLine(LogLevel.WARN, f'on_shutdown {final.value} not confirmed: '
                                             f'{error}'))
        output.close()

    def _home_before_exit(self, sleep: Callable[[float], None]) -> None:
        """Move home as ~/home does and tick the move through.

        Bounded by the move's own duration: a stop request during it is already taken, so a
        second Ctrl-C waits for the arm instead of cutting the move short.
        """
        now = self._clock()
        actions = self.home()
        if actions.send is None:
            reason = actions.reply.message if actions.reply else 'the servos cannot move'
            self._log(LogLine(LogLevel.WARN, f'on_shutdown home: {reason}; the servos stay '
                                             'put'))
            return
        end = now + actions.send.move_s + self._step_s
        self._log(LogLine(LogLevel.INFO, f'on_shutdown home: moving home over '
                                         f'{actions.send.move_s:.1f} s'))
        while self._clock() < end:
            sleep(self._step_s)
            self.tick()


def reply_of(actions: Actions) -> Reply:
    """Return the reply the state machine gives to a service request (~/home, ~/enable).

    :raises RuntimeError: if it gave none: every request is answered, so that is a bug
    """
    if actions.reply is None:
        raise RuntimeError(f'actions = {actions!r}: a service request must be answered with '
                           'a reply')
    return actions.reply
