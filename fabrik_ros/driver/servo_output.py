"""The driver's seam: what the pure driver core needs from "the servos", board or bus.

:class:`~fabrik_ros.driver.servo_driver.ServoDriver` decides what the arm does (command
intake, speed limits, the safe start, enable and detach, feedback, the shutdown move); a
:class:`ServoOutput` carries those decisions to the servos and brings their reports back.
Two implementations, picked by the ``protocol`` parameter:

- :class:`~fabrik_ros.driver.pulse_output.PulseOutput`: a PWM board (native, ssc32,
  maestro) through :class:`~fabrik_ros.servo_io.ServoLink` and a
  :class:`~fabrik_ros.driver.board_layout.BoardLayout`; unit ``'us'``.
- ``BusOutput`` (:mod:`fabrik_ros.driver.bus_output`): serial bus servos (feetech,
  dynamixel) through a ``BusLink`` and the servos' ids; unit ``'count'``.

Servos are always listed in one order, the *servo order*: the joints' servos in joint order,
then the auxiliary servos (a gripper) in arm-file order (:func:`servo_names`). Every vector of
units crossing this seam (:meth:`ServoOutput.send`, :class:`ServoReport`) is in that order.

An output never raises to the core for a fault of the line: a lost board shows as a
:class:`LinkEvent` in :meth:`ServoOutput.take_events` and in ``state``; only
:meth:`ServoOutput.sync` raises (:class:`~fabrik_ros.servo_io.LinkError`).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
import enum
from typing import Literal, Optional
from typing import Protocol as TypingProtocol

from fabrik_ros.kinematics import ServoMap
from fabrik_ros.servo_io.link_options import LinkState
from fabrik_ros.servo_io.protocols.dialect import Protocol

ServoUnit = Literal['us', 'count']


@dataclass(frozen=True)
class LinkEvent:
    """A change of the link's state; for a loss, the error that caused it.

    The error is the one of that moment: by the time the driver's tick takes the event, the
    link may have failed again for another reason (a reopen of a vanished port).
    """

    state: LinkState
    error: Optional[BaseException] = None


@dataclass(frozen=True)
class ServoReport:
    """Where the servos say they are, in their unit, exactly as the board or bus reported.

    :param units: one value per servo in servo order [µs or counts]; None for a servo that
        reported nothing (unset, detached on a board that then reports nothing, silent)
    :param resolution: the step of the reports in the unit (SSC-32U: 10 µs, native: 1 µs,
        bus servos: 1 count), for deciding whether a report confirms a command
    :param stamp_s: when the report was taken [s], on the clock the core was given
    """

    units: tuple[Optional[float], ...]
    resolution: float
    stamp_s: float


class HealthLevel(enum.IntEnum):
    """How a servo is doing; the numbers are those of diagnostic_msgs/DiagnosticStatus."""

    OK = 0
    WARN = 1
    ERROR = 2


@dataclass(frozen=True)
class ServoHealth:
    """One servo's condition, as its own replies tell (bus servos; PWM servos tell nothing).

    The node publishes each as one DiagnosticStatus, its name prefixed with the node's.

    :param name: which servo, for a person: ``'servo wrist_roll (id 5)'``
    :param level: the worst of the values against their limits; ERROR for a silent servo
    :param message: why the level is what it is (``'silent since 2.1 s'``, ``'overheating'``,
        ``'ok'``), naming the value and its limit where one is crossed
    :param values: readings with their unit in the key (``'temperature [C]': 41.0``) and the
        servo's error words (``'errors': 'overload, overheat'``)
    """

    name: str
    level: HealthLevel
    message: str
    values: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class RebootOrder:
    """What :meth:`ServoOutput.reboot` set going: the servos rebooted, or why none was.

    :param rebooted: each servo rebooted as a person reads it, with the hardware error it
        reported: ``'servo elbow_flex (id 3): overload'``, ``'servo gripper (id 6): no
        hardware error'``
    :param refusal: why none was ('' when some were)
    """

    rebooted: tuple[str, ...] = ()
    refusal: str = ''


class ServoOutput(TypingProtocol):
    """What the driver core needs from the servos (see the module docstring).

    Every method may be called from the node's threads while the link's own thread runs;
    none blocks except :meth:`sync` and :meth:`close`.
    """

    @property
    def unit(self) -> ServoUnit:
        """Return the unit the servos are driven in: ``'us'`` (PWM) or ``'count'`` (bus)."""

    @property
    def protocol(self) -> Protocol:
        """Return the protocol spoken on the line."""

    @property
    def path(self) -> str:
        """Return the serial port (reopened by this name after an unplug)."""

    @property
    def state(self) -> LinkState:
        """Return the link's state now."""

    @property
    def board_name(self) -> str:
        """Return what the board or bus said it is, for the log ('' before it answered)."""

    @property
    def last_error(self) -> Optional[BaseException]:
        """Return why the link last went down or could not come up (its text names the port)."""

    def start(self) -> None:
        """Open the port and keep it open (reconnecting) until :meth:`close`."""

    def take_events(self) -> list[LinkEvent]:
        """Return the link's state changes since the last call, oldest first.

        Thread-safe: the link appends from its thread, the core takes on its own.
        """

    def take_admitted(self) -> dict[int, float]:
        """Return the servos (servo order) that rejoined since the last call, and their units.

        A bus servo admitted after the connect (it answers again after it stopped, or it was
        late) holds where it stands, the goal it had dropped, and takes no position until it
        was named here: the caller moves it on from the units given. PWM boards: none.
        """

    def named_silent(self, servo: int) -> Optional[bool]:
        """Return whether the link names servo ``servo`` (servo order) silent now.

        True once the requests it missed say it stopped answering, False while it answers
        (a report that is merely late, on a loaded host, is not silence); None where the link
        does not judge each servo (PWM boards): the caller's own clock decides.
        """

    def send(self, units: Sequence[float], move_s: float) -> None:
        """Move every servo to ``units`` (servo order, each within its calibrated range).

        Latest wins; never blocks. The output caps ``move_s`` to what its line can carry
        and clamps to any limit it knows beyond the calibration (a bus servo's limit
        registers: said once per servo, see the issue's decision 10).

        :param move_s: how long the servos take to get there [s], 0 = at once
        """

    def attach(self, on: bool) -> None:
        """Make the servos hold their targets (``on``) or go limp.

        PWM: the servos' channels pulse, or every channel stops; bus: torque on or off.
        Called with True only after :meth:`send` gave every servo a target.
        """

    def report(self, now_s: float) -> Optional[ServoReport]:
        """Return the servos' positions reported since the latest connect, if recent.

        None before the first report after a (re)connect, when feedback is off, or when the
        latest report is older than a few feedback periods at ``now_s`` [s].
        """

    def torque_limit(self, servo: int, fraction: Optional[float]) -> bool:
        """Cap one servo's output at ``fraction`` of its full torque (None: full); latest wins.

        For a gripper's grip and its stall protection. Never blocks; the bus writes it,
        answered, and gives it again to a servo admitted anew.

        :param servo: the servo's index in servo order
        :returns: False if the servo has no torque limit (a PWM servo): nothing is sent
        """

    def limp(self, servo: int, limp: bool) -> bool:
        """Keep one servo limp whatever :meth:`attach` says (``limp``), or stop doing so.

        For a servo detached for overheating while the others hold. Never blocks; its
        position is still reported; released, it takes the torque :meth:`attach` last set.

        :param servo: the servo's index in servo order
        :returns: False if the servos cannot be detached one by one (PWM): nothing is sent
        """

    def temperatures(self) -> tuple[Optional[float], ...]:
        """Return each servo's latest reported temperature [°C, servo order], None: unknown.

        () where no servo reports one (PWM).
        """

    def effort(self, servo: int, now_s: float) -> Optional[float]:
        """Return the servo's load as a signed fraction of its full torque, if it reports one.

        None for a servo that reports none (PWM), or whose latest reading is not recent.

        :param servo: the servo's index in servo order
        """

    @property
    def reboot_refusal(self) -> str:
        """Return why these servos cannot be rebooted ('' when they can: Dynamixel X)."""

    def reboot(self, servos: Optional[Sequence[int]] = None) -> RebootOrder:
        """Reboot servos (servo order) that answer; never blocks. None: the default set.

        The default: those reporting a hardware error, else every one that answers. A
        Dynamixel servo shut down by a hardware error (overload, overheating, electrical
        shock) stays limp until rebooted; each rebooted one rejoins as :meth:`take_admitted`
        says, holding where it stands with the torque as attached.
        """

    def synced(self) -> bool:
        """Return True once the servos took (or refused) everything sent so far.

        Taken: acknowledged where the protocol acknowledges, written to the line elsewhere.
        """

    def release(self, *, detach: bool) -> None:
        """Leave the servos for the driver's exit: limp (``detach``), or holding.

        Holding a PWM board means its watchdog is switched off (the board keeps pulsing);
        holding bus servos means leaving their torque on.
        """

    def sync(self, timeout_s: float) -> None:
        """Wait until the servos have everything sent so far.

        :raises LinkError: LinkTimeout if that takes longer than ``timeout_s`` [s],
            BoardRefused if the board refused it, LinkLost if the link is closed
        """

    def close(self) -> None:
        """Stop the link's thread and close the port."""

    def link_values(self) -> dict[str, object]:
        """Return the link's figures for the board's diagnostic status (port, counters, ...)."""

    def health(self) -> tuple[ServoHealth, ...]:
        """Return one condition per servo that reports one (bus servos), else ()."""


def servo_names(servo_map: ServoMap) -> tuple[str, ...]:
    """Return the servos' names in servo order: the joints', then the auxiliary servos'.

    A joint's servo is named after its joint (``servos.<joint>`` in the arm file).
    """
    return (*(c.joint for c in servo_map.calibrations), *(a.name for a in servo_map.aux))


def servo_addresses(servo_map: ServoMap) -> tuple[int, ...]:
    """Return each servo's board channel (PWM) or bus id, in servo order."""
    return (*(c.channel for c in servo_map.calibrations), *(a.channel for a in servo_map.aux))
