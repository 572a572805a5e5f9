"""One servo kept limp on its own (overheating) while the others hold: across re-admission too."""

import pytest

from fabrik_ros.servo_io.bus_silence import REPING_S
from fabrik_ros.servo_io.protocols.dialect import BUS_PROTOCOLS, Protocol
from test.servo_io.bus_wire import BusWire, IDS

BUSES = pytest.mark.parametrize('protocol', BUS_PROTOCOLS, ids=lambda p: p.value)
HOT = 3
OTHERS = tuple(i for i in IDS if i != HOT)


def _one_limp(protocol: Protocol) -> BusWire:
    """Return a wire whose servos hold at 2048, all but servo ``HOT``, wished limp."""
    wire = BusWire(protocol)
    wire.connect()
    wire.scheduler.set_torque(True)
    wire.run_for(0.2)
    assert all(wire.bus.torques())
    wire.scheduler.set_limp(HOT, True)
    wire.run_for(0.2)
    return wire


def _torques(wire: BusWire) -> dict[int, bool]:
    return dict(zip(IDS, wire.bus.torques(), strict=True))


@BUSES
def test_a_servo_wished_limp_goes_limp_alone_and_takes_no_goals(protocol):
    wire = _one_limp(protocol)
    assert _torques(wire) == {i: i != HOT for i in IDS}
    assert wire.scheduler.limp_ids() == (HOT,)
    since = wire.now
    wire.scheduler.set_goals({i: 2300 for i in IDS}, 0.0)
    wire.run_for(1.5)                       # past a goal refresh too
    assert [at for at, _ in wire.goal_writes(HOT) if at >= since] == []
    assert [wire.present(i) for i in OTHERS] == [2300] * len(OTHERS)
    assert wire.present(HOT) == 2048
    wire.servo(HOT).move_by_hand(1500, wire.now)
    wire.run_for(0.1)
    assert wire.scheduler.positions.counts[HOT] == 1500, 'its position is still read'


@BUSES
def test_a_torque_wish_for_every_servo_leaves_the_limp_one_limp(protocol):
    wire = _one_limp(protocol)
    wire.scheduler.set_torque(False)
    wire.run_for(0.2)
    wire.scheduler.set_torque(True)
    wire.run_for(0.2)
    assert _torques(wire) == {i: i != HOT for i in IDS}


@BUSES
def test_a_limp_servo_admitted_anew_after_a_power_cycle_stays_limp(protocol):
    """An STS3215 powers up torqued: its admission must turn the torque off again."""
    wire = _one_limp(protocol)
    wire.servo(HOT).silent = True
    wire.run_for(0.2)
    assert HOT not in wire.scheduler.admitted()
    wire.servo(HOT).power_cycle(wire.now)
    wire.servo(HOT).silent = False
    wire.run_for(REPING_S + 0.2)
    assert wire.scheduler.admitted() == IDS
    assert _torques(wire) == {i: i != HOT for i in IDS}
    wire.scheduler.take_admitted()
    since = wire.now
    wire.scheduler.set_goals({i: 2200 for i in IDS}, 0.0)
    wire.run_for(0.3)
    assert [at for at, _ in wire.goal_writes(HOT) if at >= since] == []


@BUSES
def test_released_it_holds_where_it_stands_and_takes_the_next_goal(protocol):
    wire = _one_limp(protocol)
    wire.scheduler.set_goals({i: 2300 for i in IDS}, 0.0)     # not kept for the limp one
    wire.run_for(0.2)
    wire.servo(HOT).move_by_hand(1700, wire.now)
    wire.scheduler.set_limp(HOT, False)
    wire.run_for(0.3)
    assert all(wire.bus.torques())
    assert wire.present(HOT) == 1700, 'it holds where the hand left it'
    wire.scheduler.set_goals({HOT: 1800}, 0.0)
    wire.run_for(0.3)
    assert wire.present(HOT) == 1800


def test_a_limp_wish_for_an_unknown_id_is_refused():
    wire = BusWire(Protocol.FEETECH)
    with pytest.raises(ValueError) as raised:
        wire.scheduler.set_limp(99, True)
    assert 'servo id 99' in str(raised.value)
