"""servo_driver's ~/reboot on simulated buses: a Dynamixel overload shutdown cleared (issue 37).

A Dynamixel X servo shut down by an overload stays limp until rebooted (the simulated XL430
does as the e-Manual says). ~/reboot reboots it; it rejoins holding where it stands, and the
arm moves it on to the latched command at the speed limits, without a jump. Feetech servos
have no reboot: refused, saying why.
"""

import time

import pytest
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

from fabrik_ros.servo_io import Protocol
from test.nodes.test_driver_bus import (
    _counts,
    ARM,
    BusRig,
    IDS,
    make_rig,  # noqa: F401  (the rig's fixture)
)

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

OVERLOAD = 0x20         # Hardware Error Status bit 5, in the default Shutdown(63)
SLOW_RAD_S = 1.0
ELBOW = ARM.joint_names.index('elbow_flex')
POSE_A = (0.3, -0.4, 0.5, 0.2, -0.6)


def _reboot(rig: BusRig) -> Trigger.Response:
    client = rig.probe.create_client(Trigger, f'{rig.ros.namespace}/servo_driver/reboot')
    rig.ros.spin_until(client.service_is_ready, timeout_s=10.0, what='~/reboot')
    future = client.call_async(Trigger.Request())
    rig.ros.spin_until(future.done, timeout_s=10.0, what='~/reboot to answer')
    return future.result()


def _with(pose, **joints):
    angles = list(pose)
    for name, angle in joints.items():
        angles[ARM.joint_names.index(name)] = angle
    return tuple(angles)


def test_an_overloaded_dynamixel_servo_is_rebooted_and_moves_on_to_the_latched_command(
        make_rig):  # noqa: F811
    rig = make_rig(Protocol.DYNAMIXEL)
    rig.wait_running()
    rig.driver.set_parameters([Parameter('max_speed_rad_s', value=[SLOW_RAD_S] * 5)])
    rig.command(ARM.joint_names, POSE_A)
    rig.wait_present(_counts(POSE_A), 'pose A')
    firmware, elbow_id = rig.board.firmware, IDS[ELBOW]
    with firmware.lock:
        firmware.servo(elbow_id).error_bits = OVERLOAD
    rig.ros.spin_until(lambda: not firmware.torques()[ELBOW], timeout_s=10.0,
                       what='the overload shutdown to cut the elbow torque')
    name = f'servo elbow_flex (id {elbow_id})'
    rig.ros.spin_until(lambda: name in rig.servo_statuses()
                       and 'overload' in rig.servo_statuses()[name].message, timeout_s=10.0,
                       what=lambda: f'{name} reporting its overload: {rig.servo_statuses()}')
    sagged = _with(POSE_A, elbow_flex=POSE_A[ELBOW] + 0.5)
    with firmware.lock:
        firmware.move_by_hand(elbow_id, _counts(sagged)[ELBOW], time.monotonic())
    pose_b = _with(POSE_A, elbow_flex=POSE_A[ELBOW] - 0.3, wrist_roll=0.4)
    rig.command(ARM.joint_names, pose_b)
    wrist = ARM.joint_names.index('wrist_roll')
    rig.ros.spin_until(lambda: abs(rig.present()[wrist] - _counts(pose_b)[wrist]) <= 2,
                       timeout_s=10.0, what='the servos that answer at pose B')
    assert abs(rig.present()[ELBOW] - _counts(sagged)[ELBOW]) <= 2, 'limp where it sagged'

    reply = _reboot(rig)
    assert reply.success, reply.message
    assert reply.message.startswith(f'rebooted {name}: overload;'), reply.message
    assert '(id 1)' not in reply.message, 'only the servo in error'
    target, seen = _counts(pose_b)[ELBOW], []
    rig.ros.spin_until(lambda: abs(rig.present()[ELBOW] - target) <= 2, timeout_s=10.0,
                       what=lambda: f'the elbow at its latched command {target}: {seen[-3:]}',
                       during=lambda: seen.append(rig.present()[ELBOW]))
    assert firmware.torques() == [True] * 6, 'torqued again'
    assert abs(seen[0] - _counts(sagged)[ELBOW]) <= 2
    assert all(b <= a + 2 for a, b in zip(seen, seen[1:], strict=False)), \
        f'from where it stood straight to the command, no jump: {seen}'
    assert len(set(seen)) > 10, 'moved at the speed limit, not at once'


def test_a_feetech_bus_refuses_a_reboot_saying_why(make_rig):  # noqa: F811
    rig = make_rig(Protocol.FEETECH)
    rig.wait_running()
    reply = _reboot(rig)
    assert not reply.success
    assert 'no reboot instruction' in reply.message and 'factory reset' in reply.message
    assert rig.board.firmware.torques() == [True] * 6
