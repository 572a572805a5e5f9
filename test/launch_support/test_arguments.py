"""The launch files' arguments are checked before anything starts, every failing path named.

Pure Python: ROS 2's `launch` is not needed. The launch files hand the same values to the
same functions from their one OpaqueFunction (fabrik_ros/launch_support/actions.py).
"""

from pathlib import Path

import pytest

from fabrik_ros.boardsim import cli as boardsim_cli
from fabrik_ros.launch_support.arguments import (
    arm_arguments,
    check_given_names,
    defaults,
    LAUNCH_FILES,
    LaunchArgumentError,
    plan_arm,
    plan_sim,
    sim_arguments,
)
from fabrik_ros.launch_support.namespace import RVIZ_TOOL_REMAPPINGS
from test.package_layout import console_scripts, exec_depends, PACKAGE, REPO_ROOT

SHARE = REPO_ROOT      # config/ and config/rviz/ sit where share/fabrik_ros has them
ARM_CONFIG = str(REPO_ROOT / 'config' / 'arm_4dof.yaml')
OPTIONAL_PACKAGES = {'rviz2'}


def everything(package: str) -> bool:
    return True


def nothing(package: str) -> bool:
    return False


def simavr_fine() -> None:
    pass


def _sim(installed=everything, simavr_check=simavr_fine, owner_of=lambda link: None, **given):
    return plan_sim(defaults(sim_arguments(SHARE), **given), share=SHARE, installed=installed,
                    simavr_check=simavr_check, owner_of=owner_of)


def _arm(installed=everything, **given):
    return plan_arm(defaults(arm_arguments(SHARE), **given), share=SHARE, installed=installed)


def _executables(plan) -> list[str]:
    return [process.executable for process in plan.processes]


def _refused(plan, **given) -> str:
    with pytest.raises(LaunchArgumentError) as refused:
        plan(**given)
    return str(refused.value)


# -- what starts -----------------------------------------------------------------------------

def test_sim_defaults_start_ik_sim_arm_and_both_viewers_where_installed():
    plan = _sim()
    assert _executables(plan) == ['fabrik_ik', 'sim_arm', 'robot_state_publisher', 'rviz2']
    assert plan.notes == ()
    rviz = plan.processes[-1]
    assert rviz.arguments == ('-d', str(SHARE / 'config' / 'rviz' / 'fabrik.rviz'))
    assert rviz.remappings == RVIZ_TOOL_REMAPPINGS
    description = plan.processes[2].parameters[0]['robot_description']
    assert description.startswith('<?xml') and '<robot' in description


@pytest.mark.parametrize('protocol', ['native', 'ssc32', 'maestro'])
def test_sim_device_starts_the_board_before_the_driver_on_the_same_link(protocol, tmp_path):
    link = str(tmp_path / 'ttySIM')
    plan = _sim(sim_device='true', protocol=protocol, link=link, rviz='false',
                robot_state_publisher='false')
    ik, board, driver = plan.processes
    assert (ik.executable, board.executable, driver.executable) == (
        'fabrik_ik', 'sim_device', 'servo_driver')
    assert not board.node and board.required
    assert board.arguments == ('--board', 'python', '--protocol', protocol, '--channels', '6',
                               '--link', link)
    assert driver.parameters == (ARM_CONFIG, {'port': link, 'protocol': protocol})


def test_simavr_runs_the_firmware_through_sim_device_not_a_build_in_the_launch_file(tmp_path):
    checked = []
    plan = _sim(sim_device='true', board='simavr', link=str(tmp_path / 'tty'),
                simavr_check=lambda: checked.append(True))
    assert checked == [True]
    assert plan.processes[1].arguments[:2] == ('--board', 'simavr')


def test_arm_passes_port_baud_and_protocol_to_the_driver():
    plan = _arm(port='/dev/ttyACM0', baud='9600', protocol='ssc32', rviz='true')
    assert _executables(plan) == ['fabrik_ik', 'servo_driver', 'robot_state_publisher', 'rviz2']
    assert plan.processes[1].parameters == (
        ARM_CONFIG, {'port': '/dev/ttyACM0', 'baud': 9600, 'protocol': 'ssc32'})
    assert plan.processes[0].parameters == (ARM_CONFIG, {'follow_rviz_tools': True})


def test_arm_leaves_the_baud_to_the_protocol_unless_given():
    so101 = str(REPO_ROOT / 'config' / 'so101.yaml')
    plan = _arm(port='/dev/ttyACM0', protocol='feetech', config=so101)
    assert plan.processes[1].parameters == (
        so101, {'port': '/dev/ttyACM0', 'baud': 0, 'protocol': 'feetech'})


