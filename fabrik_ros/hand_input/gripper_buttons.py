"""Two gamepad buttons that open and close the gripper: a goal on a press edge, never on a hold.

:class:`GripperButtons` is fed each ``sensor_msgs/Joy`` message's ``buttons`` and ``axes``
(as plain sequences) and says which gripper command, if any, that message asks for. A button
asks once, on the message where it goes from released to pressed; holding it (joy repeats its
last state at its ``autorepeat_rate``) asks nothing more, and it asks again only after a
message has shown it released. The first message only learns the buttons' state, so a button
held while the node starts (or a stuck one) sends nothing. Both buttons pressed in the same
message send neither.

Every message is checked before it counts (a refused one changes nothing): at most
:data:`MAX_ENTRIES` buttons and axes, enough buttons for the two configured ones, every button
0 or 1 and every axis finite.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
import math
from typing import Optional

# More buttons or axes than any gamepad has: refused unread (joy sends about 11 and 8).
MAX_ENTRIES = 64


class Jaw(Enum):
    """What a gripper command asks of the jaw."""

    OPEN = 'open'
    CLOSE = 'close'


@dataclass(frozen=True)
class ButtonEvent:
    """What one Joy message means for the gripper.

    :param jaw: the command to send now (None: none)
    :param refusal: why the message was refused ('' when it was taken)
    :param cause: a short key of the refusal's kind, to throttle its warning per cause
    """

    jaw: Optional[Jaw] = None
    refusal: str = ''
    cause: str = ''


class GripperButtons:
    """Turn Joy messages into gripper commands on the open and close buttons' press edges.

    >>> buttons = GripperButtons(open_button=1, close_button=0)
    >>> [buttons.feed(pressed, []).jaw for pressed in ([0, 0], [0, 1], [0, 1], [0, 0], [1, 0])]
    [None, <Jaw.OPEN: 'open'>, None, None, <Jaw.CLOSE: 'close'>]
    >>> buttons.feed([1], []).refusal
    'has 1 buttons, needs at least 2 (open_button 1, close_button 0)'

    :param open_button: the index in ``buttons`` of the button that opens the gripper
    :param close_button: ... that closes it
    :raises ValueError: for a negative index, or the same button for both
    """

    def __init__(self, *, open_button: int, close_button: int) -> None:
        if open_button < 0 or close_button < 0 or open_button == close_button:
            raise ValueError(f'open_button {open_button} and close_button {close_button} must '
                             'be two different button indices (0 or more)')
        self._buttons = {Jaw.OPEN: open_button, Jaw.CLOSE: close_button}
        self._needed = max(open_button, close_button) + 1
        self._held: Optional[dict[Jaw, bool]] = None     # None until a message was taken

    def feed(self, buttons: Sequence[int], axes: Sequence[float]) -> ButtonEvent:
        """Take one Joy message's buttons and axes; return the command it asks for, if any."""
        refusal = self._refusal(buttons, axes)
        if refusal is not None:
            return refusal
        held = {jaw: buttons[index] == 1 for jaw, index in self._buttons.items()}
        before, self._held = self._held, held
        if before is None:
            return ButtonEvent()
        pressed = [jaw for jaw in Jaw if held[jaw] and not before[jaw]]
        return ButtonEvent(pressed[0]) if len(pressed) == 1 else ButtonEvent()

    def _refusal(self, buttons: Sequence[int], axes: Sequence[float]) -> Optional[ButtonEvent]:
        if len(buttons) > MAX_ENTRIES or len(axes) > MAX_ENTRIES:
            return ButtonEvent(refusal=f'has {len(buttons)} buttons and {len(axes)} axes, at '
                               f'most {MAX_ENTRIES} of each are taken', cause='size')
        if len(buttons) < self._needed:
            return ButtonEvent(
                refusal=f'has {len(buttons)} buttons, needs at least {self._needed} '
                        f'(open_button {self._buttons[Jaw.OPEN]}, close_button '
                        f'{self._buttons[Jaw.CLOSE]})', cause='few')
        for index, value in enumerate(buttons):
            if value not in (0, 1):
                return ButtonEvent(refusal=f'buttons[{index}] = {value}, must be 0 or 1',
                                   cause='button')
        for index, axis in enumerate(axes):
            if not math.isfinite(axis):
                return ButtonEvent(refusal=f'axes[{index}] = {axis}, must be finite',
                                   cause='axis')
        return None
