"""The latest torque wish wins on every servo, even one whose torque task is under way.

Seen live (SO-101, web_view's Hold then Let go on the simulated Feetech bus): after Let go
the bus reported torque still on for some servos. A servo busy with the re-attach's steps
(read its position, write it as the goal, torque on) was skipped by the Let go, and its task
went on to turn the torque on.
"""

import pytest

from fabrik_ros.servo_io.protocols.dialect import BUS_PROTOCOLS
from test.servo_io.bus_wire import BusWire, IDS

BUSES = pytest.mark.parametrize('protocol', BUS_PROTOCOLS, ids=lambda p: p.value)


def _limp(protocol) -> BusWire:
    wire = BusWire(protocol)
    wire.connect()
    wire.scheduler.set_torque(False)
    wire.run_for(0.2)
    assert wire.scheduler.admitted() == IDS
    assert not any(wire.bus.torques())
    return wire


def _mid_task(wire: BusWire) -> None:
    """Advance in 0.1 ms steps until a servo's torque task awaits an answer (a unicast request)."""
    table, reader = wire.table, wire.reader

    def torque_step() -> bool:
        last = wire.sent[-1] if wire.sent else None
        return (last is not None and last.packet.id in IDS
                and bool(last.reads(table, table.present_position.name, reader)
                         or last.writes(table, table.torque_enable.name, reader)))

    while not (wire.scheduler.in_flight() and torque_step()):
        wire.run_for(0.0001)


@BUSES
@pytest.mark.parametrize('wishes', [(True, False), (False, True)], ids=['hold-let-go',
                                                                       'let-go-hold'])
def test_the_latest_torque_wish_reaches_a_servo_whose_task_is_under_way(protocol, wishes):
    wire = _limp(protocol)
    first, latest = wishes
    if not first:
        wire.scheduler.set_torque(True)
        wire.run_for(0.2)
        assert all(wire.bus.torques())
    wire.scheduler.set_torque(first)
    _mid_task(wire)
    wire.scheduler.set_torque(latest)
    wire.run_for(0.5)
    assert wire.bus.torques() == [latest] * len(IDS)
    assert wire.scheduler.torques() == {servo_id: latest for servo_id in IDS}
