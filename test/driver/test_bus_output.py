"""BusOutput: an SO-101's bus servos as the driver core sees them, against the simulated buses."""

from dataclasses import replace
import time

import pytest
import yaml

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.driver.bus_output import (
    bus_options,
    BusOutput,
    LOAD_WARN_PERCENT,
    REPORT_STALE_S,
)
from fabrik_ros.driver.heat_guard import TEMPERATURE_ERROR_C, TEMPERATURE_WARN_C
from fabrik_ros.driver.servo_output import HealthLevel, RebootOrder
from fabrik_ros.kinematics import ArmConfigError, load_arm
from fabrik_ros.servo_io import BusPositions, Protocol
from fabrik_ros.servo_io.protocols.dialect import BUS_PROTOCOLS
from test.nodes.conftest import REPO_ROOT
from test.polling import poll

SO101 = REPO_ROOT / 'config' / 'so101.yaml'
ARM = load_arm(SO101)
# A reply timeout far above a pty's latency on a busy machine.
OPTIONS = replace(bus_options(), reply_timeout_s=0.1, handshake_timeout_s=0.5)
BUSES = pytest.mark.parametrize('protocol', BUS_PROTOCOLS, ids=lambda p: p.value)


@pytest.fixture
def sim_bus(tmp_path):
    """Return a factory ``(protocol) -> SimBoard``: simulated servos ids 1-6 behind a symlink."""
    boards = []

    def start(protocol):
        board = SimBoard(protocol, link_path=str(tmp_path / f'ttyBUS{len(boards)}')).start()
        boards.append(board)
        return board

    yield start
    for board in boards:
        board.stop()


@pytest.fixture
def bus_output():
    """Return a factory ``(board, arm=ARM) -> (BusOutput, warnings)``, started."""
    outputs = []

    def start(board, arm=ARM):
        warnings = []
        output = BusOutput(board.path, arm, protocol=board.protocol, options=OPTIONS,
                           warn=warnings.append)
        output.start()
        outputs.append(output)
        output.link.wait_ready(3.0)
        return output, warnings

    yield start
    for output in outputs:
        output.close()


def _servo(board, servo_id):
    return board.firmware.servo(servo_id)


def _present(board, servo_id):
    with board.firmware.lock:
        return round(_servo(board, servo_id).present(time.monotonic()))


@pytest.mark.timeout(20)
@BUSES
def test_a_limit_register_clamps_the_goal_with_one_warning_naming_joint_and_id(
        sim_bus, bus_output, protocol):
    board = sim_bus(protocol)
    with board.firmware.lock:
        servo = _servo(board, 5)
        table = servo.table
        servo.write(table.max_position_limit.address, table.max_position_limit.encode(3953),
                    time.monotonic())
    output, warnings = bus_output(board)
    output.attach(True)
    output.sync(2.0)
    goal = [2048.0] * 5 + [2048.0]
    goal[4] = 3990.0                           # wrist_roll, within its joint range
    output.send(goal, 0.0)
    output.send(goal, 0.0)
    assert poll(lambda: _present(board, 5) == 3953)
    assert warnings == ['servo wrist_roll (id 5): goal 3990 beyond its max position limit '
                        'register 3953, clamped (said once per servo)']


@pytest.mark.timeout(20)
@BUSES
def test_reports_come_in_servo_order_and_a_silent_servo_reports_none(sim_bus, bus_output,
                                                                      protocol):
    board = sim_bus(protocol)
    output, warnings = bus_output(board)
    output.attach(False)
    output.sync(2.0)
    with board.firmware.lock:
        board.firmware.move_by_hand(6, 1000, time.monotonic())   # the gripper, last
        board.firmware.move_by_hand(1, 3000, time.monotonic())   # shoulder_pan, first
    assert poll(lambda: (report := output.report(time.monotonic())) is not None
                and report.units == (3000.0, 2048.0, 2048.0, 2048.0, 2048.0, 1000.0))
    with board.firmware.lock:
        _servo(board, 3).silent = True
    assert poll(lambda: (report := output.report(time.monotonic())) is not None
                and report.units[2] is None and report.units[0] == 3000.0)
    assert poll(lambda: output.health()[2].level is HealthLevel.ERROR)
    silent = output.health()[2]
    assert silent.name == 'servo elbow_flex (id 3)' and 'does not answer' in silent.message
    assert any(w.startswith('servo elbow_flex (id 3): stopped answering') for w in warnings)
    assert output.report(time.monotonic() + 1.0) is None, 'a report a second old is stale'
    assert [output.named_silent(i) for i in range(6)] == [False, False, True, False, False,
                                                          False]


