"""Turn the pulse widths a user marked while jogging a servo into its calibration fields."""

from dataclasses import dataclass
import math
from typing import Optional

from fabrik_ros.kinematics import ServoCalibration
from fabrik_ros.kinematics.description.joint import Joint


class CalibrationError(ValueError):
    """Marks that cannot make a calibration; the message names the mark, its value and why."""


@dataclass(frozen=True)
class ServoMarks:
    """Pulse widths [µs] a user marked for one servo; None where nothing was marked.

    ``min_us`` is where the joint sits at its minimum angle (``joints.<name>.min_deg``),
    ``max_us`` at its maximum angle, ``zero_us`` at 0 degrees.
    """

    min_us: Optional[float] = None
    max_us: Optional[float] = None
    zero_us: Optional[float] = None

    def marked(self) -> bool:
        """Return True if at least one mark was set."""
        return any(v is not None for v in (self.min_us, self.max_us, self.zero_us))


def calibrated_fields(calibration: ServoCalibration, joint: Joint,
                      marks: ServoMarks) -> dict[str, float]:
    """Return the ``servos.<joint>`` YAML fields (µs, degrees) the marks give.

    Both ends marked: the line through them, the servo range between them (a servo mounted the
    other way round gets ``angle_at_min_deg`` > ``angle_at_max_deg``), trim 0. A zero mark then
    sets ``trim_us`` so that 0 degrees lands on it (the range stays where the ends were
    marked). A zero mark alone keeps the line and range and sets only the trim.

    >>> from fabrik_ros.kinematics.description.joint import JointKind
    >>> cal = ServoCalibration('elbow', 2, 500.0, 2500.0, -math.pi / 2, math.pi / 2)
    >>> elbow = Joint('elbow', JointKind.PITCH, -math.pi / 2, math.pi / 2, 0.0)
    >>> calibrated_fields(cal, elbow, ServoMarks(min_us=2400.0, max_us=600.0))['min_us']
    600.0
    >>> calibrated_fields(cal, elbow, ServoMarks(zero_us=1530.0))['trim_us']
    30.0

    :raises CalibrationError: if only one end is marked, both ends are the same pulse, or a
        mark is not a finite positive pulse
    """
    for key, value in (('min_us', marks.min_us), ('max_us', marks.max_us),
                       ('zero_us', marks.zero_us)):
        if value is not None and not (math.isfinite(value) and value > 0.0):
            raise CalibrationError(f'{joint.name} mark {key} = {value!r}, must be a finite '
                                   'pulse width > 0')
    line = _line_from_ends(calibration, joint, marks)
    trim = 0.0
    if marks.zero_us is not None:
        trim = marks.zero_us - line.unclamped_us(0.0)
    return {'min_us': _tidy(line.min_us), 'max_us': _tidy(line.max_us),
            'angle_at_min_deg': _tidy(math.degrees(line.angle_at_min_rad)),
            'angle_at_max_deg': _tidy(math.degrees(line.angle_at_max_rad)),
            'trim_us': _tidy(trim)}


def _line_from_ends(calibration: ServoCalibration, joint: Joint,
                    marks: ServoMarks) -> ServoCalibration:
    """Return the calibration line (trim 0) through the marked ends, else the current one."""
    if marks.min_us is None and marks.max_us is None:
        return ServoCalibration(calibration.joint, calibration.channel, calibration.min_us,
                                calibration.max_us, calibration.angle_at_min_rad,
                                calibration.angle_at_max_rad, 0.0)
    if marks.min_us is None or marks.max_us is None:
        missing = 'min_us' if marks.min_us is None else 'max_us'
        raise CalibrationError(f'{joint.name} mark {missing} = None, must be marked too: '
                               'both ends make the line')
    if marks.min_us == marks.max_us:
        raise CalibrationError(f'{joint.name} marks min_us = max_us = {marks.min_us!r}, '
                               'the two ends must differ')
    ends = sorted([(marks.min_us, joint.min_rad), (marks.max_us, joint.max_rad)])
    (low_us, at_low), (high_us, at_high) = ends
    return ServoCalibration(calibration.joint, calibration.channel, low_us, high_us,
                            at_low, at_high, 0.0)


def _tidy(value: float) -> float:
    """Round away float noise (1e-9 µs or degrees) so the YAML reads as typed."""
    return round(float(value), 6) + 0.0
