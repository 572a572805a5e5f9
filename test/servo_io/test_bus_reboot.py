"""A Dynamixel servo in a hardware-error shutdown is limp until rebooted; Feetech has no reboot.

The simulated XL430 turns its torque off for good on an error its Shutdown register names
(overload here), as the e-Manual says; a reboot clears it, and the scheduler treats the servo
as lost, pings it and admits it anew: held where it stands, torque on, named by
take_admitted before it takes a goal.
"""

import pytest

from fabrik_ros.servo_io.bus_silence import BOOT_S
from fabrik_ros.servo_io.protocols.dialect import Protocol
from fabrik_ros.servo_io.protocols.dynamixel import Instruction
from test.servo_io.bus_wire import BusWire, IDS

OVERLOAD = 0x20         # Hardware Error Status bit 5, in the default Shutdown(63) = 52


def _running(protocol=Protocol.DYNAMIXEL, **options) -> BusWire:
    wire = BusWire(protocol, **options)
    wire.connect()
    wire.scheduler.set_torque(True)
    wire.run_for(0.3)
    assert wire.scheduler.admitted() == IDS and all(wire.bus.torques())
    assert wire.scheduler.take_admitted() == {}, 'the handshake admits none "anew"'
    return wire


def _shut_down(wire: BusWire, servo_id: int) -> None:
    """Overload ``servo_id``: it cuts its torque, and the link hears of it."""
    wire.servo(servo_id).error_bits = OVERLOAD
    wire.run_for(2.0)           # telemetry reaches every servo's error register
    assert not wire.bus.torques()[servo_id - 1], 'the shutdown left it limp'
    assert wire.scheduler.conditions()[servo_id].hardware_errors == ('overload',)
    wire.servo(servo_id).move_by_hand(3000, wire.now)     # the limp joint sagged


def _reboots(wire: BusWire) -> list[int]:
    return [s.packet.id for s in wire.sent if s.packet.instruction == Instruction.REBOOT]


def test_a_reboot_clears_an_overload_shutdown_and_the_servo_is_admitted_anew_holding():
    wire = _running()
    _shut_down(wire, 3)
    assert wire.scheduler.reboot([3]) == (3,)
    wire.run_for(0.5)
    assert _reboots(wire) == [3]
    assert wire.bus.torques() == [True] * len(IDS), 'torque on again, the others never off'
    assert wire.servo(3).error_bits == 0
    assert wire.scheduler.conditions()[3].hardware_errors == ()
    assert wire.scheduler.take_admitted() == {3: 3000}, 'admitted anew where it stands'
    assert wire.present(3) == 3000, 'held where it stood: no jump'
    assert wire.scheduler.take_notices() == [], 'a servo that restarts is not named silent'


def test_a_rebooted_servo_takes_no_goal_until_its_admission_was_taken():
    wire = _running()
    _shut_down(wire, 3)
    wire.scheduler.reboot([3])
    wire.run_for(0.5)
    wire.scheduler.set_goals({3: 2500}, 0.0)
    wire.run_for(0.1)
    assert wire.present(3) == 3000, 'its goal waits for take_admitted'
    assert 3 in wire.scheduler.take_admitted()
    wire.scheduler.set_goals({3: 2500}, 0.0)
    wire.run_for(0.5)
    assert wire.present(3) == 2500


def _reboot_until_sent(wire: BusWire, servo_id: int) -> None:
    """Reboot ``servo_id`` and advance in 0.1 ms steps until the reboot went out."""
    wire.scheduler.reboot([servo_id])
    while not _reboots(wire):
        wire.run_for(0.0001)


def test_a_servo_that_restarts_slowly_is_not_named_silent_and_is_admitted_once_it_answers():
    wire = _running()
    _shut_down(wire, 3)
    _reboot_until_sent(wire, 3)
    wire.servo(3).silent = True     # restarting (its answer lost, too), for most of BOOT_S
    since = wire.now
    wire.run_for(0.8 * BOOT_S)
    reads = [s for s in wire.sync_reads() if s.at_s > since]
    assert len(reads) >= 0.8 * BOOT_S * 50 * 0.6, "its pings leave the others' feedback be"
    assert _reboots(wire) == [3], 'sent once, not again without an answer'
    assert wire.scheduler.take_notices() == []
    assert 3 not in wire.scheduler.admitted()
    assert wire.scheduler.conditions()[3].silent_since_s is None
    wire.servo(3).silent = False
    wire.run_for(0.3)
    assert 3 in wire.scheduler.admitted() and wire.bus.torques()[2]
    assert wire.scheduler.take_admitted() == {3: 3000}


def test_a_servo_that_does_not_come_back_is_named_silent():
    wire = _running()
    _reboot_until_sent(wire, 2)
    wire.servo(2).silent = True
    wire.run_for(BOOT_S + 0.5)
    assert [n.servo_id for n in wire.scheduler.take_notices()] == [2]
    assert wire.scheduler.conditions()[2].silent_since_s is not None


def test_a_servo_not_in_error_may_be_rebooted_and_two_wishes_reboot_it_once():
    wire = _running()
    assert wire.scheduler.reboot([4, 4]) == (4,)
    assert wire.scheduler.reboot([4]) == (4,)       # asked again before the first went out
    wire.run_for(0.5)
    assert _reboots(wire) == [4]
    assert wire.bus.torques() == [True] * len(IDS)
    assert list(wire.scheduler.take_admitted()) == [4]


def test_a_reboot_while_the_caller_wants_torque_off_leaves_the_servo_limp():
    wire = _running()
    wire.scheduler.set_torque(False)
    wire.run_for(0.2)
    wire.scheduler.reboot([5])
    wire.run_for(0.5)
    assert not any(wire.bus.torques())
    assert list(wire.scheduler.take_admitted()) == [5]


def test_feetech_servos_are_never_sent_a_reboot_nor_a_reset():
    wire = _running(Protocol.FEETECH)
    with pytest.raises(ValueError) as refused:
        wire.scheduler.reboot([3])
    assert 'factory reset' in str(refused.value) and 'supply' in str(refused.value)
    wire.run_for(0.3)
    assert not [s for s in wire.sent if s.packet.instruction in (0x06, 0x08)]


def test_unknown_ids_are_refused_by_name():
    wire = _running()
    with pytest.raises(ValueError) as refused:
        wire.scheduler.reboot([3, 9])
    assert '[9]' in str(refused.value)
    wire.run_for(0.3)
    assert _reboots(wire) == []
