"""A terminal's keys as a jog twist: which keys move which way, and when a key's motion ends.

A terminal reports key presses only, never releases: a held key arrives as one character,
then, after the keyboard's auto-repeat delay, as a stream of repeats. So a motion key moves
the tool for ``tap_hold_s`` after its first press (long enough to bridge the auto-repeat
delay, so a held key moves without a gap), and for ``repeat_hold_s`` after each repeat: the
motion ends that long after the key is let go. Space stops every motion at once. Keys of
different axes add up (w then a: forward and left); a key of the same axis replaces the
other direction.

:meth:`KeyJog.tick`, called at the publishing rate, returns the twist to send while any
motion is on, one zero twist when the last one ends, then nothing. The clock is passed in.
"""

from dataclasses import dataclass, field
from enum import Enum
from typing import Optional

# key -> (part of the twist, component 0..2, sign); linear in m/s, angular in rad/s.
MOTION_KEYS: dict[str, tuple[str, int, int]] = {
    'w': ('linear', 0, 1), 's': ('linear', 0, -1),
    'a': ('linear', 1, 1), 'd': ('linear', 1, -1),
    'r': ('linear', 2, 1), 'f': ('linear', 2, -1),
    'i': ('angular', 1, 1), 'k': ('angular', 1, -1),
    'j': ('angular', 2, 1), 'l': ('angular', 2, -1),
}


class KeyAction(Enum):
    """What a key asks for."""

    MOVE = 'move'
    STOP = 'stop'
    OPEN = 'open'
    CLOSE = 'close'
    FASTER = 'faster'
    SLOWER = 'slower'
    QUIT = 'quit'
    NONE = 'none'           # a key that means nothing


OTHER_KEYS = {' ': KeyAction.STOP, 'o': KeyAction.OPEN, 'c': KeyAction.CLOSE,
              '+': KeyAction.FASTER, '=': KeyAction.FASTER, '-': KeyAction.SLOWER,
              'q': KeyAction.QUIT, '\x03': KeyAction.QUIT, '\x04': KeyAction.QUIT}

HELP = """\
Jog the tool from this terminal (twists on jog/twist, in the arm's base frame):
  w / s   +x / -x  (forward / back)      r / f   +z / -z  (up / down)
  a / d   +y / -y  (left / right)        i / k   pitch + / -  (about base y)
                                         j / l   yaw   + / -  (about base z)
  o / c   open / close the gripper       + / -   faster / slower
  space   stop now                       q       quit (Ctrl-C too)
A key moves while it is held, and {tap:.2f} s after a single press; it stops {repeat:.2f} s
after its auto-repeat ends (set tap_hold_s above your keyboard's repeat delay)."""


@dataclass(frozen=True)
class Twist:
    """A jog twist: linear [m/s] and angular [rad/s] components, x y z."""

    linear: tuple[float, float, float] = (0.0, 0.0, 0.0)
    angular: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def is_zero(self) -> bool:
        """Return whether it asks for no motion."""
        return not any(self.linear) and not any(self.angular)


@dataclass(frozen=True)
class KeyJogSettings:
    """The keyboard jog's speeds and timing.

    :param linear_m_s: the speed of a linear key at scale 1 [m/s]
    :param angular_rad_s: ... of an angular key [rad/s]
    :param tap_hold_s: how long a key's first press moves [s]
    :param repeat_hold_s: how long each auto-repeat extends the motion [s]
    :param speed_step: the factor + and - change the scale by
    :param min_scale: the lowest scale
    :param max_scale: the highest
    :raises ValueError: naming a setting that is not positive, or scales out of order
    """

    linear_m_s: float = 0.05
    angular_rad_s: float = 0.5
    tap_hold_s: float = 0.6
    repeat_hold_s: float = 0.15
    speed_step: float = 1.25
    min_scale: float = 0.1
    max_scale: float = 4.0

    def __post_init__(self) -> None:
        for name in ('linear_m_s', 'angular_rad_s', 'tap_hold_s', 'repeat_hold_s',
                     'min_scale', 'max_scale'):
            value = getattr(self, name)
            if not value > 0.0:
                raise ValueError(f'{name} = {value}, must be above 0')
        if not self.speed_step > 1.0 or not self.min_scale <= 1.0 <= self.max_scale:
            raise ValueError(f'speed_step = {self.speed_step} must be above 1 and min_scale '
                             f'{self.min_scale} <= 1 <= max_scale {self.max_scale}')


@dataclass
class _Motion:
    sign: int
    until_s: float


@dataclass
class KeyJog:
    """The keys' motions over time (see the module docstring).

    >>> jog = KeyJog(KeyJogSettings(tap_hold_s=0.5, repeat_hold_s=0.1))
    >>> jog.key('w', now_s=0.0)
    <KeyAction.MOVE: 'move'>
    >>> jog.tick(0.2).linear, jog.tick(0.6).is_zero, jog.tick(0.7)
    ((0.05, 0.0, 0.0), True, None)
    """

    settings: KeyJogSettings = field(default_factory=KeyJogSettings)
    scale: float = 1.0
    _motions: dict[tuple[str, int], _Motion] = field(default_factory=dict)
    _moving: bool = False

    def key(self, char: str, *, now_s: float) -> KeyAction:
        """Take one key press at ``now_s``; return what it asked for."""
        motion = MOTION_KEYS.get(char.lower())
        if motion is None:
            action = OTHER_KEYS.get(char, KeyAction.NONE)
            if action is KeyAction.STOP:
                self._motions.clear()
            elif action in (KeyAction.FASTER, KeyAction.SLOWER):
                step = self.settings.speed_step
                wanted = self.scale * (step if action is KeyAction.FASTER else 1.0 / step)
                self.scale = min(max(wanted, self.settings.min_scale), self.settings.max_scale)
            return action
        part, index, sign = motion
        running = self._motions.get((part, index))
        repeated = running is not None and running.sign == sign and now_s <= running.until_s
        hold = self.settings.repeat_hold_s if repeated else self.settings.tap_hold_s
        until = now_s + hold
        if repeated and running is not None:
            until = max(until, running.until_s)
        self._motions[(part, index)] = _Motion(sign, until)
        return KeyAction.MOVE

    def stop(self) -> None:
        """End every motion (the next tick sends the zero twist, if one was moving)."""
        self._motions.clear()

    def tick(self, now_s: float) -> Optional[Twist]:
        """Return the twist to publish at ``now_s``: the motion, one zero at its end, or None."""
        for axis in [axis for axis, motion in self._motions.items() if now_s > motion.until_s]:
            del self._motions[axis]
        if not self._motions:
            if not self._moving:
                return None
            self._moving = False
            return Twist()
        self._moving = True
        linear, angular = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
        for (part, index), motion in self._motions.items():
            if part == 'linear':
                linear[index] = motion.sign * self.settings.linear_m_s * self.scale
            else:
                angular[index] = motion.sign * self.settings.angular_rad_s * self.scale
        return Twist((linear[0], linear[1], linear[2]), (angular[0], angular[1], angular[2]))

    @property
    def moving(self) -> bool:
        """Return whether the last tick sent a motion."""
        return self._moving
