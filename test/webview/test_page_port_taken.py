"""A page port another program holds is refused: viser would quietly serve the next one."""

import socket
import subprocess

import pytest

from fabrik_ros.webview.page import PageAddressError
from fabrik_ros.webview.pipeline import console_script
from test.nodes.conftest import REPO_ROOT
from test.webview.test_token_gate import Actions, CONFIG

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def taken_port():
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(('127.0.0.1', 0))
    holder.listen(1)
    yield holder.getsockname()[1]
    holder.close()


def test_a_taken_port_is_refused_naming_it(taken_port):
    from fabrik_ros.kinematics import load_arm
    from fabrik_ros.webview import CalibrationSession
    from fabrik_ros.webview.page import WebPage
    arm = load_arm(CONFIG)
    with pytest.raises(PageAddressError, match=f'127.0.0.1:{taken_port} is in use'):
        WebPage(arm, host='127.0.0.1', port=taken_port, actions=Actions(),
                calibration=CalibrationSession(arm, CONFIG, None),
                jog_range_us=(500.0, 2500.0), orientation=False)


@pytest.mark.ros
def test_web_view_on_a_taken_port_exits_1_with_one_line(taken_port):
    result = subprocess.run(
        [console_script('web_view'), '--ros-args',
         '--params-file', str(CONFIG), '-p', f'port:={taken_port}'],
        cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert f'127.0.0.1:{taken_port} is in use by another program' in result.stderr
    assert 'Traceback' not in result.stderr
