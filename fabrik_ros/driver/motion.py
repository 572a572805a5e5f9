"""Decide, tick by tick, which positions the servo driver sends and over what move time.

The positions are every servo's: the joints' angles [rad], then the auxiliary servos' (a
gripper) in their own unit, each moved no faster than its own speed limit.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Optional

from fabrik_ros.driver.slew import SlewLimiter
from fabrik_ros.kinematics.aliases import FloatVector

Angles = tuple[float, ...]


@dataclass(frozen=True)
class Send:
    """Positions to send (joints [rad], then auxiliary servos) and the time to get there [s]."""

    angles_rad: Angles
    move_s: float


class MotionPlanner:
    """Turn the latest joint command into speed-limited steps, after a slow move home.

    - Nothing is sent before :meth:`start`, which moves to the home pose over at least
      ``home_move_s`` (longer if the speed limits need it and the start pose is known).
    - Commands that arrive before or during the first move home are kept and followed once
      it ends; :meth:`go_home` (the ~/home service) replaces them with the home pose.
    - Afterwards :meth:`step` may be called at any time (on a control tick, or as soon as a
      command arrives). Each step aims to have the board arrive one ``step_s`` from now: a
      joint moves toward the latest command by at most its speed limit times the time that
      adds beyond where the previous step already reaches, and the board interpolates until
      then, so no joint exceeds its speed, however the steps are spaced, and a command after
      an idle spell moves at once by a full step.
    - Commands are latched: with no new command the arm completes the move to the last one
      and holds there. Nothing on the host times out.
    """

    def __init__(self, slew: SlewLimiter, home_rad: FloatVector, *,
                 home_move_s: float, step_s: float) -> None:
        """Plan from ``home_rad`` [rad] (a sequence, or an array such as ``Arm.home``).

        :param home_move_s: the shortest move home [s]
        :param step_s: how far ahead a step reaches [s], the control period
        :raises ValueError: if ``step_s`` is not > 0
        """
        if not step_s > 0.0:
            raise ValueError(f'step_s = {step_s!r}, must be > 0.0')
        self._slew = slew
        self._home = tuple(float(a) for a in home_rad)
        self.home_move_s = home_move_s
        self._step_s = step_s
        self._sent: Optional[Angles] = None
        self._target: Angles = self._home
        self._busy_until = 0.0
        # When the board reaches the angles last sent, if they have been interpolated to.
        self._arrive_s = 0.0

    @property
    def started(self) -> bool:
        """Return True once :meth:`start` has sent the first move."""
        return self._sent is not None

    @property
    def sent(self) -> Optional[Angles]:
        """Return the angles last sent [rad], None before the start."""
        return self._sent

    @property
    def settled(self) -> bool:
        """Return True once the angles last sent are the target: no step is left to send."""
        return self._sent == self._target

    def busy_for_s(self, now_s: float) -> float:
        """Return how long the move home (or a jog's move) still runs [s], 0 if none does."""
        return max(0.0, self._busy_until - now_s)

    @property
    def target(self) -> Angles:
        """Return the latest commanded angles [rad]."""
        return self._target

    @property
    def home_rad(self) -> Angles:
        """Return the home pose [rad]."""
        return self._home

    def set_speeds(self, speeds_rad_s: Sequence[float]) -> None:
        """Change the per-joint speed limits [rad/s] from the next step on."""
        self._slew = SlewLimiter(tuple(float(s) for s in speeds_rad_s))

    def command(self, angles_rad: Sequence[float]) -> None:
        """Make ``angles_rad`` the pose to move to (latest wins)."""
        self._target = tuple(float(a) for a in angles_rad)

    def start(self, now_s: float, current_rad: Optional[Sequence[float]]) -> Send:
        """Return the first move: home, slowly, from ``current_rad`` if the board reported it.

        A command that arrived before the start is kept and followed after the move home.
        """
        self._sent = None if current_rad is None else tuple(float(a) for a in current_rad)
        return self._move_home(now_s)

    def go_home(self, now_s: float) -> Send:
        """Return a slow move to the home pose, which replaces the latest command.

        :param now_s: the current time [s] on the clock later steps use
        """
        self._target = self._home
        return self._move_home(now_s)

    def _move_home(self, now_s: float) -> Send:
        """Move home over home_move_s, or longer if the speed limits need it."""
        move_s = self.home_move_s
        if self._sent is not None:
            # The board may still be on its way to the angles last sent: from where it is,
            # home is as far as the rest of that move plus the way from there.
            remaining_s = max(0.0, self._arrive_s - now_s)
            move_s = max(move_s, remaining_s + self._slew.duration_s(self._sent, self._home))
        self._sent = self._home
        self._busy_until = now_s + move_s
        self._arrive_s = self._busy_until
        return Send(self._home, move_s)

    def moved(self, angles_rad: Sequence[float], arrive_s: float) -> None:
        """Note that the board was sent to ``angles_rad`` another way (a calibration jog).

        They become both the angles sent and the latest command, so nothing moves until a
        new command or :meth:`go_home`, and that move starts from where the servos are.

        :param arrive_s: when the board gets there [s], on the clock later steps use
        """
        self._sent = self._target = tuple(float(a) for a in angles_rad)
        self._busy_until = self._arrive_s = arrive_s

    def step(self, now_s: float) -> Optional[Send]:
        """Return the next speed-limited step toward the target, or None if there is none.

        Nothing sent, nothing changes: a step after an idle spell still reaches a full
        ``step_s`` ahead instead of the time since the last call.
        """
        if self._sent is None or now_s < self._busy_until:
            return None
        from_s = max(self._arrive_s, now_s)
        angles = self._slew.step(self._sent, self._target, now_s + self._step_s - from_s)
        if angles == self._sent:
            return None
        self._arrive_s = from_s + self._slew.duration_s(self._sent, angles)
        self._sent = angles
        return Send(angles, self._arrive_s - now_s)

    def resume(self, now_s: float, current_rad: Sequence[float]) -> None:
        """Carry on toward the target from ``current_rad`` [rad], where the board holds now.

        After a reconnect or a re-attach the servos may not be where the last step sent them:
        the next :meth:`step` starts from the pose the board reported instead.
        """
        self._sent = tuple(float(a) for a in current_rad)
        self._busy_until = self._arrive_s = now_s

    def resume_servos(self, positions: Mapping[int, float]) -> None:
        """Carry on toward the target with these servos (by index) from where they hold.

        For servos that rejoined alone: the others go on as planned.
        """
        if self._sent is None:
            return
        sent = list(self._sent)
        for index, position in positions.items():
            sent[index] = float(position)
        self._sent = tuple(sent)

    def pause(self, now_s: float) -> None:
        """Note that nothing could be sent until ``now_s`` (link down): no catching up after."""
        self._arrive_s = now_s
