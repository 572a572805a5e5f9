"""Pure: a gamepad's gripper buttons and a terminal's keys as jog and gripper commands."""

from fabrik_ros.hand_input.gripper_buttons import ButtonEvent, GripperButtons, Jaw
from fabrik_ros.hand_input.jaw_positions import JawPositions
from fabrik_ros.hand_input.key_jog import KeyJog, KeyJogSettings, Twist

__all__ = ['ButtonEvent', 'GripperButtons', 'JawPositions', 'Jaw', 'KeyJog', 'KeyJogSettings',
           'Twist']
