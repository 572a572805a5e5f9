"""The kinematics core imports without rclpy or any message package."""

import subprocess
import sys

import pytest

BLOCKER = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'rclpy' or name.split('.')[0].endswith('_msgs'):
            raise ImportError(f'blocked: {name}')
sys.meta_path.insert(0, Block())
import fabrik_ros.kinematics, fabrik_ros.kinematics.description.urdf_out
print(sorted(m for m in sys.modules if m.startswith(('rclpy', 'std_msgs'))))
"""


@pytest.mark.timeout(60)
def test_kinematics_imports_with_rclpy_blocked():
    result = subprocess.run([sys.executable, '-c', BLOCKER], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[]'
