"""The servos of a serial bus (feetech, dynamixel) as a :class:`ServoOutput`, in counts.

A bus servo is addressed by the ``id`` of its servo section in the arm file
(``CountCalibration.channel``). Commands arrive in counts, already within the calibrated
range; here they are also clamped into the position-limit registers each servo holds (read at
connect), with one warning per servo when a register cuts a command. Torque on is attach, off
is detach; positions come back as the servos report them. What the servos say of themselves
(temperature, voltage, load, error bits, silence) becomes one :class:`ServoHealth` per servo,
judged against the limits below.
"""

from collections.abc import Callable, Sequence
from dataclasses import replace
import time
from typing import Optional, Union

from fabrik_ros.driver.heat_guard import DEFAULT_HEAT_LIMITS, HeatLimits
from fabrik_ros.driver.link_output import LinkOutput
from fabrik_ros.driver.servo_output import (
    HealthLevel,
    RebootOrder,
    servo_addresses,
    servo_names,
    ServoHealth,
    ServoReport,
    ServoUnit,
)
from fabrik_ros.kinematics import Arm
from fabrik_ros.kinematics.description.count_calibration import CountAuxServo, CountCalibration
from fabrik_ros.servo_io.bus_line import BUS_OPTIONS
from fabrik_ros.servo_io.bus_link import BusLink
from fabrik_ros.servo_io.bus_reports import ServoCondition
from fabrik_ros.servo_io.link_options import LinkOptions, LinkState, MOVE_MAX_S
from fabrik_ros.servo_io.protocols.dialect import Protocol
from fabrik_ros.servo_io.serial_port import open_serial, SerialFactory

# The temperature limits (TEMPERATURE_WARN_C 55, TEMPERATURE_ERROR_C 65) and why:
# fabrik_ros.driver.heat_guard, which acts on them.
# Load in % of the servo's maximum torque. Holding an arm out takes well under half; above 80 %
# a joint is fighting something (an obstacle, a stuck gripper), at 95 % it is stalled and its
# overload protection (STS: Protection_Current / overload time; X: Shutdown overload bit)
# is about to cut the torque.
LOAD_WARN_PERCENT = 80.0
LOAD_ERROR_PERCENT = 95.0
# The supply voltage sagging more than this below the highest the servo reported since start
# means the supply cannot carry the load (the common fault of an arm on a small adapter); the
# servo's own input-voltage error bit is an ERROR, and so is a voltage outside the range the
# servo takes: its input-voltage limit registers where it has them (Dynamixel X, read at
# admission), else the range set for its model (ControlTable.voltage_range_v).
VOLTAGE_SAG_WARN = 0.15
# A report older than this is not current (joint_states then show the command). Not a count
# of feedback periods (3 at 50 Hz = 60 ms, which a loaded host overran, and joint_states
# flicked to the command): reads pause while a servo that missed requests is told apart from
# a silent one (up to SILENT_AFTER_S 0.1 s and a reply timeout), and a loaded host delays a
# read by tens of ms. 0.3 s covers both, and is what the PWM boards' default feedback allows
# (three polls at 10 Hz), so both kinds of servo behave alike.
REPORT_STALE_S = 0.3
# Loads come with the telemetry, one servo at a time, round robin (5 reads a second over all
# servos and blocks): on a 6-servo arm a servo's load is a few seconds old at most. Older
# than this it is no longer said.
EFFORT_STALE_S = 5.0


def bus_options(baud: int = 0, poll_hz: Optional[float] = None) -> LinkOptions:
    """Return a bus link's options: ``baud`` 0 = the servos' 1,000,000; ``poll_hz`` None = 50.

    The feedback rate's default and why: see :mod:`fabrik_ros.servo_io.bus_line`.
    """
    return replace(BUS_OPTIONS, baud=baud or BUS_OPTIONS.baud,
                   poll_hz=BUS_OPTIONS.poll_hz if poll_hz is None else poll_hz)


