"""Calibrating bus servos by moving the arm by hand: live counts, marks, the arm-file copy.

With the servos' torque off the user moves each joint to its minimum position
(``joints.<name>.min_deg``), its maximum and its zero, and marks each; the servos report
their counts (servo_driver's ``~/servo_positions``) as the joint moves. From the marks:

- ``direction``: 1 where the count at the maximum is above the count at the minimum;
- ``zero_count``: the count marked at the zero, else the one the two ends give at a
  turn's ``counts_per_turn``;
- where the joint's range through that line would cross the encoder's seam (counts outside
  0 .. counts_per_turn - 1), the shift that centres it in the turn, taken up by the servo's
  homing offset: the new ``homing_offset`` (written into the servo by the driver at its next
  connect) and ``zero_count`` are saved together.

A servo's counts wrap from counts_per_turn - 1 to 0 at the seam, so each servo's reports are
tracked unwrapped (:class:`SeamTracker`): a joint moved across the seam keeps counting (past
4095, or below 0) rather than jumping a turn. No count in the file is ever negative.
"""

from collections.abc import Mapping
from dataclasses import dataclass, replace
import math
from pathlib import Path
from typing import Optional, Union

from fabrik_ros.kinematics import Arm, CountAuxServo, CountCalibration
from fabrik_ros.kinematics.description.count_calibration import shifted_offset
from fabrik_ros.webview.calibration import CalibrationError
from fabrik_ros.webview.calibration_session import Mark, save_paths
from fabrik_ros.webview.servo_yaml import save_arm_copy, SavedCalibration

BusServo = Union[CountCalibration, CountAuxServo]
# Marks whose span differs from the joint's range by more than this share are not the joint's
# ends (another joint moved, a mark left from before): a hand at a stop is a few degrees off.
SPAN_TOLERANCE = 0.15
# How each maker's homing offset moves Present_Position (see shifted_offset).
HOMING_SIGNS = {'feetech': -1, 'dynamixel': 1}


class SeamTracker:
    """A servo's reported counts (0 .. turn - 1), unwrapped across the encoder's seam.

    The first report is taken as it is; each next one is taken as the nearest count to the
    last, modulo a turn: between two reports (tens of milliseconds) a hand moves a joint far
    less than half a turn.

    >>> tracker = SeamTracker(4096)
    >>> [tracker.update(raw) for raw in (4000, 4090, 30, 100, 4050)]
    [4000.0, 4090.0, 4126.0, 4196.0, 4050.0]
    """

    def __init__(self, counts_per_turn: int) -> None:
        self._turn = counts_per_turn
        self._value: Optional[float] = None

    @property
    def value(self) -> Optional[float]:
        """Return the unwrapped count, None before the first report."""
        return self._value

    def update(self, raw: float) -> float:
        """Take one report (a count within 0 .. turn - 1) and return the unwrapped count."""
        if self._value is None:
            self._value = float(raw)
            return self._value
        half = self._turn / 2.0
        step = (raw - self._value + half) % self._turn - half
        self._value += step
        return self._value


@dataclass(frozen=True)
class CountMarks:
    """Unwrapped counts a user marked for one servo; None where nothing was marked."""

    min_count: Optional[float] = None
    max_count: Optional[float] = None
    zero_count: Optional[float] = None

    def marked(self) -> bool:
        """Return True if at least one mark was set."""
        return any(v is not None for v in (self.min_count, self.max_count, self.zero_count))


_MARK_FIELD = {Mark.MIN: 'min_count', Mark.MAX: 'max_count', Mark.ZERO: 'zero_count'}


