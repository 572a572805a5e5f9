"""What the demo needs of a board: a port for the driver and what its outputs hold.

A PWM board is judged by the pulses its pins emit [µs]; a servo bus by the positions its
servos stand at [counts], read off the simulated servos themselves, never through the link
under test. :func:`readout_for` says which outputs of a board carry an arm's servos and what
they hold once the arm is at given angles.
"""

from collections.abc import Sequence
from dataclasses import dataclass
import time
import typing

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.boardsim.bus_firmware import BusFirmware
from fabrik_ros.driver.board_layout import BoardLayout
from fabrik_ros.kinematics import Arm
from fabrik_ros.servo_io import Protocol


class PinBoard(typing.Protocol):
    """A board the demo runs against: the Python SimBoard, the Uno firmware in simavr, a bus.

    The demo judges a step by what the board's outputs hold, not by what the link reports, so
    any board that is opened by path and can be measured at its outputs will do.
    """

    @property
    def protocol(self) -> Protocol:
        """Return what the board speaks (the driver is started with the same)."""

    @property
    def path(self) -> str:
        """Return the path the driver opens."""

    @property
    def pty_path(self) -> str:
        """Return the pseudo-terminal behind ``path`` (once the board has started)."""

    def pulses(self) -> Sequence[int]:
        """Return what each output holds now, by channel (on a bus: by servo id).

        A PWM pin: the pulse it emits [µs], 0 = nothing. A bus servo: where it stands [counts].
        """

    def __enter__(self) -> 'PinBoard':
        """Start the board."""

    def __exit__(self, *exc_info: object) -> None:
        """Stop the board."""


class SimBus:
    """Simulated bus servos with ids 1..``max(ids)`` on a pty, read as the demo reads a board.

    :param protocol: a bus protocol (feetech, dynamixel)
    :param link_path: the symlink the driver opens
    :param ids: the arm's servo ids
    """

    def __init__(self, protocol: Protocol, link_path: str, ids: Sequence[int]) -> None:
        self._board = SimBoard(protocol, channels=max(ids), link_path=link_path)

    @property
    def protocol(self) -> Protocol:
        """Return the bus protocol."""
        return self._board.protocol

    @property
    def path(self) -> str:
        """Return the symlink the driver opens."""
        return self._board.path

    @property
    def pty_path(self) -> str:
        """Return the pseudo-terminal behind the symlink."""
        return self._board.pty_path

    def pulses(self) -> list[int]:
        """Return where each servo stands now [counts], by id (index 0: no servo, 0)."""
        firmware = self._board.firmware
        assert isinstance(firmware, BusFirmware)    # a bus protocol's firmware
        return [0, *firmware.present_positions(time.monotonic())]

    def __enter__(self) -> 'SimBus':
        """Start the bus."""
        self._board.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop the bus."""
        self._board.stop()


@dataclass(frozen=True)
class Readout:
    """The outputs carrying an arm's servos, in the order the demo prints them.

    :param channels: board channels (PWM: every channel up to the last the arm uses) or bus
        ids (the joints', then the auxiliary servos')
    :param label: the table column's heading, with the unit
    :param expected_fn: what the outputs hold once the arm stands at given angles [rad]
    """

    channels: tuple[int, ...]
    label: str
    expected_fn: typing.Callable[[Sequence[float]], list[int]]

    def expected(self, angles_rad: Sequence[float]) -> list[int]:
        """Return what the outputs hold once the arm stands at ``angles_rad`` (aux at home)."""
        return self.expected_fn(angles_rad)

    def read(self, board: PinBoard) -> tuple[int, ...]:
        """Return what the outputs hold now."""
        held = board.pulses()
        return tuple(held[channel] if channel < len(held) else 0 for channel in self.channels)


def readout_for(arm: Arm) -> Readout:
    """Return the readout of the arm's servos: pins in µs, or bus servos in counts."""
    servo_map = arm.servo_map
    if servo_map.unit != 'count':
        layout = BoardLayout.of(arm)
        return Readout(tuple(range(layout.channels)), 'board pins [us]',
                       lambda angles: layout.pulse_vector(servo_map.to_units(angles)))
    joints, aux = servo_map.count_servos()
    aux_home = [round(servo.home_units) for servo in aux]

    def counts(angles: Sequence[float]) -> list[int]:
        units = servo_map.to_units(angles).units
        return [round(float(count)) for count in units] + aux_home

    return Readout(tuple(c.channel for c in joints) + tuple(a.channel for a in aux),
                   'servo positions [count]', counts)
