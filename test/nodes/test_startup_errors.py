"""Every console script answers --help with its usage, and a bad start with one clear line."""

from pathlib import Path
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]

BIN = Path(sys.executable).parent
NODE_SCRIPTS = ['fabrik_ik', 'servo_driver', 'sim_arm', 'fabrik_arm', 'leader_arm',
                'gripper_buttons', 'jog_keyboard']
WAIT_S = 60.0


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / script), *args], capture_output=True, text=True,
                          timeout=WAIT_S, check=False)


@pytest.mark.parametrize('flag', ['-h', '--help'])
@pytest.mark.parametrize('script', NODE_SCRIPTS + ['sim_device'])
def test_help_prints_the_usage_and_exits_0(script, flag):
    result = _run(script, flag)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f'usage: {script}'), result.stdout
    assert result.stderr == ''


@pytest.mark.parametrize('script', NODE_SCRIPTS)
def test_an_unknown_argument_is_refused_with_the_usage(script):
    result = _run(script, '--port', '/dev/ttyUSB0')
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f'{script}: error: unrecognised arguments: --port /dev/ttyUSB0 '
        '(ROS arguments go after --ros-args)')


@pytest.mark.parametrize('script', NODE_SCRIPTS)
def test_a_params_file_rcl_cannot_parse_gives_one_line(script, tmp_path):
    bad = tmp_path / 'mixed.yaml'
    bad.write_text('/**:\n  ros__parameters:\n    link_lengths_m: [-1, 0.098]\n')
    result = _run(script, '--ros-args', '--params-file', str(bad))
    assert result.returncode == 1
    assert result.stdout == ''
    [line] = result.stderr.splitlines()
    assert line.startswith(f'{script}: cannot start: params file {bad}: Sequence should be of '
                           'same type'), line
    assert 'write every number of a float list with a decimal point' in line


@pytest.mark.parametrize('script', NODE_SCRIPTS)
def test_a_missing_params_file_gives_one_line(script, tmp_path):
    missing = tmp_path / 'nowhere.yaml'
    result = _run(script, '--ros-args', '--params-file', str(missing))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f'{script}: cannot start: params file {missing}: no such file']


def test_sim_device_refuses_simavr_with_another_protocol():
    result = _run('sim_device', '--board', 'simavr', '--protocol', 'ssc32')
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        'sim_device: cannot start: --board simavr runs the fabrik_ros firmware, which speaks '
        'the native protocol; --protocol ssc32 is not supported there']