def count_fields(servo: BusServo, marks: CountMarks,
                 homing_sign: Optional[int]) -> dict[str, Union[float, int]]:
    """Return the servo section's new keys (zero_count, direction, maybe homing_offset).

    :param homing_sign: how the servos' maker moves counts with the homing offset
        (:data:`HOMING_SIGNS`); needed only when the range must be moved off the seam
    :raises CalibrationError: naming the servo and what is wrong with its marks
    """
    name = _name(servo)
    if marks.min_count is None or marks.max_count is None:
        missing = 'min' if marks.min_count is None else 'max'
        raise CalibrationError(f'{name} mark {missing} = None, must be marked too: both ends '
                               'give the direction')
    turn, low, high = servo.counts_per_turn, servo.min_rad, servo.max_rad
    scale = turn / (2.0 * math.pi)
    span, expected = abs(marks.max_count - marks.min_count), (high - low) * scale
    if abs(span - expected) > SPAN_TOLERANCE * expected:
        raise CalibrationError(
            f'{name} marks min {marks.min_count:.0f} and max {marks.max_count:.0f} span '
            f'{span:.0f} counts ({math.degrees(span / scale):.1f} deg), but its limits span '
            f'{math.degrees(high - low):.1f} deg: mark the joint at its min_deg and max_deg')
    direction = 1 if marks.max_count > marks.min_count else -1
    zero = marks.zero_count if marks.zero_count is not None else (
        (marks.min_count + marks.max_count) / 2.0 - direction * (low + high) / 2.0 * scale)
    ends = sorted((zero + direction * low * scale, zero + direction * high * scale))
    fields: dict[str, Union[float, int]] = {'direction': direction}
    if 0.0 <= ends[0] and ends[1] <= turn - 1:
        fields['zero_count'] = _tidy(zero)
        return fields
    if ends[1] - ends[0] > turn - 1:
        raise CalibrationError(f'{name} range spans {ends[1] - ends[0]:.0f} counts, more than '
                               f'the encoder turns through ({turn - 1})')
    shift = round((turn - 1) / 2.0 - (ends[0] + ends[1]) / 2.0)
    if servo.homing_offset is None or homing_sign is None:
        needs = ('homing_offset in its arm-file section (the value the driver keeps in the '
                 'servo; 0 from the factory), then restart the driver and mark again'
                 if servo.homing_offset is None else "the driver's protocol (feetech or "
                 "dynamixel), which sets the register's sign; it is asked of the driver")
        raise CalibrationError(f'{name} range crosses the encoder seam (counts {ends[0]:.0f} '
                               f'.. {ends[1]:.0f}); moving it off the seam needs {needs}')
    fields['zero_count'] = _tidy(zero + shift)
    fields['homing_offset'] = shifted_offset(servo.homing_offset, shift, homing_sign, turn)
    return fields