def test_arm_defaults_leave_rviz_out_without_a_word():
    assert _executables(_arm()) == ['fabrik_ik', 'servo_driver', 'robot_state_publisher']
    assert _arm().notes == ()


@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_auto_viewers_that_are_not_installed_are_named_in_one_line_each(plan):
    result = plan(installed=nothing, rviz='auto')
    assert _executables(result)[-1] in ('sim_arm', 'servo_driver')
    assert result.notes == (
        'robot_state_publisher is not installed: not started (robot_state_publisher:=auto)',
        'rviz2 is not installed: not started (rviz:=auto)')


def test_every_process_a_plan_names_is_installed_or_declared():
    scripts = console_scripts()
    known = exec_depends() | OPTIONAL_PACKAGES | {PACKAGE}
    plans = [_sim(), _sim(sim_device='true'), _sim(sim_device='true', board='simavr'), _arm()]
    for process in (p for plan in plans for p in plan.processes):
        assert process.package in known, process
        if process.package == PACKAGE:
            assert process.executable in scripts, process


# -- what is refused, before anything starts ----------------------------------------------

@pytest.mark.parametrize('plan,name,value,allowed', [
    (_sim, 'rviz', 'yes', 'true|false|auto'),
    (_sim, 'robot_state_publisher', 'on', 'true|false|auto'),
    (_sim, 'sim_device', 'maybe', 'true|false'),
    (_sim, 'board', 'uno', 'python|simavr'),
    (_sim, 'protocol', 'pca9685', 'native|ssc32|maestro|feetech|dynamixel'),
    (_arm, 'protocol', 'pca9685', 'native|ssc32|maestro|feetech|dynamixel'),
    (_arm, 'rviz', 'auto ', 'true|false|auto'),
])
def test_a_value_outside_the_choices_is_refused_naming_them(plan, name, value, allowed):
    assert _refused(plan, **{name: value}) == f'{name}:={value} is not one of {allowed}'


@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
@pytest.mark.parametrize('viewer,package', [('rviz', 'rviz2'),
                                            ('robot_state_publisher', 'robot_state_publisher')])
def test_a_viewer_asked_for_but_not_installed_is_refused(plan, viewer, package):
    message = _refused(plan, installed=nothing, **{viewer: 'true'})
    assert message.startswith(f'{viewer}:=true but {package} is not installed')
    assert f'use {viewer}:=auto or {viewer}:=false' in message


@pytest.mark.parametrize('baud', ['fast', '-9600', '115200.5', ''])
def test_a_baud_that_is_not_a_positive_whole_number_is_refused(baud):
    assert _refused(_arm, baud=baud) == (
        f'baud:={baud} is not a positive whole number of bit/s (e.g. baud:=115200), nor 0 '
        "(the protocol's default)")


def test_an_empty_port_is_refused():
    assert _refused(_arm, port='').startswith('port:= is empty')


@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_a_missing_config_is_refused_with_its_path(plan, tmp_path):
    missing = tmp_path / 'nowhere.yaml'
    assert _refused(plan, config=str(missing)).startswith(f'config:={missing}: no such file')


@pytest.mark.parametrize('plan', [_sim, _arm], ids=['sim', 'arm'])
def test_a_config_rcl_cannot_read_is_refused_naming_the_key(plan, tmp_path):
    bad = tmp_path / 'mixed.yaml'
    bad.write_text(Path(ARM_CONFIG).read_text(encoding='utf-8').replace(
        'ros__parameters:', 'ros__parameters:\n    link_lengths_m: [-1, 0.098]', 1),
        encoding='utf-8')
    message = _refused(plan, config=str(bad))
    assert message.startswith(f'config:={bad}: /**.ros__parameters.link_lengths_m: [-1, 0.098] '
                              'mixes integers and floats'), message


def test_a_config_that_is_not_yaml_or_not_an_arm_is_refused(tmp_path):
    broken = tmp_path / 'broken.yaml'
    broken.write_text('a: [1, 2\n', encoding='utf-8')
    assert _refused(_sim, config=str(broken)).startswith(f'config:={broken}: not readable YAML')
    empty = tmp_path / 'empty.yaml'
    empty.write_text('/**:\n  ros__parameters: {}\n', encoding='utf-8')
    assert _refused(_sim, config=str(empty)).startswith(f'config:={empty}: ')


@pytest.mark.parametrize('protocol', ['ssc32', 'maestro'])
def test_simavr_with_another_protocol_is_refused_up_front(protocol, tmp_path):
    message = _refused(_sim, sim_device='true', board='simavr', protocol=protocol,
                       link=str(tmp_path / 'tty'))
    assert message == (f'board:=simavr runs the fabrik_ros firmware, which speaks the native '
                       f'protocol only; protocol:={protocol} needs board:=python')


