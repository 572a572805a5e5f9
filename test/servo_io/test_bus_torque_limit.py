"""A servo's torque limit: a latest-wins wish per servo, written answered, kept across admissions.

The gripper's grip and its stall protection go through it. Checked against the simulated
servos' registers (the scheduler on a modelled line, fake clock) and, on a real pty, read
back by the maker's own SDK (scservo_sdk) after BusLink wrote it.
"""

from dataclasses import replace
import math
import time

from hypothesis import given
from hypothesis import strategies as st
import pytest
import scservo_sdk as scs

from fabrik_ros.servo_io import Protocol
from fabrik_ros.servo_io.bus_line import BUS_OPTIONS
from fabrik_ros.servo_io.bus_link import BusLink
from fabrik_ros.servo_io.protocols.control_tables import AX12, STS3215, TABLES, XL430_W250
from fabrik_ros.servo_io.protocols.dialect import BUS_PROTOCOLS
from test.polling import poll
from test.servo_io.bus_wire import BusWire, IDS

BUSES = pytest.mark.parametrize('protocol', BUS_PROTOCOLS, ids=lambda p: p.value)
GRIPPER = IDS[-1]


def _admitted(protocol) -> BusWire:
    wire = BusWire(protocol)
    wire.connect()
    wire.run_for(0.3)
    assert wire.scheduler.admitted() == IDS
    return wire


def _register(wire: BusWire, servo_id: int) -> int:
    servo = wire.servo(servo_id)
    assert servo.table.torque_limit is not None
    return servo.register(servo.table.torque_limit)


def _value(wire: BusWire, fraction: float) -> int:
    return round(fraction * wire.table.torque_limit_full)


@BUSES
def test_a_torque_limit_reaches_the_servos_register_and_no_other(protocol):
    wire = _admitted(protocol)
    full = wire.table.torque_limit_full
    wire.scheduler.set_torque_limit(GRIPPER, 0.3)
    wire.run_for(0.1)
    assert _register(wire, GRIPPER) == _value(wire, 0.3)
    assert wire.scheduler.torque_limits()[GRIPPER] == _value(wire, 0.3)
    assert [_register(wire, i) for i in IDS[:-1]] == [full] * (len(IDS) - 1)
    wire.scheduler.set_torque_limit(GRIPPER, None)
    wire.run_for(0.1)
    assert _register(wire, GRIPPER) == full


@BUSES
def test_the_latest_torque_limit_wins(protocol):
    wire = _admitted(protocol)
    for fraction in (0.1, 0.7, 0.45):
        wire.scheduler.set_torque_limit(GRIPPER, fraction)
    wire.run_for(0.1)
    assert _register(wire, GRIPPER) == _value(wire, 0.45)
    limit = wire.table.torque_limit.name
    written = [s.writes(wire.table, limit, wire.reader).get(GRIPPER) for s in wire.sent]
    assert [w for w in written if w is not None][-1] == _value(wire, 0.45)


@BUSES
def test_a_limit_wished_before_admission_is_written_when_the_servo_is_admitted(protocol):
    wire = BusWire(protocol)
    wire.scheduler.set_torque_limit(GRIPPER, 0.25)
    wire.connect()
    wire.run_for(0.3)
    assert _register(wire, GRIPPER) == _value(wire, 0.25)


@BUSES
def test_a_lost_answer_is_retried(protocol):
    wire = _admitted(protocol)
    dropped = []

    def drop_first_write_answer(reply: bytes) -> bool:
        last = wire.sent[-1]
        writes = last.writes(wire.table, wire.table.torque_limit.name, wire.reader)
        if writes and not dropped:
            dropped.append(reply)
            return True
        return False

    wire.drop = drop_first_write_answer
    wire.scheduler.set_torque_limit(GRIPPER, 0.5)
    wire.run_for(0.3)
    assert dropped
    assert wire.scheduler.torque_limits()[GRIPPER] == _value(wire, 0.5)
    assert _register(wire, GRIPPER) == _value(wire, 0.5)


@BUSES
def test_a_servo_power_cycled_gets_its_limit_again_when_it_answers_again(protocol):
    wire = _admitted(protocol)
    wire.scheduler.set_torque_limit(GRIPPER, 0.3)
    wire.run_for(0.1)
    servo = wire.servo(GRIPPER)
    servo.silent = True
    wire.run_for(0.5)
    servo.power_cycle(wire.now)
    assert _register(wire, GRIPPER) == wire.table.torque_limit_full
    servo.silent = False
    wire.run_for(3.0)
    assert GRIPPER in wire.scheduler.admitted()
    assert _register(wire, GRIPPER) == _value(wire, 0.3)


@pytest.mark.parametrize('fraction', [-0.1, 1.5, math.nan, math.inf])
def test_a_fraction_outside_zero_to_one_is_refused_naming_it(fraction):
    wire = BusWire(Protocol.FEETECH)
    with pytest.raises(ValueError) as error:
        wire.scheduler.set_torque_limit(GRIPPER, fraction)
    assert 'within [0.0, 1.0]' in str(error.value)


def test_an_unknown_id_is_refused():
    wire = BusWire(Protocol.FEETECH)
    with pytest.raises(ValueError) as error:
        wire.scheduler.set_torque_limit(9, 0.5)
    assert 'not one of the ids' in str(error.value)


@pytest.mark.timeout(30)
def test_scservo_sdk_reads_the_torque_limit_bus_link_wrote(sim_board, monkeypatch):
    monkeypatch.setattr(scs.port_handler, 'LATENCY_TIMER', 100)
    board = sim_board(Protocol.FEETECH, channels=len(IDS))
    options = replace(BUS_OPTIONS, reply_timeout_s=0.1, handshake_timeout_s=0.5)
    link = BusLink(board.path, protocol=Protocol.FEETECH, ids=IDS, options=options).start()
    try:
        assert link.wait_ready(10.0) == IDS
        link.torque_limit(GRIPPER, 0.3)
        assert poll(lambda: link.torque_limits()[GRIPPER] == 300, 10.0)
    finally:
        link.close()
    port = scs.PortHandler(board.path)
    assert port.openPort()
    try:
        # The board may still be answering what the link asked last (a position read, a
        # well-formed 2-byte packet from the same id): let it finish and drop it first.
        while True:
            port.ser.reset_input_buffer()       # (the SDK's clearPort flushes output only)
            time.sleep(0.2)
            if not port.getBytesAvailable():
                break
        value, result, error = scs.PacketHandler(0).read2ByteTxRx(
            port, GRIPPER, STS3215.torque_limit.address)
    finally:
        port.closePort()
    assert (value, result, error) == (300, scs.COMM_SUCCESS, 0)


@given(st.one_of(st.none(), st.floats(-1.0, 2.0)), st.sampled_from(sorted(TABLES)))
def test_a_torque_limit_value_stays_within_the_register_and_grows_with_the_fraction(
        fraction, model):
    table = TABLES[model]
    full = table.torque_limit_full
    value = table.torque_limit_value(fraction)
    assert 0 <= value <= full
    assert table.torque_limit is not None and table.torque_limit.value_range[1] >= full
    if fraction is None or fraction >= 1.0:
        assert value == full
    else:
        assert value == round(max(fraction, 0.0) * full)


def test_a_fraction_of_each_models_full_torque_is_its_register_value():
    assert STS3215.torque_limit_value(0.3) == 300           # 0.1 % steps
    assert XL430_W250.torque_limit_value(0.3) == 266        # of Goal_PWM 885
    assert AX12.torque_limit_value(0.5) == 512              # of 1023