@pytest.mark.timeout(20)
@BUSES
def test_a_servo_that_answers_again_is_named_with_the_count_it_holds_at(
        sim_bus, bus_output, protocol):
    """Only the rejoin: that the connect's admissions are no news is test_bus_scheduler's."""
    board = sim_bus(protocol)
    output, _ = bus_output(board)
    output.attach(True)
    output.sync(10.0)           # six servos' answered torque writes, on a loaded host
    output.take_admitted()      # a servo a loaded host lost meanwhile is no part of this
    with board.firmware.lock:
        _servo(board, 3).silent = True
    assert poll(lambda: output.health()[2].level is HealthLevel.ERROR)
    with board.firmware.lock:
        _servo(board, 3).silent = False
    held = {}
    assert poll(lambda: held.update(output.take_admitted()) or 2 in held)
    assert held[2] == float(_present(board, 3)), 'servo order: elbow_flex is the third'


@pytest.mark.timeout(20)
@BUSES
def test_health_judges_temperature_load_and_error_bits_against_the_limits(
        sim_bus, bus_output, protocol):
    board = sim_bus(protocol)
    output, _ = bus_output(board)
    output.attach(True)
    table = _servo(board, 1).table
    with board.firmware.lock:
        for index, hot_c in ((1, TEMPERATURE_WARN_C + 1), (2, TEMPERATURE_ERROR_C + 1)):
            hot = _servo(board, index)                   # steady there: a hot enclosure
            hot.heat.ambient_c = hot.temperature_c = hot_c
        _servo(board, 4).load = round((LOAD_WARN_PERCENT + 2) / table.load_unit_percent)
        _servo(board, 6).error_bits = 0x20 if protocol is Protocol.FEETECH else 0x24

    def levels():
        return [h.level for h in output.health()]

    expected = [HealthLevel.WARN, HealthLevel.ERROR, HealthLevel.OK, HealthLevel.WARN,
                HealthLevel.OK, HealthLevel.ERROR]
    assert poll(lambda: levels() == expected, 5.0), levels()
    health = output.health()
    assert health[0].message == f'temperature {TEMPERATURE_WARN_C + 1:.0f} C at or above ' \
                                f'the warning limit {TEMPERATURE_WARN_C:g} C'
    assert health[0].name == 'servo shoulder_pan (id 1)'
    assert health[0].values['temperature [C]'] == TEMPERATURE_WARN_C + 1
    assert 'overload' in health[5].message and health[5].name == 'servo gripper (id 6)'
    assert health[2].message == 'ok' and health[2].values['errors'] == ''


@pytest.mark.timeout(20)
@BUSES
def test_detach_goes_limp_with_feedback_and_attach_holds_where_the_hand_left_it(
        sim_bus, bus_output, protocol):
    board = sim_bus(protocol)
    output, _ = bus_output(board)
    output.attach(True)
    output.sync(2.0)
    output.release(detach=True)
    output.sync(2.0)
    assert board.firmware.torques() == [False] * 6
    with board.firmware.lock:
        board.firmware.move_by_hand(2, 2600, time.monotonic())
    assert poll(lambda: (report := output.report(time.monotonic())) is not None
                and report.units[1] == 2600.0)
    output.attach(True)
    output.sync(2.0)
    assert board.firmware.torques() == [True] * 6 and _present(board, 2) == 2600


@pytest.mark.timeout(20)
def test_the_arm_files_homing_offset_is_written_and_warned_of_once(sim_bus, bus_output,
                                                                  tmp_path):
    params = yaml.safe_load(SO101.read_text())
    params['/**']['ros__parameters']['servos']['wrist_roll']['homing_offset'] = 100
    path = tmp_path / 'so101_offset.yaml'
    path.write_text(yaml.safe_dump(params))
    board = sim_bus(Protocol.FEETECH)
    output, warnings = bus_output(board, load_arm(path))
    assert output.link.homing_offsets()[5] == 100 and _servo(board, 5).homing_offset == 100
    output.health()
    assert [w for w in warnings if 'homing offset' in w] == [
        "servo wrist_roll (id 5): homing offset register was 0, wrote 100 (the arm file's); "
        'torque was turned off']


