"""What a bus link reports to its caller: positions, each servo's condition, notices."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class BusPositions:
    """Present positions from one sync read [counts], by id; servos that did not answer lack."""

    counts: Mapping[int, int]
    stamp_s: float


@dataclass(frozen=True)
class ServoCondition:
    """What a servo last reported of itself; None where it has not reported that yet.

    :param temperature_c: its temperature [°C]
    :param voltage_v: its supply voltage [V]
    :param load_percent: its load, signed by direction [% of its maximum torque]
    :param error_words: the error bits of its latest status (and hardware error register), in
        words; () when none is set
    :param silent_since_s: when it stopped answering (or the connect it missed), else None
    :param model: the model its model number names ('' before it was read)
    :param stamp_s: when the readings were taken [s]
    :param voltage_range_v: the supply voltages it takes [V]: its input-voltage limit
        registers as read at admission, else the range set for its model; None: unknown
    :param voltage_range_source: where that range comes from, for a person
    :param hardware_errors: the hardware error it reports, in words (Dynamixel: its
        Hardware Error Status, or the alert bit before that register was read); () when
        none. One its Shutdown register names keeps it limp until a reboot.
    """

    temperature_c: Optional[float]
    voltage_v: Optional[float]
    load_percent: Optional[float]
    error_words: tuple[str, ...]
    silent_since_s: Optional[float]
    model: str
    stamp_s: Optional[float]
    hardware_errors: tuple[str, ...] = ()
    voltage_range_v: Optional[tuple[float, float]] = None
    voltage_range_source: str = ''


@dataclass(frozen=True)
class Notice:
    """Something a person should read about one servo (the link has no log of its own)."""

    servo_id: int
    text: str

    def __str__(self) -> str:
        """Return ``'servo id 3: stopped answering ...'``."""
        return f'servo id {self.servo_id}: {self.text}'