class HandCalibrationSession:
    """Track the bus servos' counts, collect marks, write them into a copy of the arm file.

    :param arm: the arm as loaded from ``source`` (its servos calibrated in counts)
    :param source: the arm file whose text (and comments) the copy keeps
    :param target: where the copy goes unless :meth:`save` names a file beside ``source``
    :raises ArmConfigError: if the arm's servos are not bus servos in counts
    """

    def __init__(self, arm: Arm, source: Optional[Path], target: Optional[Path]) -> None:
        joints, aux = arm.servo_map.count_servos()
        self._servos: dict[str, tuple[str, BusServo]] = {
            **{c.joint: ('servos', c) for c in joints},
            **{a.name: ('aux_servos', a) for a in aux}}
        self.source, self.target = source, target
        self._trackers = {name: SeamTracker(servo.counts_per_turn)
                          for name, (_, servo) in self._servos.items()}
        self._raw: dict[str, float] = {}
        self._marks: dict[str, CountMarks] = {}
        self._homing_sign: Optional[int] = None
        self._protocol: Optional[str] = None

    @property
    def protocol(self) -> Optional[str]:
        """Return the driver's protocol once known (it gives the homing offset's sign)."""
        return self._protocol

    @property
    def servo_names(self) -> tuple[str, ...]:
        """Return the servos that can be calibrated: the joints', then the auxiliary ones."""
        return tuple(self._servos)

    def set_protocol(self, protocol: str) -> None:
        """Say which maker's servos these are (servo_driver's ``protocol``).

        :raises CalibrationError: for a protocol that drives no bus servos
        """
        if protocol not in HOMING_SIGNS:
            raise CalibrationError(f'protocol = {protocol!r}, must be one of '
                                   f'{sorted(HOMING_SIGNS)} for bus servos in counts')
        self._homing_sign = HOMING_SIGNS[protocol]
        self._protocol = protocol

    def observe(self, counts: Mapping[str, float]) -> None:
        """Take the servos' reported counts by name; anything else is left out.

        A report that names no servo of the arm, or holds no count within the encoder's
        0 .. counts_per_turn - 1 (NaN, a negative, a huge number), changes nothing.
        """
        for name, raw in counts.items():
            entry = self._servos.get(name)
            if entry is None or isinstance(raw, bool) or not isinstance(raw, (int, float)):
                continue
            if math.isfinite(raw) and 0.0 <= raw <= entry[1].counts_per_turn - 1:
                self._raw[name] = float(raw)
                self._trackers[name].update(float(raw))

    def raw(self, servo: str) -> Optional[float]:
        """Return the last count the servo reported, None before any."""
        return self._raw.get(servo)

    def count(self, servo: str) -> Optional[float]:
        """Return the servo's count, unwrapped across the seam, None before any report."""
        tracker = self._trackers.get(servo)
        return tracker.value if tracker is not None else None

    def mark(self, servo: str, which: Mark) -> CountMarks:
        """Record that ``servo`` is at the position ``which`` names, at its present count.

        :raises CalibrationError: for a servo the arm lacks, or one that has not reported
        """
        if servo not in self._servos:
            raise CalibrationError(f'servo {servo!r} is not one of {list(self._servos)}')
        count = self.count(servo)
        if count is None:
            raise CalibrationError(f'{servo} has reported no count yet (is servo_driver '
                                   'publishing servo_positions?)')
        marks = replace(self._marks.get(servo, CountMarks()), **{_MARK_FIELD[which]: count})
        self._marks[servo] = marks
        return marks

    def marks(self, servo: str) -> CountMarks:
        """Return the marks set for ``servo`` so far."""
        return self._marks.get(servo, CountMarks())

    def fields(self) -> dict[str, dict[str, dict[str, Union[float, int]]]]:
        """Return the new keys of every marked servo, by section and servo name.

        :raises CalibrationError: if a servo's marks cannot make a calibration
        """
        result: dict[str, dict[str, dict[str, Union[float, int]]]] = {}
        for name, marks in self._marks.items():
            if marks.marked():
                section, servo = self._servos[name]
                result.setdefault(section, {})[name] = count_fields(servo, marks,
                                                                    self._homing_sign)
        return result

    def save(self, save_to: Optional[str] = None) -> SavedCalibration:
        """Write the calibrated copy (validated by the arm loader first).

        :raises SavePathError: if ``save_to`` is neither the configured file nor a name beside
            the arm file
        :raises CalibrationError: if nothing is marked, marks make no calibration, or no
            source/target file was given
        :raises ArmConfigError: if the result is not a valid arm file
        """
        source, target = save_paths(self.source, self.target, save_to)
        fields = self.fields()
        if not fields:
            raise CalibrationError('marks = {}, must hold at least one marked servo to save')
        notes = {section: {name: dict.fromkeys(keys, 'marked by hand in web_view')
                           for name, keys in entries.items()}
                 for section, entries in fields.items()}
        return save_arm_copy(source, target, fields, notes)


def _name(servo: BusServo) -> str:
    return servo.joint if isinstance(servo, CountCalibration) else servo.name


def _tidy(value: float) -> float:
    """Round away float noise so the YAML reads as typed (counts to a thousandth)."""
    return round(float(value), 3) + 0.0
