"""The browser view's pure parts: calibration marks and math, the arm-file writer, status lines.

Calibration takes pulse widths jogged (PWM boards) or bus servo counts moved by hand.
Nothing here imports rclpy. Only ``fabrik_ros.webview.page`` imports viser (optional:
``pip install viser yourdfpy``), and nothing imports it but the web_view node.
"""

from fabrik_ros.webview.calibration import calibrated_fields, CalibrationError, ServoMarks
from fabrik_ros.webview.calibration_by_hand import (
    CountMarks,
    HandCalibrationSession,
    SeamTracker,
)
from fabrik_ros.webview.calibration_session import CalibrationSession, Mark
from fabrik_ros.webview.save_path import allowed_save_path, SavePathError
from fabrik_ros.webview.servo_yaml import (
    save_arm_copy,
    save_calibrated_copy,
    SavedCalibration,
    with_arm_values,
    with_servo_values,
)
from fabrik_ros.webview.status_view import Status, StatusBoard

__all__ = [
    'allowed_save_path', 'calibrated_fields', 'CalibrationError', 'CalibrationSession',
    'CountMarks', 'HandCalibrationSession', 'Mark', 'save_arm_copy', 'save_calibrated_copy',
    'SavedCalibration', 'SavePathError', 'SeamTracker', 'ServoMarks', 'Status', 'StatusBoard',
    'with_arm_values', 'with_servo_values',
]
