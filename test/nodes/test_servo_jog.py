"""servo_driver's ~/jog_us: raw-pulse calibration jogs, guarded and speed-limited."""

import time

import pytest
from rcl_interfaces.msg import Log
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
import yaml

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.servo_io import Protocol
from test.nodes.conftest import ARM_CONFIG
from test.nodes.test_driver_node import ARM, DriverRig, LAYOUT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

# rosout is latched (transient local): a late subscription still gets what was logged.
_ROSOUT_QOS = QoSProfile(depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL)
ELBOW = ARM.joint_names.index('elbow')
ELBOW_CHANNEL = ARM.servo_map.calibrations[ELBOW].channel


@pytest.fixture
def make_rig(ros, arm_args, tmp_path):
    """Return a maker of driver rigs on a native simulated board (``config=`` another arm)."""
    rigs, boards = [], []

    def make(*, config=None, extra=()):
        boards.append(SimBoard(Protocol.NATIVE, link_path=str(tmp_path / 'ttyBOARD')).start())
        args = arm_args if config is None else [
            '--ros-args', '--params-file', str(config), *ros.ros_args]
        rigs.append(DriverRig(ros, args, boards[-1], extra=extra))
        return rigs[-1]

    yield make
    for rig in rigs:
        ros.destroy(rig.driver)
    for board in boards:
        board.stop()


def _jogger(rig):
    publisher = rig.probe.create_publisher(JointState, 'servo_driver/jog_us', 10)
    rig.ros.spin_until(lambda: publisher.get_subscription_count() > 0, timeout_s=10.0,
                       what='servo_driver to subscribe ~/jog_us')
    return lambda names, pulses: publisher.publish(JointState(name=names, position=pulses))


def _driver_log(rig) -> list[str]:
    messages = []
    name = rig.driver.get_fully_qualified_name().lstrip('/').replace('/', '.')
    rig.probe.create_subscription(
        Log, '/rosout', lambda m: m.name == name and messages.append(m.msg), _ROSOUT_QOS)
    return messages


def _narrow_elbow_config(tmp_path):
    document = yaml.safe_load(ARM_CONFIG.read_text())
    servo = document['/**']['ros__parameters']['servos']['elbow']
    servo['min_us'], servo['max_us'] = 1000.0, 2000.0
    path = tmp_path / 'narrow.yaml'
    path.write_text(yaml.safe_dump(document))
    return path


def test_a_jog_moves_one_servo_at_its_speed_limit_and_the_guard_refuses_the_rest(make_rig):
    speed = 2.0
    rig = make_rig(extra=['-p', f'max_speed_rad_s:=[{speed}, {speed}, '
                                                  f'{speed}, {speed}]'])
    rig.wait_board_targets(ARM.home, 'home')
    jog = _jogger(rig)
    home_pulses = list(rig.board.targets()[:LAYOUT.channels])
    jog(['elbow'], [2400.0])
    started = time.monotonic()
    rig.ros.spin_until(lambda: rig.board.positions()[ELBOW_CHANNEL] == 2400, timeout_s=10.0,
                       what=lambda: f'the elbow at 2400 µs, board {rig.board.positions()}')
    elbow = ARM.servo_map.calibrations[ELBOW]
    us_per_rad = (elbow.max_us - elbow.min_us) / (elbow.angle_at_max_rad - elbow.angle_at_min_rad)
    assert time.monotonic() - started >= 0.95 * (2400 - 1500) / (speed * us_per_rad)
    others = [p for ch, p in enumerate(rig.board.targets()[:LAYOUT.channels])
              if ch != ELBOW_CHANNEL]
    assert others == [p for ch, p in enumerate(home_pulses) if ch != ELBOW_CHANNEL]
    logs = _driver_log(rig)
    jog(['elbow'], [2600.0])
    rig.ros.spin_until(lambda: any('jog guard [500.0, 2500.0]' in m for m in logs),
                       timeout_s=10.0, what='the guard to refuse 2600 µs')
    rig.command((0.0, 1.0, 0.5, 0.0))
    rig.ros.spin_until(lambda: any('joint_commands ignored: a calibration jog' in m
                                   for m in logs), timeout_s=10.0,
                       what='the jog session to hold off joint_commands')
    assert rig.board.targets()[ELBOW_CHANNEL] == 2400
    assert rig.driver.latest_command[ELBOW] == pytest.approx(ARM.servo_map.calibrations[
        ELBOW].angle_rad(2400.0))
    jog([], [])
    rig.wait_board_targets(ARM.home, 'an empty jog to send the arm home')


def test_a_jog_opens_the_board_limits_to_the_guard_until_home_is_reached(make_rig, tmp_path):
    rig = make_rig(config=_narrow_elbow_config(tmp_path))
    rig.wait_board_targets(ARM.home, 'home')
    assert rig.board.limits[ELBOW_CHANNEL] == (1000, 2000)
    jog = _jogger(rig)
    jog(['elbow'], [2300.0])
    rig.ros.spin_until(lambda: rig.board.positions()[ELBOW_CHANNEL] == 2300, timeout_s=10.0,
                       what=lambda: f'the elbow beyond its calibration, {rig.board.limits}')
    assert rig.board.limits[ELBOW_CHANNEL] == (500, 2500)
    home = rig.call(Trigger, f'{rig.ros.namespace}/servo_driver/home', Trigger.Request())
    assert home.success
    rig.ros.spin_until(lambda: rig.board.limits[ELBOW_CHANNEL] == (1000, 2000),
                       timeout_s=15.0, what='the calibration limits back after the move home')
    assert rig.board.positions()[ELBOW_CHANNEL] == 1500


def test_a_guard_that_is_no_range_stops_the_driver_naming_it(make_rig):
    with pytest.raises(ValueError) as refused:
        make_rig(extra=['-p', 'jog_guard_us:=[500.0, 1500.0, 2500.0]'])
    assert 'jog_guard_us = [500.0, 1500.0, 2500.0], must be two pulse widths' in str(
        refused.value)