class BusOutput(LinkOutput[BusLink]):
    """Drive the arm's bus servos through a :class:`BusLink`, addressed by their ids.

    ``link`` is public for what only a bus has (limit registers, homing offsets).

    :param path: the bus adapter's serial port
    :param arm: the arm (its servo map gives the ids, names and homing offsets)
    :param protocol: ``Protocol.FEETECH`` or ``Protocol.DYNAMIXEL``
    :param options: the link's settings (see :func:`bus_options`)
    :param warn: where warnings go (the node's logger); each is said once
    :param clock: the monotonic clock of the link and of :meth:`report` [s]
    :param heat: the temperatures judged WARN and ERROR
    :raises ArmConfigError: if the arm's servos are calibrated in pulse widths
    :raises ValueError: on a protocol that is not a bus's
    """

    unit: ServoUnit = 'count'

    def __init__(self, path: str, arm: Arm, *, protocol: Protocol,
                 options: LinkOptions = BUS_OPTIONS,
                 warn: Callable[[str], object] = lambda message: None,
                 clock: Callable[[], float] = time.monotonic,
                 serial_factory: SerialFactory = open_serial,
                 heat: HeatLimits = DEFAULT_HEAT_LIMITS) -> None:
        super().__init__(clock)
        self._heat = heat
        joints, aux = arm.servo_map.count_servos()
        servos: tuple[Union[CountCalibration, CountAuxServo], ...] = (*joints, *aux)
        self._names = servo_names(arm.servo_map)
        self._ids = servo_addresses(arm.servo_map)
        self._joint_of = dict(zip(self._ids, self._names, strict=True))
        self._top = {servo.channel: servo.counts_per_turn - 1 for servo in servos}
        self._warn = warn
        self._poll_hz = options.poll_hz
        self._register_cut: set[int] = set()       # servos already warned of a limit register
        self._peak_voltage: dict[int, float] = {}
        self._connect_line = ''
        homing = {servo.channel: servo.homing_offset for servo in servos
                  if servo.homing_offset is not None}
        self.link = BusLink(path, protocol=protocol, ids=self._ids, options=options,
                            homing_offsets=homing, serial_factory=serial_factory, clock=clock,
                            on_state=self._on_state)

    def servo_name(self, servo_id: int) -> str:
        """Return ``'servo wrist_roll (id 5)'``: how messages name a servo."""
        return f'servo {self._joint_of.get(servo_id, "?")} (id {servo_id})'

    def _on_state(self, state: LinkState) -> None:
        if state is LinkState.READY:
            # Taken on the link's thread at READY, before any servo is admitted: always the
            # ping's count. Read later, by the driver's tick, it was the ping's count or the
            # models, as the admission had got on ('XL430-W250 x6').
            self._connect_line = self.link.board or ''
        super()._on_state(state)

    @property
    def board_name(self) -> str:
        """Return what answered the latest connect's ping, for the connect line; '' before.

        ``'6 of 6 feetech servos answered the ping (ids 1 2 3 4 5 6)'``: one shape at every
        connect, however far the servos' admission got before the driver said it. The models
        that answer now are in :meth:`link_values` (``servos``).
        """
        return self._connect_line

    def take_admitted(self) -> dict[int, float]:
        """Return the servos admitted after the connect since the last call, and their counts."""
        held = self.link.take_admitted()
        return {index: float(held[servo_id]) for index, servo_id in enumerate(self._ids)
                if servo_id in held}

    def named_silent(self, servo: int) -> Optional[bool]:
        """Return True once the bus names the servo silent (see :mod:`bus_silence`)."""
        condition = self.link.health().get(self._ids[servo])
        return condition is not None and condition.silent_since_s is not None

    def send(self, units: Sequence[float], move_s: float) -> None:
        """Send every servo to its count [servo order], clamped into its limit registers.

        The first time a register cuts a servo's command, one warning names the servo, the
        goal and the register.
        """
        limits = self.link.limits()
        goals = {}
        for servo_id, unit in zip(self._ids, units, strict=True):
            count = min(max(round(float(unit)), 0), self._top[servo_id])
            goals[servo_id] = self._within_registers(servo_id, count, limits.get(servo_id))
        self.link.set_goals(goals, min(max(move_s, 0.0), MOVE_MAX_S))

    def _within_registers(self, servo_id: int, count: int,
                          registers: Optional[tuple[int, int]]) -> int:
        if registers is None or registers[0] > registers[1]:
            return count        # not read yet (no goal reaches it then), or no range set
        low, high = registers
        clamped = min(max(count, low), high)
        if clamped != count and servo_id not in self._register_cut:
            self._register_cut.add(servo_id)
            side, register = ('max', high) if count > high else ('min', low)
            self._warn(f'{self.servo_name(servo_id)}: goal {count} beyond its {side} position '
                       f'limit register {register}, clamped (said once per servo)')
        return clamped

    def attach(self, on: bool) -> None:
        """Turn every servo's torque on, holding where it stands, or off (limp)."""
        self.link.torque(on)

    def limp(self, servo: int, limp: bool) -> bool:
        """Keep servo ``servo`` (servo order) limp whatever :meth:`attach` says, or stop.

        See :meth:`BusLink.limp`: its torque goes off, at every re-admission too, and no goal
        reaches it; its position is still reported.
        """
        self.link.limp(self._ids[servo], limp)
        return True

    def temperatures(self) -> tuple[Optional[float], ...]:
        """Return each servo's latest reported temperature [°C, servo order]; None: unknown.

        Unknown: not reported since the connect, or the servo is silent now.
        """
        conditions = self.link.health()
        return tuple(
            None if (c := conditions.get(i)) is None or c.silent_since_s is not None
            or c.stamp_s is None or c.stamp_s < self._connected_at else c.temperature_c
            for i in self._ids)

    def torque_limit(self, servo: int, fraction: Optional[float]) -> bool:
        """Cap servo ``servo`` (servo order) at ``fraction`` of its full torque (None: full).

        See :meth:`BusLink.torque_limit`; every supported model has the register.
        """
        self.link.torque_limit(self._ids[servo], fraction)
        return True

    @property
    def reboot_refusal(self) -> str:
        """Return why these servos cannot be rebooted: Feetech has no reboot; '' on Dynamixel."""
        return self.link.reboot_refusal

    def reboot(self, servos: Optional[Sequence[int]] = None) -> RebootOrder:
        """Reboot the servos named (servo order) that answer; None: see :class:`ServoOutput`.

        See :meth:`BusLink.reboot`: each rejoins through :meth:`take_admitted`.
        """
        if self.reboot_refusal:
            return RebootOrder(refusal=self.reboot_refusal)
        conditions = self.link.health()
        answering = [i for i in self._ids if conditions[i].silent_since_s is None]
        if servos is None:
            chosen = [i for i in answering if conditions[i].hardware_errors] or answering
        else:
            chosen = [self._ids[index] for index in servos]
        rebooted = self.link.reboot(chosen)
        if not rebooted:
            return RebootOrder(refusal='no servo answers on the bus: nothing was rebooted (a '
                               'servo that answers again is admitted anew by itself)')
        return RebootOrder(tuple(
            f'{self.servo_name(i)}: '
            f'{", ".join(conditions[i].hardware_errors) or "no hardware error"}'
            for i in rebooted))

    def effort(self, servo: int, now_s: float) -> Optional[float]:
        """Return the servo's latest load as a signed fraction of its full torque, if recent.

        The load register as the servo reports it (STS3215 and XL430: 0.1 % of the maximum
        torque; XM430: its current as a share of the current limit), read with the telemetry.
        """
        condition = self.link.health().get(self._ids[servo])
        if (condition is None or condition.load_percent is None or condition.stamp_s is None
                or now_s - condition.stamp_s > EFFORT_STALE_S
                or condition.stamp_s < self._connected_at):
            return None
        return condition.load_percent / 100.0

    def report(self, now_s: float) -> Optional[ServoReport]:
        """Return the counts the servos reported since the link connected, if current.

        Current: within ``REPORT_STALE_S``. A servo that did not answer the latest read is None.
        """
        self._say_notices()
        positions = self.link.positions()
        if (positions is None or self._poll_hz <= 0.0
                or now_s - positions.stamp_s > REPORT_STALE_S
                or positions.stamp_s < self._connected_at):
            return None
        units = tuple(None if positions.counts.get(i) is None else float(positions.counts[i])
                      for i in self._ids)
        return ServoReport(units, 1.0, positions.stamp_s)

    def release(self, *, detach: bool) -> None:
        """Turn the torque off (``detach``), else leave it on: the servos hold where they are."""
        if detach:
            self.link.torque(False)

    def sync(self, timeout_s: float) -> None:
        """Wait until the goals and torque set so far went out (see :meth:`BusLink.sync`)."""
        self.link.sync(timeout_s)

    def close(self) -> None:
        """Close the link (the servos keep their torque as it is)."""
        self._say_notices()
        self.link.close()

    def link_values(self) -> dict[str, object]:
        """Return the port, the servos found and the link's counters for /diagnostics."""
        link, stats = self.link, self.link.stats()
        return {
            'port': link.path, 'protocol': link.protocol.value, 'state': link.state.value,
            'servos': link.board or '', 'answering ids': ' '.join(map(str, link.admitted())),
            'reconnects': stats.reconnects, 'timeouts': stats.timeouts,
            'retries': stats.retries, 'commands': stats.commands,
            'coalesced': stats.coalesced, 'status packets': stats.acks,
            **link.codec_counts(),
            'round trip median [ms]': _ms(stats.rtt_median_s),
            'round trip p99 [ms]': _ms(stats.rtt_p99_s)}

    def health(self) -> tuple[ServoHealth, ...]:
        """Return one condition per servo, in servo order (see the limits above)."""
        self._say_notices()
        conditions = self.link.health()
        now_s = self._clock()
        return tuple(self._health(servo_id, conditions[servo_id], now_s)
                     for servo_id in self._ids)

    def _health(self, servo_id: int, condition: ServoCondition, now_s: float) -> ServoHealth:
        name = self.servo_name(servo_id)
        values: dict[str, object] = {'id': servo_id, 'model': condition.model}
        if condition.silent_since_s is not None:
            silent_s = max(0.0, now_s - condition.silent_since_s)
            return ServoHealth(name, HealthLevel.ERROR,
                               f'silent for {silent_s:.1f} s: {name} does not answer (cable, '
                               'id or supply)', values)
        if condition.stamp_s is None:
            return ServoHealth(name, HealthLevel.OK, 'waiting for its first readings', values)
        problems: list[tuple[HealthLevel, str]] = []
        temperature = condition.temperature_c
        if temperature is not None:
            values['temperature [C]'] = temperature
            problems.append(_against(temperature, self._heat.warn_c, self._heat.error_c,
                                     f'temperature {temperature:.0f} C', 'C'))
        load = condition.load_percent
        if load is not None:
            values['load [%]'] = round(load, 1)
            problems.append(_against(abs(load), LOAD_WARN_PERCENT, LOAD_ERROR_PERCENT,
                                     f'load {abs(load):.0f} %', '%'))
        voltage = condition.voltage_v
        if voltage is not None:
            values['voltage [V]'] = round(voltage, 2)
            peak = max(self._peak_voltage.get(servo_id, voltage), voltage)
            self._peak_voltage[servo_id] = peak
            problems.extend(_outside_range(voltage, condition))
            if voltage < peak * (1.0 - VOLTAGE_SAG_WARN):
                problems.append((HealthLevel.WARN, f'voltage {voltage:.1f} V sags more than '
                                 f'{VOLTAGE_SAG_WARN:.0%} below its {peak:.1f} V (supply too '
                                 'weak for the load?)'))
        words = condition.error_words
        values['errors'] = ', '.join(words)
        if words:
            problems.append((HealthLevel.ERROR, f'reports {", ".join(words)}'))
        worst = [(level, text) for level, text in problems if level > HealthLevel.OK]
        if not worst:
            return ServoHealth(name, HealthLevel.OK, 'ok', values)
        level = max(level for level, _ in worst)
        return ServoHealth(name, level, '; '.join(text for _, text in worst), values)

    def _say_notices(self) -> None:
        for notice in self.link.take_notices():
            self._warn(f'{self.servo_name(notice.servo_id)}: {notice.text}')


def _outside_range(voltage: float, condition: ServoCondition) -> list[tuple[HealthLevel, str]]:
    """Return an ERROR if the supply ``voltage`` [V] is outside the range the servo takes."""
    voltages = condition.voltage_range_v
    if voltages is None or voltages[0] <= voltage <= voltages[1]:
        return []
    low, high = voltages
    return [(HealthLevel.ERROR, f'voltage {voltage:.1f} V outside its range {low:g} to '
             f'{high:g} V ({condition.voltage_range_source})')]


def _against(value: float, warn: float, error: float, what: str,
             unit: str) -> tuple[HealthLevel, str]:
    """Return the level of ``value`` against its WARN and ERROR limits, and why."""
    if value >= error:
        return HealthLevel.ERROR, f'{what} at or above the error limit {error:g} {unit}'
    if value >= warn:
        return HealthLevel.WARN, f'{what} at or above the warning limit {warn:g} {unit}'
    return HealthLevel.OK, ''


def _ms(seconds: Optional[float]) -> object:
    return '' if seconds is None else 1e3 * seconds
