"""The web view's pure modules need neither ROS nor viser; only its page needs viser."""

from pathlib import Path
import subprocess
import sys

REPO_ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import sys
for blocked in {blocked}:
    sys.modules[blocked] = None                  # importing it now fails
import {modules}
loaded = sorted(name for name, module in sys.modules.items() if module is not None
                and (name.startswith(('rclpy', 'viser')) or name.endswith('_msgs')))
print(loaded)
"""


def _probe(blocked, modules) -> subprocess.CompletedProcess:
    code = PROBE.format(blocked=blocked, modules=', '.join(modules))
    return subprocess.run([sys.executable, '-c', code], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=60, check=False)


def test_the_pure_modules_import_without_rclpy_viser_or_yourdfpy():
    result = _probe(['rclpy', 'viser', 'yourdfpy'],
                    ['fabrik_ros.webview', 'fabrik_ros.webview.pipeline',
                     'fabrik_ros.webview.calibration_session', 'fabrik_ros.driver.pulse_jog'])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[]'


def test_the_page_imports_viser_but_no_ros():
    result = _probe(['rclpy'], ['fabrik_ros.webview.page'])
    assert result.returncode == 0, result.stderr
    assert 'viser' in result.stdout and 'rclpy' not in result.stdout
