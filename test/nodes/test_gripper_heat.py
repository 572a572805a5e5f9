"""A gripper gripping at full torque heats, and servo_driver detaches it alone (issue 37).

servo_driver drives an SO-101 on a simulated Feetech bus; the gripper closes on a simulated
object (boardsim's ``place_object``) with ``gripper_holding_effort`` 1.0, so it keeps pushing
at full torque, and the simulated servo's heat model warms it. The test starts it at 63 C,
past the warning limit and just short of the error limit, to keep the run short: the model
goes on from there.
"""

import time

from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import Log
from rclpy.qos import DurabilityPolicy, QoSProfile

from test.nodes.test_gripper_actions import bus, GRIPPER_ID, pytestmark  # noqa: F401

# rosout is latched (transient local): a late subscription still gets what was logged.
_ROSOUT_QOS = QoSProfile(depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL)
NAME = f'servo gripper (id {GRIPPER_ID})'
ERROR, WARN = 40, 30            # rcl_interfaces/Log levels


def _driver_log(rig) -> list:
    messages = []
    name = rig.driver.get_fully_qualified_name().lstrip('/').replace('/', '.')
    rig.client.probe.create_subscription(
        Log, '/rosout', lambda m: m.name == name and messages.append(m), _ROSOUT_QOS)
    return messages


def _gripper_status(diagnostics, ros):
    for array in reversed(diagnostics):
        for status in array.status:
            if ros.ours(status) and status.name.endswith(NAME):
                return status
    return None


def test_a_gripper_pushing_on_an_object_heats_and_is_detached_alone(bus):  # noqa: F811
    rig = bus('-p', 'gripper_holding_effort:=1.0', '-p', 'diagnostics_period_s:=0.2')
    log, diagnostics = _driver_log(rig), []
    rig.client.probe.create_subscription(DiagnosticArray, '/diagnostics', diagnostics.append, 10)
    firmware = rig.board.firmware
    rig.place_object(0.5)
    rig.client.command(['gripper'], [1.2])

    def pushing():
        with firmware.lock:
            return rig.servo().pushing(time.monotonic())

    rig.ros.spin_until(pushing, timeout_s=20.0, what='the gripper pushing on the object')
    with firmware.lock:
        rig.servo().temperature_c = 63.0

    def torques():
        with firmware.lock:
            return [firmware.servo(i).torque for i in range(1, 7)]

    rig.ros.spin_until(lambda: not torques()[GRIPPER_ID - 1], timeout_s=30.0,
                       what=lambda: f'the gripper detached: torques {torques()}, '
                                    f'{rig.servo().temperature_c:.1f} C')
    assert torques() == [True] * 5 + [False], 'only the gripper is detached'
    rig.ros.spin_until(lambda: any(NAME in m.msg for m in log if m.level == ERROR),
                       timeout_s=10.0, what=lambda: f'the ERROR line: {[m.msg for m in log]}')
    errors = [m.msg for m in log if m.level == ERROR and NAME in m.msg]
    assert len(errors) == 1, errors
    assert 'at or above the error limit 65 C: detached (torque off)' in errors[0]
    assert errors[0].startswith(f'{NAME}: temperature 6')
    warnings = [m.msg for m in log if m.level == WARN and 'warning limit 55 C' in m.msg]
    assert len(warnings) == 1 and warnings[0].startswith(NAME), warnings

    def detached_status():
        status = _gripper_status(diagnostics, rig.ros)
        return (status is not None and status.level == b'\x02'
                and status.message.startswith('detached for overheating'))

    rig.ros.spin_until(detached_status, timeout_s=10.0,
                       what=lambda: f'/diagnostics ERROR: {_gripper_status(diagnostics, rig.ros)}')
    assert 'call ~/enable false, then true' in _gripper_status(diagnostics, rig.ros).message
    assert rig.torque_limit() is not None and torques()[:5] == [True] * 5
