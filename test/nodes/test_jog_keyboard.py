"""jog_keyboard run in a real pseudo-terminal, read by a real rclpy subscriber.

The script runs as a user runs it (``python -m fabrik_ros.nodes.jog_keyboard`` with the arm
file), its stdin, stdout and stderr on the slave side of a pty; the test types on the master
side and reads what it publishes on jog/twist.
"""

import math
import os
import select
import signal
import subprocess
import sys
import termios
import time

from geometry_msgs.msg import TwistStamped
import pytest

from fabrik_ros.nodes import gripper_buttons_node, jog_keyboard
from test.nodes.conftest import REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(90)]

SO101 = REPO_ROOT / 'config' / 'so101.yaml'
WAIT_S = 30.0


class Keyboard:
    """jog_keyboard on a pty, and a probe subscribed to its jog/twist."""

    def __init__(self, ros, *parameters):
        self.ros = ros
        self.master, self.slave = os.openpty()
        self.before = termios.tcgetattr(self.slave)
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONUNBUFFERED='1')
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'fabrik_ros.nodes.jog_keyboard', '--ros-args',
             '--params-file', str(SO101), *ros.ros_args,
             *(arg for p in parameters for arg in ('-p', p))],
            stdin=self.slave, stdout=self.slave, stderr=self.slave, env=env, cwd=REPO_ROOT,
            start_new_session=True)
        self.screen = ''
        self.twists = []
        probe = ros.probe()
        probe.create_subscription(TwistStamped, 'jog/twist', self.twists.append, 100)
        self.topic = f'{ros.namespace}/jog/twist'
        self.probe = probe

    def read_screen(self):
        while select.select([self.master], [], [], 0.0)[0]:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                return
            if not chunk:
                return
            self.screen += chunk.decode('utf-8', errors='replace')

    def wait_screen(self, text):
        self.ros.spin_until(lambda: text in self.screen, timeout_s=WAIT_S,
                            what=lambda: f'{text!r} on the screen:\n{self.screen}',
                            during=self.read_screen)

    def ready(self):
        """Wait until a twist from jog_keyboard reaches the probe; forget that warm-up.

        The probe may know the publisher before the publisher knows the probe (discovery
        runs on each side): twists sent meanwhile reach nobody. So a key is tapped (again
        each second) until a twist is heard, space stops it, and the twists are cleared.
        """
        self.wait_screen('Publishing on')
        self.ros.spin_until(lambda: self.probe.count_publishers(self.topic) > 0,
                            timeout_s=WAIT_S, what='jog_keyboard publishing jog/twist')
        tapped = [-math.inf]

        def tap():
            self.read_screen()
            if time.monotonic() - tapped[0] > 1.0:
                tapped[0] = time.monotonic()
                self.type('w')

        self.ros.spin_until(lambda: self.twists, timeout_s=WAIT_S, during=tap,
                            what='a first twist from jog_keyboard')
        self.type(' ')
        self.wait_twists(lambda ts: _zero(ts[-1]), 'space to stop the warm-up')
        self.twists.clear()

    def type(self, keys):
        os.write(self.master, keys.encode())

    def wait_twists(self, condition, what):
        self.ros.spin_until(lambda: condition(self.twists), timeout_s=WAIT_S,
                            what=lambda: f'{what} (have {[_v(t) for t in self.twists]})',
                            during=self.read_screen)

    def end(self, sig=signal.SIGINT):
        self.process.send_signal(sig)
        code = self.wait_exit()
        return code

    def wait_exit(self):
        self.ros.spin_until(lambda: self.process.poll() is not None, timeout_s=WAIT_S,
                            what='jog_keyboard to exit', during=self.read_screen)
        self.read_screen()
        return self.process.returncode

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)
        os.close(self.slave)


def _v(twist):
    t = twist.twist
    return (t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z)


def _zero(twist):
    return not any(_v(twist))


