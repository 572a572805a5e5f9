"""The gamepad and keyboard decisions are pure: importing them must not need ROS."""

import subprocess
import sys

from test.package_layout import REPO_ROOT

PROBE = """
import sys
sys.modules['rclpy'] = None                    # any "import rclpy" now fails
import fabrik_ros.hand_input
loaded = sorted(name for name, module in sys.modules.items() if module is not None
                and (name.startswith('rclpy') or name.endswith('_msgs')))
print(loaded)
"""


def test_hand_input_imports_with_rclpy_blocked_and_loads_no_message_packages():
    result = subprocess.run([sys.executable, '-c', PROBE], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[]'
