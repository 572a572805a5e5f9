"""The serial bridge is pure Python on pyserial: importing it must not need ROS."""

from pathlib import Path
import subprocess
import sys

REPO_ROOT = Path(__file__).parent.parent.parent
PROBE = """
import sys
sys.modules['rclpy'] = None                    # any "import rclpy" now fails
import fabrik_ros.servo_io, fabrik_ros.boardsim, fabrik_ros.driver, fabrik_ros.monitoring
loaded = sorted(name for name, module in sys.modules.items() if module is not None
                and (name.startswith('rclpy') or name.endswith('_msgs')))
print(loaded)
"""


def test_servo_io_imports_with_rclpy_blocked_and_loads_no_message_packages():
    result = subprocess.run([sys.executable, '-c', PROBE], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[]'