@pytest.fixture
def keyboard(ros):
    made = []

    def make(*parameters):
        made.append(Keyboard(ros, *parameters))
        return made[-1]

    yield make
    for board in made:
        board.close()


def test_a_key_moves_then_one_zero_twist_then_the_next_key(ros, keyboard):
    kb = keyboard('tap_hold_s:=0.3', 'repeat_hold_s:=0.1')
    kb.ready()
    raw = termios.tcgetattr(kb.slave)
    assert not raw[3] & termios.ECHO and not raw[3] & termios.ICANON   # keys, unechoed
    kb.type('w')
    kb.wait_twists(lambda ts: ts and _zero(ts[-1]), 'w to move, then stop')
    moving = kb.twists[:-1]
    assert len(moving) > 1 and all(_v(t) == (0.05, 0, 0, 0, 0, 0) for t in moving)
    assert all(t.header.frame_id == 'base_link' for t in kb.twists)
    count = len(kb.twists)
    kb.type('d')
    kb.wait_twists(lambda ts: len(ts) > count + 1 and _zero(ts[-1]), 'd to move, then stop')
    after = [_v(t) for t in kb.twists[count:-1]]
    assert after and all(v == (0, -0.05, 0, 0, 0, 0) for v in after)   # no second zero
    assert kb.end() == 0
    assert termios.tcgetattr(kb.slave) == kb.before                     # restored


def test_space_stops_at_once_and_faster_scales_the_speed(ros, keyboard):
    kb = keyboard('tap_hold_s:=2.0')
    kb.ready()
    kb.type('+')
    kb.wait_screen('speed x1.25')
    kb.type('i')
    kb.wait_twists(lambda ts: len(ts) >= 2, 'i to move')
    kb.type(' ')
    kb.wait_twists(lambda ts: _zero(ts[-1]), 'space to stop')
    assert {_v(t) for t in kb.twists[:-1]} == {(0, 0, 0, 0, 0.5 * 1.25, 0)}
    kb.type('q')
    assert kb.wait_exit() == 0
    assert termios.tcgetattr(kb.slave) == kb.before


def test_sigint_while_moving_sends_the_zero_twist_exits_0_and_restores_the_terminal(
        ros, keyboard):
    kb = keyboard('tap_hold_s:=2.0')
    kb.ready()
    kb.type('r')
    kb.wait_twists(lambda ts: len(ts) >= 2, 'r to move')
    assert kb.end(signal.SIGINT) == 0
    kb.wait_twists(lambda ts: _zero(ts[-1]), 'the zero twist at exit')
    assert termios.tcgetattr(kb.slave) == kb.before


def test_sigterm_exits_0_and_restores_the_terminal(ros, keyboard):
    kb = keyboard()
    kb.ready()
    assert kb.end(signal.SIGTERM) == 0
    assert termios.tcgetattr(kb.slave) == kb.before


def test_the_gripper_keys_say_where_the_goal_goes(ros, keyboard):
    kb = keyboard()
    kb.ready()
    kb.type('o')
    kb.wait_screen('gripper open: not sent, no action server on gripper_controller/gripper_cmd')
    assert kb.end() == 0


def test_without_a_terminal_it_refuses_to_start(ros):
    result = subprocess.run(
        [sys.executable, '-m', 'fabrik_ros.nodes.jog_keyboard', '--ros-args', '--params-file',
         str(SO101), *ros.ros_args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)), cwd=REPO_ROOT, timeout=60)
    assert result.returncode == 1
    assert 'cannot start: file descriptor 0 is not a terminal' in result.stderr


@pytest.mark.parametrize('module,script', [(jog_keyboard, 'jog_keyboard'),
                                           (gripper_buttons_node, 'gripper_buttons')])
def test_help_prints_the_usage_and_exits_0_without_a_terminal(module, script, capsys):
    with pytest.raises(SystemExit) as ended:
        module.main([script, '--help'])
    assert ended.value.code == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f'usage: {script} [-h] [--ros-args --params-file ARM_FILE')
    assert f'{script}: ' in printed.splitlines()[2]
