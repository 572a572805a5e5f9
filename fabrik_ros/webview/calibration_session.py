"""One calibration sitting: the marks set per servo, and saving them into an arm file copy."""

from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Optional

from fabrik_ros.kinematics import Arm
from fabrik_ros.webview.calibration import calibrated_fields, CalibrationError, ServoMarks
from fabrik_ros.webview.save_path import allowed_save_path
from fabrik_ros.webview.servo_yaml import save_calibrated_copy, SavedCalibration


class Mark(Enum):
    """What a marked pulse width means for the joint."""

    MIN = 'min_us'    # the joint at its minimum angle
    MAX = 'max_us'    # the joint at its maximum angle
    ZERO = 'zero_us'  # the joint at 0 degrees


class CalibrationSession:
    """Collect marks for the arm's servos and write them into a copy of the arm file.

    :param arm: the arm as loaded from ``source`` (its joints give the marked angles)
    :param source: the arm file whose text (and comments) the copy keeps
    :param target: where the copy goes unless :meth:`save` names a file beside ``source``;
        an existing file there is backed up first
    """

    def __init__(self, arm: Arm, source: Optional[Path], target: Optional[Path]) -> None:
        self._arm = arm
        self.source = source
        self.target = target
        self._marks: dict[str, ServoMarks] = {}

    def mark(self, joint: str, which: Mark, pulse_us: float) -> ServoMarks:
        """Record that ``joint``'s servo at ``pulse_us`` [µs] is at the angle ``which`` names.

        :raises CalibrationError: for a joint the arm does not have
        """
        if joint not in self._arm.joint_names:
            raise CalibrationError(f'joint {joint!r} is not one of {list(self._arm.joint_names)}')
        marks = replace(self._marks.get(joint, ServoMarks()), **{which.value: float(pulse_us)})
        self._marks[joint] = marks
        return marks

    def marks(self, joint: str) -> ServoMarks:
        """Return the marks set for ``joint`` so far."""
        return self._marks.get(joint, ServoMarks())

    def fields(self) -> dict[str, dict[str, float]]:
        """Return the new ``servos.<joint>`` fields of every marked joint.

        :raises CalibrationError: if a joint's marks cannot make a calibration
        """
        calibrations, _ = self._arm.servo_map.pulse_servos()
        by_name = dict(zip(self._arm.joint_names, zip(self._arm.joints, calibrations,
                                                      strict=True), strict=True))
        result = {}
        for joint, marks in self._marks.items():
            if marks.marked():
                definition, calibration = by_name[joint]
                result[joint] = calibrated_fields(calibration, definition, marks)
        return result

    def save(self, save_to: Optional[str] = None) -> SavedCalibration:
        """Write the calibrated copy (validated by the arm loader first).

        :param save_to: what the page's "Save to" field holds: the configured target exactly,
            or a ``.yaml`` file name saved beside the arm file (None: the configured target)
        :raises SavePathError: if ``save_to`` is neither (see :func:`allowed_save_path`)
        :raises CalibrationError: if nothing is marked or no source/target file was given
        :raises ArmConfigError: if the result is not a valid arm file
        """
        source, target = save_paths(self.source, self.target, save_to)
        fields = self.fields()
        if not fields:
            raise CalibrationError('marks = {}, must hold at least one marked servo to save')
        return save_calibrated_copy(source, target, fields)


def save_paths(source: Optional[Path], target: Optional[Path],
               save_to: Optional[str]) -> tuple[Path, Path]:
    """Return the arm file a calibrated copy is made of, and where the copy goes.

    :param save_to: what the page's "Save to" field holds (None: the configured target)
    :raises SavePathError: if ``save_to`` is neither (see :func:`allowed_save_path`)
    :raises CalibrationError: if no source or no target file was given
    """
    if source is None:
        raise CalibrationError("arm_file = '', must name the arm file the nodes read for "
                               'a calibrated copy to be saved')
    target = target if save_to is None else allowed_save_path(
        save_to, configured=target, folder=source.parent)
    if target is None:
        raise CalibrationError("calibration_file = '', must be set, or a file name given "
                               'to save beside the arm file')
    return source, target
