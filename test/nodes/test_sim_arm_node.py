"""sim_arm: joints move toward their commands at the servo speed, within their limits."""

import math

import pytest
from sensor_msgs.msg import JointState

from fabrik_ros.driver.aux_axis import PULSE_AUX_SPEED_PER_S
from fabrik_ros.kinematics import load_arm
from fabrik_ros.nodes.sim_arm_node import SimArmNode
from test.nodes.conftest import ARM_CONFIG, REPO_ROOT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

ARM = load_arm(ARM_CONFIG)
SPEED = 4.0


def _stamp_ns(msg: JointState) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


@pytest.fixture
def rig(ros, arm_args):
    ros.add(SimArmNode(context=ros.context, cli_args=[
        *arm_args, '-p', f'servo_speed_rad_s:={SPEED}', '-p', 'rate_hz:=100.0']))
    probe = ros.probe()
    states: list[JointState] = []
    probe.create_subscription(JointState, 'joint_states', states.append, 100)
    publisher = probe.create_publisher(JointState, 'joint_commands', 10)
    ros.spin_until(lambda: states, timeout_s=10.0, what='the first joint_states')
    return ros, states, publisher


def test_starts_at_home_and_moves_no_faster_than_the_servo_speed(rig):
    ros, states, publisher = rig
    assert list(states[0].position) == pytest.approx(list(ARM.home))
    command = JointState(name=['elbow'], position=[1.0])
    publisher.publish(command)
    ros.spin_until(lambda: states[-1].position[2] == pytest.approx(1.0), timeout_s=10.0,
                   what='the elbow to reach 1.0 rad')
    moving = [s for s in states if 0.0 < s.position[2] < 1.0]
    assert len(moving) >= 5, 'the move is a ramp, not a jump'
    for before, after in zip(states, states[1:], strict=False):
        dt = (_stamp_ns(after) - _stamp_ns(before)) * 1e-9
        assert abs(after.position[2] - before.position[2]) <= SPEED * dt + 1e-9
        assert after.position[1] == pytest.approx(ARM.home[1]), 'other joints stay put'


def test_commands_outside_the_limits_are_clamped_and_garbage_is_ignored(rig):
    ros, states, publisher = rig
    publisher.publish(JointState(name=['wrist'], position=[math.nan]))
    publisher.publish(JointState(name=['gripper'], position=[0.3]))
    publisher.publish(JointState(name=['wrist', 'elbow'], position=[5.0]))
    publisher.publish(JointState(name=['wrist'], position=[5.0]))
    wrist_max = ARM.joints[3].max_rad
    ros.spin_until(lambda: states[-1].position[3] == pytest.approx(wrist_max), timeout_s=10.0,
                   what='the wrist to stop at its upper limit')
    assert all(s.position[3] <= wrist_max for s in states)
    assert all(s.position[2] == pytest.approx(ARM.home[2]) for s in states)


def test_the_gripper_is_simulated_in_its_unit_and_a_misspelt_name_gets_the_closest(ros, capfd):
    """Issue 24.2: sim_arm publishes the aux servos and takes the README's gripper command."""
    config = REPO_ROOT / 'config' / 'arm_6servo.yaml'
    arm = load_arm(config)
    ros.add(SimArmNode(context=ros.context, cli_args=[
        '--ros-args', '--params-file', str(config), *ros.ros_args, '-p', 'rate_hz:=100.0']))
    probe = ros.probe()
    states: list[JointState] = []
    probe.create_subscription(JointState, 'joint_states', states.append, 100)
    publisher = probe.create_publisher(JointState, 'joint_commands', 10)
    ros.spin_until(lambda: states, timeout_s=10.0, what='the first joint_states')
    assert list(states[0].name) == [*arm.joint_names, 'gripper']
    assert states[0].position[5] == pytest.approx(0.5), 'home_us 1500 of 1000..2000'
    publisher.publish(JointState(name=['grip'], position=[0.2]))
    publisher.publish(JointState(name=['gripper'], position=[0.8]))
    ros.spin_until(lambda: states[-1].position[5] == pytest.approx(0.8), timeout_s=10.0,
                   what=lambda: f'the gripper at 0.8, not {states[-1].position[5]}')
    speeds = [abs(b.position[5] - a.position[5]) / ((_stamp_ns(b) - _stamp_ns(a)) * 1e-9)
              for a, b in zip(states[:-1], states[1:], strict=True) if _stamp_ns(b) > _stamp_ns(a)]
    assert max(speeds) <= PULSE_AUX_SPEED_PER_S * 1.01, 'moved as servo_driver moves it'
    seen: list[str] = []

    def said() -> bool:
        seen.append(capfd.readouterr().err)
        return "did you mean 'gripper'?" in ''.join(seen)

    ros.spin_until(said, timeout_s=10.0, what=lambda: f'the closest name in the log: {seen}')
    line = next(x for x in ''.join(seen).splitlines() if 'did you mean' in x)
    assert "names ['grip'] hold none of the joints" in line and "servos ['gripper']" in line


def test_a_bus_gripper_is_simulated_in_radians(ros):
    """The SO-101's gripper is a bus servo: sim_arm publishes it in rad, as servo_driver does."""
    config = REPO_ROOT / 'config' / 'so101.yaml'
    ros.add(SimArmNode(context=ros.context, cli_args=[
        '--ros-args', '--params-file', str(config), *ros.ros_args, '-p', 'rate_hz:=100.0']))
    probe = ros.probe()
    states: list[JointState] = []
    probe.create_subscription(JointState, 'joint_states', states.append, 100)
    publisher = probe.create_publisher(JointState, 'joint_commands', 10)
    ros.spin_until(lambda: states, timeout_s=10.0, what='the first joint_states')
    assert states[0].name[-1] == 'gripper' and states[0].position[-1] == 0.0
    publisher.publish(JointState(name=['gripper'], position=[2.5]))
    limit = math.radians(100.000042858)
    ros.spin_until(lambda: states[-1].position[-1] == pytest.approx(limit), timeout_s=10.0,
                   what=lambda: f'the gripper clamped to its max_deg, not {states[-1].position}')
