"""Read a joint_commands message as the arm takes it: by name, clamped, unknown names said.

servo_driver and sim_arm take the same message the same way, with the same warnings, through
one :class:`CommandIntake`. The message is hostile input: names and positions of any length,
names the arm does not have, NaN and infinities. Nothing here raises for it; a refusal or a
fix-up comes back as a warning line, throttled per cause so that a flood of one kind of bad
message cannot hide another.
"""

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
import difflib
import math
from typing import Optional

from fabrik_ros.driver.arm_state_machine import LogLevel, LogLine
from fabrik_ros.driver.aux_axis import AuxAxis
from fabrik_ros.kinematics import Joint
from fabrik_ros.monitoring.cause_throttle import CauseThrottle

WARN_EVERY_S = 5.0
# Names in joint_commands warned of once each; beyond this many, a made-up name is said again
# (at most once a throttle period), so a stream of new names cannot grow the memory.
_UNKNOWN_NAMES_KEPT = 64


@dataclass(frozen=True)
class JointCommand:
    """What a joint_commands message asks of the arm.

    :param joints: every joint's target in joint order [rad], clamped to the joint limits
        (joints the message does not name keep the current target); None when the message
        moves no joint (it names only auxiliary servos, or its joint positions were refused)
    :param aux: the named auxiliary servos' positions in their own unit, clamped to range
    """

    joints: Optional[tuple[float, ...]]
    aux: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Intake:
    """A message as taken: the command (None when refused as a whole) and the lines to log."""

    command: Optional[JointCommand]
    logs: tuple[LogLine, ...] = ()


