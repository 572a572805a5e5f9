"""What the demo needs of a board: a port for the driver and the pulses its pins emit."""

from collections.abc import Sequence
import typing

from fabrik_ros.servo_io import Protocol


class PinBoard(typing.Protocol):
    """A board the demo runs against: the Python SimBoard, or the Uno firmware in simavr.

    The demo judges a step by what the board's pins emit, not by what the link reports, so
    any board that is opened by path and can be measured at its pins will do.
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
        """Return what each output pin emits now [µs]; 0 = nothing."""

    def __enter__(self) -> 'PinBoard':
        """Start the board."""

    def __exit__(self, *exc_info: object) -> None:
        """Stop the board."""
