"""Where the gripper stands open and closed: two points of its servo's range, in its unit."""

from dataclasses import dataclass

from fabrik_ros.driver.aux_axis import AuxAxis
from fabrik_ros.hand_input.gripper_buttons import Jaw


@dataclass(frozen=True)
class JawPositions:
    """The open and closed gripper positions, in the gripper's unit (PWM: fraction; bus: rad).

    Each is given as a fraction of the gripper servo's calibrated range (0.0 its low end:
    ``min_us`` / ``min_deg``; 1.0 its high end), so no goal can lie outside that range.

    >>> from fabrik_ros.driver.aux_axis import CountAux
    >>> from fabrik_ros.kinematics import CountAuxServo
    >>> axis = CountAux(CountAuxServo('gripper', 6, 2048.0, 1, -0.5, 1.5, 0.0))
    >>> JawPositions.of(axis, open_fraction=1.0, closed_fraction=0.25).positions
    (1.5, 0.0)

    :param open_position: the goal the open command sends
    :param closed_position: ... the close command
    :param unit: the positions' unit, for log lines
    """

    open_position: float
    closed_position: float
    unit: str

    @classmethod
    def of(cls, axis: AuxAxis, *, open_fraction: float, closed_fraction: float
           ) -> 'JawPositions':
        """Return the positions at those fractions of ``axis``'s range.

        :raises ValueError: for a fraction outside [0, 1], naming it
        """
        for name, fraction in (('open_fraction', open_fraction),
                               ('closed_fraction', closed_fraction)):
            if not 0.0 <= fraction <= 1.0:
                raise ValueError(f'{name} = {fraction}, must be within [0.0, 1.0] (a fraction '
                                 'of the gripper servo range)')
        span = axis.high - axis.low
        unit = 'rad' if 'rad' in axis.range_note else 'of the pulse range'
        return cls(axis.low + open_fraction * span, axis.low + closed_fraction * span, unit)

    @property
    def positions(self) -> tuple[float, float]:
        """Return (open, closed)."""
        return self.open_position, self.closed_position

    def position(self, jaw: Jaw) -> float:
        """Return the goal position of ``jaw``."""
        return self.open_position if jaw is Jaw.OPEN else self.closed_position