class CommandIntake:
    """Take joint_commands messages for one arm (see the module docstring).

    >>> from fabrik_ros.kinematics import load_arm
    >>> from pathlib import Path
    >>> arm = load_arm(Path(__file__).parents[2] / 'config' / 'arm_4dof.yaml')
    >>> intake = CommandIntake(arm.joints, (), clock=lambda: 0.0)
    >>> intake.take(['elbow'], [0.5], (0.0, 1.0, 0.0, 0.0)).command
    JointCommand(joints=(0.0, 1.0, 0.5, 0.0), aux={})
    >>> print(intake.take(['elbo'], [0.5], (0.0, 1.0, 0.0, 0.0)).logs[0].text[-40:])
    servos []; 'elbo': did you mean 'elbow'?

    :param joints: the arm's joints, in joint order (their limits clamp the targets)
    :param aux: the arm's auxiliary servos
    :param clock: the time [s] for throttling the warnings
    """

    def __init__(self, joints: Sequence[Joint], aux: Sequence[AuxAxis], *,
                 clock: Callable[[], float], warn_every_s: float = WARN_EVERY_S) -> None:
        self._joints = tuple(joints)
        self._names = tuple(joint.name for joint in self._joints)
        self._aux = {axis.name: axis for axis in aux}
        self._throttle = CauseThrottle(warn_every_s, clock=clock)
        self._said_unknown: set[str] = set()

    @property
    def known_names(self) -> tuple[str, ...]:
        """Return every name a command may use: the joints', then the auxiliary servos'."""
        return (*self._names, *self._aux)

    def take(self, names: Sequence[str], positions: Sequence[float],
             current: Sequence[float]) -> Intake:
        """Return what the message ``names`` / ``positions`` asks, and the warnings it earns.

        :param current: every joint's current target in joint order [rad], kept for the
            joints the message does not name (the joints' only: the auxiliary servos'
            targets are the caller's to keep)
        :raises ValueError: if ``current`` does not hold one target per joint (a caller's
            mistake, said at once rather than only when a message names a joint)
        """
        if len(current) != len(self._names):
            raise ValueError(f'current holds {len(current)} targets, must hold one per joint '
                             f'({len(self._names)}: {list(self._names)})')
        logs: list[LogLine] = []
        if len(names) != len(positions):
            self._warn(logs, 'lengths', f'joint_commands ignored: {len(names)} names but '
                                        f'{len(positions)} positions (lengths must match)')
            return Intake(None, tuple(logs))
        given = {str(n): float(p) for n, p in zip(names, positions, strict=True)}
        unknown = [n for n in given if n not in self._names and n not in self._aux]
        if len(unknown) == len(given):
            self._warn(logs, 'no known name', f'joint_commands ignored: names {list(given)} '
                                              f'hold none of the {self._described(unknown)}')
            return Intake(None, tuple(logs))
        self._say_unknown(logs, unknown)
        aux = self._take_aux(logs, given)
        joints = self._take_joints(logs, given, current)
        return Intake(JointCommand(joints, aux), tuple(logs))

    def _take_aux(self, logs: list[LogLine], given: Mapping[str, float]) -> dict[str, float]:
        taken = {}
        for name, position in given.items():
            axis = self._aux.get(name)
            if axis is None:
                continue
            if not math.isfinite(position):
                self._warn(logs, ('aux', name), 'joint_commands ignored: positions not '
                                                f'finite: {{{name!r}: {position}}}')
                continue
            clamped = min(max(position, axis.low), axis.high)
            if clamped != position:
                self._warn(logs, ('aux clamped', name),
                           f'joint_commands: {name} = {position}, must be within '
                           f'[{axis.low}, {axis.high}] ({axis.range_note}); clamped to '
                           f'{clamped}')
            taken[name] = clamped
        return taken

    def _take_joints(self, logs: list[LogLine], given: Mapping[str, float],
                     current: Sequence[float]) -> Optional[tuple[float, ...]]:
        named = {n: p for n, p in given.items() if n in self._names}
        if not named:
            return None
        bad = {n: p for n, p in named.items() if not math.isfinite(p)}
        if bad:
            self._warn(logs, 'not finite', f'joint_commands ignored: positions not finite: {bad}')
            return None
        targets = tuple(named.get(name, float(old))
                        for name, old in zip(self._names, current, strict=True))
        clamped, warnings = self.clamp(targets)
        logs.extend(warnings)
        return clamped

    def clamp(self, targets: Sequence[float]) -> tuple[tuple[float, ...], tuple[LogLine, ...]]:
        """Return finite joint targets [rad, joint order] within the joint limits, and the warning.

        For commands handed over by a call as well as for messages: one warning text.
        """
        targets = tuple(float(t) for t in targets)
        clamped = tuple(j.clamp(t) for j, t in zip(self._joints, targets, strict=True))
        logs: list[LogLine] = []
        if clamped != targets:
            self._warn(logs, 'clamped', f'joint_commands {targets} outside the joint limits, '
                                        f'clamped to {clamped}')
        return clamped, tuple(logs)

    def _say_unknown(self, logs: list[LogLine], unknown: Sequence[str]) -> None:
        """Warn once per name that is neither a joint nor an auxiliary servo of the arm."""
        new = sorted(set(unknown) - self._said_unknown)
        if not new or not self._throttle.allow('unknown names'):
            return
        if len(self._said_unknown) < _UNKNOWN_NAMES_KEPT:
            self._said_unknown.update(new)
        logs.append(LogLine(LogLevel.WARN, f'joint_commands: {new} not in the arm file, ignored '
                                           f'(not one of the {self._described(new)}); said '
                                           'once a name'))

    def _described(self, unknown: Sequence[str]) -> str:
        """Return the known names, then the closest known name of each unknown one."""
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, self.known_names, n=1)
            if close:
                hints.append(f'; {name!r}: did you mean {close[0]!r}?')
        return (f'joints {list(self._names)} nor the auxiliary servos {list(self._aux)}'
                + ''.join(hints))

    def _warn(self, logs: list[LogLine], cause: Hashable, text: str) -> None:
        if self._throttle.allow(cause):
            logs.append(LogLine(LogLevel.WARN, text))