@pytest.mark.parametrize('name,value', [('board', 'simavr'), ('protocol', 'maestro')])
def test_board_options_without_sim_device_are_refused(name, value):
    assert _refused(_sim, **{name: value}) == (
        f'{name}:={value} needs sim_device:=true (without it sim_arm stands in for driver and '
        'board)')


def test_simavr_that_cannot_build_here_is_refused_with_what_to_do(tmp_path):
    def cannot() -> None:
        raise LaunchArgumentError('board:=simavr needs avr-gcc ...')
    assert _refused(_sim, sim_device='true', board='simavr', simavr_check=cannot,
                    link=str(tmp_path / 'tty')).startswith('board:=simavr needs avr-gcc')


def test_a_link_that_is_a_regular_file_or_in_no_folder_is_refused(tmp_path):
    precious = tmp_path / 'notes.txt'
    precious.write_text('keep', encoding='utf-8')
    assert _refused(_sim, sim_device='true', link=str(precious)).endswith(
        'exists and is not a symlink; it is never replaced: choose a free path')
    assert _refused(_sim, sim_device='true', link=str(tmp_path / 'no' / 'tty')).endswith(
        'its folder does not exist')


def test_an_unknown_argument_is_refused():
    with pytest.raises(LaunchArgumentError, match='unknown launch arguments'):
        defaults(sim_arguments(SHARE), baud='9600')


# -- where board:=simavr finds the firmware -------------------------------------------------

def test_an_install_builds_from_share_into_the_cache_not_the_install_tree(tmp_path):
    share = tmp_path / 'install' / 'share' / 'fabrik_ros'
    (share / 'hardware').mkdir(parents=True)
    (share / 'hardware' / 'Makefile').write_text('all:\n', encoding='utf-8')
    build = boardsim_cli.locate_hardware({'XDG_CACHE_HOME': str(tmp_path / 'cache')},
                                         checkout=tmp_path / 'no_checkout', share=share)
    assert build.hardware_dir == share / 'hardware'
    assert build.build_dir == tmp_path / 'cache' / 'fabrik_ros' / 'hardware_build'


def test_without_the_sources_the_message_says_what_to_do(tmp_path):
    with pytest.raises(boardsim_cli.SetupError, match='set FABRIK_ROS_HARDWARE_DIR'):
        boardsim_cli.locate_hardware({}, checkout=tmp_path / 'a', share=tmp_path / 'b')
    with pytest.raises(boardsim_cli.SetupError, match='holds no Makefile'):
        boardsim_cli.locate_hardware({'FABRIK_ROS_HARDWARE_DIR': str(tmp_path)},
                                     checkout=tmp_path / 'a')


def test_the_checkout_builds_in_place():
    build = boardsim_cli.locate_hardware({})
    assert build.hardware_dir == REPO_ROOT / 'hardware'
    assert build.build_dir == REPO_ROOT / 'hardware' / 'build'


# -- names launch itself would ignore -------------------------------------------------------

@pytest.mark.parametrize('launch_file,name,owner', [
    ('arm.launch.py', 'sim_device', 'sim.launch.py'),
    ('sim.launch.py', 'baud', 'arm.launch.py'),
    ('sim.launch.py', 'port', 'arm.launch.py'),
])
def test_an_argument_of_the_other_launch_file_is_refused_naming_it(launch_file, name, owner):
    with pytest.raises(LaunchArgumentError) as refused:
        check_given_names(['config', name], launch_file, SHARE)
    assert str(refused.value).startswith(f'{name}:= is an argument of {owner}, not of '
                                         f'{launch_file}; {launch_file} takes config:=, ')


@pytest.mark.parametrize('launch_file,name,meant', [
    ('arm.launch.py', 'confg', 'config'),
    ('arm.launch.py', 'protocl', 'protocol'),
    ('sim.launch.py', 'sim_devices', 'sim_device'),
    ('sim.launch.py', 'descripton', 'description'),
])
def test_a_misspelt_argument_is_refused_with_the_one_meant(launch_file, name, meant):
    with pytest.raises(LaunchArgumentError) as refused:
        check_given_names([name], launch_file, SHARE)
    assert str(refused.value).startswith(f'{name}:= is no argument of {launch_file}: did you '
                                         f'mean {meant}:=? {launch_file} takes ')


@pytest.mark.parametrize('launch_file', sorted(LAUNCH_FILES))
def test_declared_names_and_a_parent_launch_files_own_pass(launch_file):
    declared = [argument.name for argument in LAUNCH_FILES[launch_file](SHARE)]
    check_given_names([*declared, 'use_sim_time', 'namespace', 'robot_ip'], launch_file, SHARE)
