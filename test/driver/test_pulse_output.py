"""PulseOutput: the servo order onto board channels, and which reports are current (issue 23)."""

from pathlib import Path

import pytest

from fabrik_ros.driver.pulse_output import PulseOutput
from fabrik_ros.driver.servo_output import LinkEvent
from fabrik_ros.kinematics import load_arm
from fabrik_ros.servo_io import LinkOptions, LinkState, Positions, Protocol

ARM = load_arm(Path(__file__).parents[2] / 'config' / 'arm_6servo.yaml')
POLL_HZ = 10.0


@pytest.fixture
def rig():
    clock = [50.0]
    output = PulseOutput('/dev/ttyNOTOPENED', ARM, protocol=Protocol.NATIVE,
                         options=LinkOptions(poll_hz=POLL_HZ), clock=lambda: clock[0])
    return output, clock


def test_units_go_to_their_channels_in_whole_us_within_the_limits(rig, monkeypatch):
    output, _ = rig
    sent = []
    monkeypatch.setattr(output.link, 'set_pulses', lambda pulses, move_s: sent.append(
        (list(pulses), move_s)))
    output.send([1500.4, 1499.6, 2600.0, 1000.0, 1500.0, 1250.0], 100.0)
    [(pulses, move_s)] = sent
    # base, shoulder, elbow (above its 2500 limit), wrist_pitch (below 600), roll, gripper
    assert pulses == [1500, 1500, 2500, 1000, 1500, 1250]
    assert move_s == 65.535, 'the link takes at most MOVE_MAX_S'


def test_a_report_counts_only_after_the_connect_and_while_recent(rig, monkeypatch):
    output, clock = rig
    report = [Positions((1500, 1512, None, 1500, 1500, 1250), 10.0, 49.95)]
    monkeypatch.setattr(output.link, 'positions', lambda: report[0])
    output._on_state(LinkState.READY)          # the link's thread, at 50.0
    assert output.take_events() == [LinkEvent(LinkState.READY)] and output.take_events() == []
    assert output.report(clock[0]) is None, 'taken before this connect'
    report[0] = Positions((1500, 1512, None, 1500, 1500, 1250), 10.0, 50.1)
    current = output.report(50.2)
    assert current.units == (1500.0, 1512.0, None, 1500.0, 1500.0, 1250.0)
    assert current.resolution == 10.0 and current.stamp_s == 50.1
    assert output.report(50.1 + 3.0 / POLL_HZ + 0.01) is None, 'three polls old'


def test_pwm_servos_cannot_be_rebooted_and_say_so(rig):
    output, _ = rig
    assert 'PWM servos, which have no reboot' in output.reboot_refusal
    order = output.reboot()
    assert order.rebooted == () and order.refusal == output.reboot_refusal
