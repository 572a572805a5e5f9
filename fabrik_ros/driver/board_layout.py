"""Where the arm's servos sit on the board: channel vectors for the link, and back."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from typing import Optional

from fabrik_ros.kinematics import Arm, ArmConfigError, AuxServo, ServoCommand
from fabrik_ros.servo_io.protocols.dialect import Protocol
from fabrik_ros.servo_io.protocols.dialects import dialect_type
from fabrik_ros.servo_io.protocols.native import DEFAULT_LIMITS_US


@dataclass(frozen=True)
class BoardLayout:
    """The board channels of the joints (config order) and of the auxiliary servos.

    Channels the arm does not use keep the board's default limits and a pulse of 0 ("leave
    unchanged"); auxiliary servos (a gripper) are held at their home pulse.
    """

    channels: int
    joint_channels: tuple[int, ...]
    limits_us: tuple[tuple[int, int], ...]
    aux_pulses_us: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, arm: Arm) -> 'BoardLayout':
        """Return the layout the arm's servo map describes."""
        calibrations, aux_servos = arm.servo_map.pulse_servos()
        used = [(c.channel, c.min_us, c.max_us) for c in calibrations]
        used += [(a.channel, a.min_us, a.max_us) for a in aux_servos]
        channels = max(channel for channel, _, _ in used) + 1
        limits = [DEFAULT_LIMITS_US] * channels
        for channel, low, high in used:
            limits[channel] = (math.ceil(low), math.floor(high))
        aux = tuple((a.channel, round(a.home_us)) for a in aux_servos)
        return cls(channels, tuple(c.channel for c in calibrations), tuple(limits), aux)

    @property
    def enable_mask(self) -> int:
        """Return the bit mask of every channel the arm drives (joints and auxiliaries)."""
        mask = 0
        for channel in (*self.joint_channels, *(ch for ch, _ in self.aux_pulses_us)):
            mask |= 1 << channel
        return mask

    def pulse_vector(self, command: ServoCommand,
                     aux_us: Optional[Mapping[int, int]] = None) -> list[int]:
        """Return one whole-µs pulse per channel: the joints', the auxiliaries', else 0.

        :param aux_us: pulse [µs] by channel of the auxiliary servos that were commanded;
            the others stay at their home pulse
        """
        pulses = [0] * self.channels
        for channel, pulse in zip(self.joint_channels, command.units, strict=True):
            low, high = self.limits_us[channel]
            pulses[channel] = min(max(round(float(pulse)), low), high)
        for channel, pulse in self.aux_pulses_us:
            pulses[channel] = (aux_us or {}).get(channel, pulse)
        return pulses

    def joint_pulses(self, reported: Sequence[Optional[int]]) -> Optional[list[float]]:
        """Return the joints' pulses from a per-channel report, None if any joint has none."""
        if len(reported) < self.channels:
            return None
        pulses: list[float] = []
        for channel in self.joint_channels:
            pulse = reported[channel]
            if pulse is None:
                return None
            pulses.append(float(pulse))
        return pulses


def check_board_channels(arm: Arm, protocol: Protocol) -> None:
    """Require every servo's channel to exist on a board of ``protocol``.

    Checked before the link is built, so the refusal names the servo's key in the arm file
    and the board's channel range, not the channel count the link would be asked for.

    :raises ArmConfigError: naming the first servo (highest channel) that does not fit
    """
    board = dialect_type(protocol)
    servo_map = arm.servo_map
    keyed = [(c.channel, f'servos.{c.joint}.channel') for c in servo_map.calibrations]
    keyed += [(a.channel, f'aux_servos.{a.name}.channel') for a in servo_map.aux]
    channel, key = max(keyed)
    if channel >= board.board_channels:
        raise ArmConfigError(key, channel, f'the {board.board_name} drives channels '
                                           f'0..{board.board_channels - 1} (protocol '
                                           f'{protocol.value})')


def aux_pulse_us(servo: AuxServo, position: float) -> tuple[int, bool]:
    """Return the pulse [µs] for an auxiliary servo's ``position``, and whether it was clamped.

    An auxiliary servo (a gripper) has a pulse range but no angle calibration, so its position
    in joint_commands is the fraction of that range: 0.0 at ``min_us``, 1.0 at ``max_us``.
    Values outside [0, 1] are clamped to the range.

    >>> aux_pulse_us(AuxServo('gripper', 5, 1000.0, 2000.0, 1500.0), 0.25)
    (1250, False)
    >>> aux_pulse_us(AuxServo('gripper', 5, 1000.0, 2000.0, 1500.0), 1.5)
    (2000, True)
    """
    pulse = servo.min_us + position * (servo.max_us - servo.min_us)
    clamped = servo.clamp(pulse)
    return min(max(round(clamped), math.ceil(servo.min_us)), math.floor(servo.max_us)), \
        clamped != pulse


def aux_position(servo: AuxServo, pulse_us: float) -> float:
    """Return the position (fraction of the pulse range) of an auxiliary servo's pulse [µs].

    >>> aux_position(AuxServo('gripper', 5, 1000.0, 2000.0, 1500.0), 1500.0)
    0.5
    """
    return (pulse_us - servo.min_us) / (servo.max_us - servo.min_us)