def test_a_pulse_calibrated_arm_and_a_pwm_protocol_are_refused():
    with pytest.raises(ArmConfigError, match='calibrated in pulse widths'):
        BusOutput('/dev/null/never', load_arm(REPO_ROOT / 'config' / 'arm_4dof.yaml'),
                  protocol=Protocol.FEETECH)
    with pytest.raises(ValueError, match='must be a bus protocol'):
        BusOutput('/dev/null/never', ARM, protocol=Protocol.NATIVE)


def test_bus_options_default_to_the_servos_baud_and_the_chosen_feedback_rate():
    assert (bus_options().baud, bus_options().poll_hz) == (1_000_000, 50.0)
    assert (bus_options(500_000, 0.0).baud, bus_options(500_000, 0.0).poll_hz) == (500_000, 0.0)


def test_a_report_stays_current_for_a_time_window_not_three_feedback_periods():
    """At 50 Hz three periods are 60 ms, which a loaded host overran.

    joint_states then flicked from the servos' positions to the command and back.
    """
    output = BusOutput('/dev/null', ARM, protocol=Protocol.FEETECH, options=OPTIONS,
                       clock=lambda: 10.0)
    counts = {servo_id: 2000 + servo_id for servo_id in range(1, 7)}
    output.link.positions = lambda: BusPositions(counts, 10.0)      # the link is not started
    assert 3.0 / OPTIONS.poll_hz < 0.1 < REPORT_STALE_S
    late = output.report(10.1)
    assert late is not None and late.units == tuple(float(c) for c in counts.values())
    assert output.report(10.0 + REPORT_STALE_S + 0.01) is None


@pytest.mark.timeout(20)
def test_a_reboot_picks_the_servos_in_hardware_error_and_names_them(sim_bus, bus_output):
    board = sim_bus(Protocol.DYNAMIXEL)
    output, _ = bus_output(board)
    output.attach(True)
    output.sync(2.0)
    with board.firmware.lock:
        _servo(board, 3).error_bits = 0x20
    assert poll(lambda: output.link.health()[3].hardware_errors == ('overload',), 10.0)
    order = output.reboot()
    assert order == RebootOrder(('servo elbow_flex (id 3): overload',))
    held = {}
    assert poll(lambda: held.update(output.take_admitted()) or held)
    assert list(held) == [2]
    assert poll(lambda: board.firmware.torques() == [True] * 6)
    order = output.reboot()
    assert order.rebooted == tuple(f'{output.servo_name(i)}: no hardware error'
                                   for i in range(1, 7)), 'none in error: all'


@pytest.mark.timeout(20)
def test_feetech_servos_are_not_rebooted_and_the_order_says_why(sim_bus, bus_output):
    output, _ = bus_output(sim_bus(Protocol.FEETECH))
    order = output.reboot()
    assert order.rebooted == () and 'factory reset' in order.refusal


@pytest.mark.timeout(20)
@BUSES
def test_a_voltage_outside_the_servos_range_is_an_error_naming_the_voltage_and_the_range(
        sim_bus, bus_output, protocol):
    board = sim_bus(protocol)
    output, _ = bus_output(board)
    output.attach(True)
    with board.firmware.lock:
        _servo(board, 3).voltage_v = 15.0
    assert poll(lambda: output.health()[2].level is HealthLevel.ERROR, 5.0), output.health()[2]
    source = ('its voltage limit registers' if protocol is Protocol.DYNAMIXEL
              else 'the range set for the STS3215 model')
    low = 6.0 if protocol is Protocol.DYNAMIXEL else 4.0      # XL430-W250 Min_Voltage_Limit 60
    assert output.health()[2].message == (f'voltage 15.0 V outside its range {low:g} to 14 V '
                                          f'({source})')
    assert output.health()[0].level is HealthLevel.OK, 'the others at 12 V are fine'
