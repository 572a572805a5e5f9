"""BusScheduler on a fake clock against the simulated Feetech and Dynamixel buses (no pty)."""

from dataclasses import replace

import pytest

from fabrik_ros.servo_io.bus_goals import GOAL_REFRESH_S
from fabrik_ros.servo_io.bus_line import BUS_OPTIONS, DEFAULT_FEEDBACK_HZ
from fabrik_ros.servo_io.bus_scheduler import BusScheduler
from fabrik_ros.servo_io.bus_silence import REPING_S
from fabrik_ros.servo_io.link_stats import Counters
from fabrik_ros.servo_io.protocols.bus_codec import Instruction
from fabrik_ros.servo_io.protocols.control_tables import STS3215
from fabrik_ros.servo_io.protocols.dialect import BUS_PROTOCOLS, Protocol
from fabrik_ros.servo_io.protocols.feetech import FeetechCodec
from test.cyclic_garbage import cyclic_garbage
from test.servo_io.bus_wire import BusWire, IDS

BUSES = pytest.mark.parametrize('protocol', BUS_PROTOCOLS, ids=lambda p: p.value)


def _admitted(protocol: Protocol, **options) -> BusWire:
    """Return a wire whose servos are all admitted and torqued, holding at 2048."""
    wire = BusWire(protocol, **options)
    wire.connect()
    wire.scheduler.set_torque(True)
    wire.run_for(0.2)
    assert wire.scheduler.admitted() == IDS
    assert all(wire.servo(servo_id).torque for servo_id in IDS)
    return wire


def _until_written(wire: BusWire, before: int) -> None:
    """Advance in 0.1 ms steps until a sync write beyond the first ``before`` went out."""
    while len(wire.sync_writes()) == before:
        wire.run_for(0.0001)


@BUSES
def test_no_goal_reaches_a_servo_before_its_present_position_was_read(protocol):
    wire = BusWire(protocol)
    goal = wire.table.goal_position                 # stands at 1000, away from any command
    wire.servo(2).write(goal.address, goal.encode(1000), 0.0)
    wire.servo(2).move_by_hand(1000, 0.0)
    wire.connect()
    wire.scheduler.set_goals({servo_id: 3000 for servo_id in IDS}, 0.0)   # too early
    wire.run_for(0.2)
    for servo_id in IDS:
        first_read = wire.position_reads(servo_id)[0]
        assert all(at > first_read for at, _ in wire.goal_writes(servo_id))
    assert {goal for _, goal in wire.goal_writes(2)} <= {1000}, \
        'a goal set before admission is stale: dropped; the servo holds where it stands'
    assert wire.present(2) == 1000
    wire.scheduler.set_torque(True)
    wire.run_for(0.1)
    assert wire.present(2) == 1000 and wire.servo(2).torque
    wire.scheduler.set_goals({2: 1100}, 0.0)
    wire.run_for(0.1)
    goals = [goal for _, goal in wire.goal_writes(2)]
    assert set(goals[:-1]) == {1000} and goals[-1] == 1100, 'hold, then the command'
    assert wire.present(2) == 1100


@BUSES
def test_one_sync_write_per_command_and_the_latest_wins(protocol):
    wire = _admitted(protocol)
    before = len(wire.sync_writes())
    wire.scheduler.set_goals({1: 2100, 2: 2000}, 0.0)
    _until_written(wire, before)
    for goal in (2110, 2120, 2130):                 # the line still carries the first
        wire.scheduler.set_goals({1: goal}, 0.0)
        wire.step()
    wire.run_for(0.005)
    writes = wire.sync_writes()[before:]
    assert len(writes) == 2, 'the three commands set while the line was busy: one write'
    goals = writes[-1].writes(wire.table, wire.table.goal_position.name, wire.reader)
    assert goals == {1: 2130, 2: 2000, 3: 2048, 4: 2048, 5: 2048, 6: 2048}
    assert wire.count.coalesced == 2 and wire.count.commands == 4


@BUSES
def test_feedback_runs_at_its_rate_beside_a_500_hz_goal_stream(protocol):
    wire = _admitted(protocol)
    reads = {servo_id: len(wire.position_reads(servo_id)) for servo_id in IDS}
    writes = len(wire.sync_writes())
    start = wire.now
    for tick in range(500):
        wire.scheduler.set_goals({1: 2048 + tick % 50}, 0.002)
        wire.run_until(start + (tick + 1) * 0.002)
    for servo_id in IDS:      # a read may cover some servos of the round, a later the rest
        assert len(wire.position_reads(servo_id)) - reads[servo_id] == pytest.approx(
            DEFAULT_FEEDBACK_HZ, abs=1)
    assert len(wire.sync_writes()) - writes == 500, 'every command got its own sync write'
    positions = wire.scheduler.positions
    assert positions is not None and positions.stamp_s >= wire.now - 1 / DEFAULT_FEEDBACK_HZ
    assert set(positions.counts) == set(IDS)
    assert abs(positions.counts[1] - wire.present(1)) <= 50


@BUSES
def test_a_goal_moves_every_servo_so_they_arrive_together_after_the_move_time(protocol):
    wire = _admitted(protocol)
    wire.scheduler.set_goals({1: 2048 + 400, 2: 2048 - 100}, 0.5)
    wire.run_for(0.25)
    assert wire.present(1) == pytest.approx(2048 + 200, abs=20)
    assert wire.present(2) == pytest.approx(2048 - 50, abs=20)
    wire.run_for(0.3)
    assert (wire.present(1), wire.present(2)) == (2448, 1948)


@BUSES
def test_a_silent_servo_is_named_left_out_and_admitted_again_when_it_answers(protocol):
    wire = _admitted(protocol)
    wire.scheduler.take_notices()
    wire.servo(3).silent = True
    wire.run_for(0.2)
    assert wire.scheduler.admitted() == (1, 2, 4, 5, 6)
    assert wire.scheduler.conditions()[3].silent_since_s is not None
    assert any('servo id 3: stopped answering' in str(n) for n in wire.scheduler.take_notices())
    reads = len(wire.sync_reads())
    wire.run_for(0.2)
    assert len(wire.sync_reads()) - reads >= 9, 'the others keep their feedback rate'
    assert set(wire.scheduler.positions.counts) == {1, 2, 4, 5, 6}
    assert wire.scheduler.positions.stamp_s >= wire.now - 0.02
    wire.scheduler.set_goals({3: 3000, 4: 2500}, 0.0)
    wire.run_for(0.3)
    assert wire.goal_writes(3) == [] or wire.goal_writes(3)[-1][0] < wire.now - 0.2
    assert wire.present(4) == 2500
    wire.servo(3).silent = False
    wire.run_for(REPING_S + 0.1)
    assert wire.scheduler.admitted() == IDS
    assert any('servo id 3: answers again' in str(n) for n in wire.scheduler.take_notices())
    assert wire.present(3) == 2048, 'its stale goal was dropped: it holds where it stands'


@BUSES
def test_a_servo_admitted_anew_takes_goals_once_the_caller_has_taken_where_it_holds(protocol):
    """A goal planned before the caller knew the servo was back would start where it was not."""
    wire = _admitted(protocol)
    assert wire.scheduler.take_admitted() == {}, 'the handshake admits without a word'
    wire.servo(3).silent = True
    wire.run_for(0.2)
    wire.scheduler.set_goals({3: 3000}, 0.0)            # while it is lost
    wire.servo(3).silent = False
    wire.run_for(REPING_S + 0.1)
    assert wire.scheduler.admitted() == IDS
    wire.scheduler.set_goals({3: 2900, 4: 2400}, 0.0)   # before the caller took the news
    wire.run_for(0.2)
    assert (wire.present(3), wire.present(4)) == (2048, 2400), 'it holds; the others move'
    assert wire.scheduler.take_admitted() == {3: 2048}
    assert wire.scheduler.take_admitted() == {}, 'said once'
    wire.scheduler.set_goals({3: 2100}, 0.0)
    wire.run_for(0.2)
    assert wire.present(3) == 2100, 'taken: it follows again'


@BUSES
def test_limp_keeps_the_feedback_and_torque_on_holds_where_the_hand_left_it(protocol):
    wire = _admitted(protocol)
    wire.scheduler.set_torque(False)
    wire.run_for(0.1)
    assert not any(wire.servo(i).torque for i in IDS)
    wire.servo(5).move_by_hand(700, wire.now)
    wire.run_for(0.1)
    assert wire.scheduler.positions.counts[5] == 700
    goals_before = len(wire.goal_writes(5))
    wire.scheduler.set_torque(True)
    wire.run_for(0.1)
    assert all(wire.servo(i).torque for i in IDS)
    assert wire.present(5) == 700, 'no jump: the goal register got the present position first'
    torque_on = [s.at_s for s in wire.sent
                 if s.writes(wire.table, wire.table.torque_enable.name, wire.reader).get(5) == 1]
    goal_at, goal = wire.goal_writes(5)[goals_before]
    assert goal == 700 and goal_at < torque_on[-1]


def test_goals_set_while_limp_are_not_written_and_are_dropped_by_torque_on():
    wire = _admitted(Protocol.FEETECH)
    wire.scheduler.set_torque(False)
    wire.run_for(0.05)
    writes = len(wire.sync_writes())
    wire.scheduler.set_goals({1: 100}, 0.0)
    wire.run_for(0.05)
    assert len(wire.sync_writes()) == writes
    wire.scheduler.set_torque(True)
    wire.run_for(GOAL_REFRESH_S + 0.1)
    assert wire.present(1) == 2048


@BUSES
def test_error_bits_and_readings_come_back_in_words_and_units(protocol):
    wire = _admitted(protocol)
    servo = wire.servo(4)
    servo.error_bits = 0x24 if protocol is Protocol.DYNAMIXEL else 0x20
    servo.heat.ambient_c = servo.temperature_c = 61.0      # steady there: a hot enclosure
    servo.voltage_v = 11.3
    wire.run_for(1.5)                      # telemetry visits every servo within 0.6 s
    condition = wire.scheduler.conditions()[4]
    assert 'overload' in condition.error_words
    assert (condition.temperature_c, condition.voltage_v) == (61.0, pytest.approx(11.3))
    assert wire.scheduler.conditions()[3].error_words == ()


@BUSES
def test_limit_registers_are_read_at_admission(protocol):
    wire = BusWire(protocol)
    table = wire.table
    servo = wire.servo(5)
    servo.write(table.min_position_limit.address, table.min_position_limit.encode(144), 0.0)
    servo.write(table.max_position_limit.address, table.max_position_limit.encode(3953), 0.0)
    wire.connect()
    wire.run_for(0.2)
    assert wire.scheduler.limits()[5] == (144, 3953)
    assert wire.scheduler.limits()[1] == (0, 4095)


@BUSES
def test_a_homing_offset_the_servo_lacks_is_written_with_torque_off_and_read_back(protocol):
    wire = BusWire(protocol, homing_offsets={2: 1024})
    wire.connect()
    wire.run_for(0.3)
    table = wire.table
    assert wire.servo(2).homing_offset == 1024 and wire.servo(1).homing_offset == 0
    assert wire.servo(2).torque is table.torque_on_at_power_up, 'holds the arm again'
    assert round(wire.servo(2).shaft(wire.now)) == 2048, 'the arm did not move'
    assert wire.scheduler.homing_offsets()[2] == 1024
    names = ('Torque_Enable', 'Lock', 'Homing_Offset') if table.lock else (
        'Torque_Enable', 'Homing_Offset')
    steps = [(name, value) for sent in wire.sent if sent.packet.id == 2 for name in names
             for value in [sent.writes(table, name, wire.reader).get(2)] if value is not None]
    expected = ([('Torque_Enable', 0), ('Lock', 0), ('Homing_Offset', 1024), ('Lock', 1)]
                if protocol is Protocol.FEETECH else
                [('Torque_Enable', 0), ('Homing_Offset', 1024)])
    assert steps[:len(expected)] == expected
    notices = wire.scheduler.take_notices()
    assert any('servo id 2: homing offset register was 0, wrote 1024' in str(n) for n in notices)
    written_at = [s.at_s for s in wire.sent if 2 in s.writes(table, 'Homing_Offset', wire.reader)]
    assert written_at and wire.position_reads(2)[0] > written_at[0], \
        'its present position is read after the offset changed it'


@BUSES
def test_reads_are_not_starved_by_a_flood_of_commands(protocol):
    wire = _admitted(protocol)
    reads = len(wire.sync_reads())
    start = wire.now
    while wire.now < start + 0.5:
        wire.scheduler.set_goals({1: 2000 + round(wire.now * 1e4) % 90}, 0.0)
        wire.run_for(0.0001)
    period_s = 1 / DEFAULT_FEEDBACK_HZ
    reads_at = [sent.at_s for sent in wire.sync_reads()[reads:]]
    assert reads_at and reads_at[0] < start + 2 * period_s + 0.001, 'at most a period late'
    assert len(reads_at) >= 0.5 * DEFAULT_FEEDBACK_HZ - 2
    gaps = [later - earlier for earlier, later in zip(reads_at, reads_at[1:], strict=False)]
    assert max(gaps) < period_s + 0.001, 'then at the feedback rate'


def test_the_latest_goals_are_written_again_while_nothing_acknowledges_them():
    wire = _admitted(Protocol.FEETECH, drop=lambda reply: False)
    wire.scheduler.set_goals({1: 2500}, 0.0)
    wire.run_for(0.01)
    writes = len(wire.sync_writes())
    wire.run_for(2 * GOAL_REFRESH_S + 0.01)
    assert len(wire.sync_writes()) - writes == 2


def test_a_corrupted_reply_is_skipped_and_the_servo_is_not_named_silent_for_one_loss():
    losses = iter([True, False] * 3)
    wire = _admitted(Protocol.FEETECH)
    wire.drop = lambda reply: next(losses, False)
    wire.run_for(0.3)
    assert wire.scheduler.admitted() == IDS
    assert wire.count.timeouts >= 1


def test_bad_homing_offsets_and_ids_are_refused_by_name():
    with pytest.raises(ValueError, match=r'homing_offsets\[2\] = 5000, must be within'):
        BusScheduler(FeetechCodec(), IDS, STS3215, BUS_OPTIONS, Counters(),
                     homing_offsets={2: 5000})
    with pytest.raises(ValueError, match=r'homing_offsets names ids \[9\]'):
        BusScheduler(FeetechCodec(), IDS, STS3215, BUS_OPTIONS, Counters(),
                     homing_offsets={9: 0})
    with pytest.raises(ValueError, match='each once'):
        BusScheduler(FeetechCodec(), (1, 1), STS3215, BUS_OPTIONS, Counters())
    wire = _admitted(Protocol.FEETECH)
    with pytest.raises(ValueError, match=r'servo id 1 = 4096, must be within \[0, 4095\]'):
        wire.scheduler.set_goals({1: 4096}, 0.0)
    with pytest.raises(ValueError, match='goal for servo id 7'):
        wire.scheduler.set_goals({7: 100}, 0.0)


def test_servos_missing_at_connect_are_named_and_the_others_run():
    wire = BusWire(Protocol.FEETECH, answered=(1, 2, 3, 5, 6),
                   options=replace(BUS_OPTIONS, poll_hz=50.0))
    wire.servo(4).silent = True
    wire.connect()
    wire.run_for(0.2)
    assert wire.scheduler.admitted() == (1, 2, 3, 5, 6)
    assert list(map(str, wire.scheduler.take_notices()))[:1] == [
        'servo id 4: did not answer a ping at connect']
    assert set(wire.scheduler.positions.counts) == {1, 2, 3, 5, 6}
    assert [s for s in wire.sent if s.packet.instruction == Instruction.PING] == [], \
        'the handshake pinged; the next ping waits for REPING_S'


@BUSES
def test_a_command_goes_before_a_feedback_read_that_is_due(protocol):
    """The link's thread wakes a little late for a read; a command that came meanwhile first."""
    wire = _admitted(protocol, telemetry_hz=0.0)
    wire.run_for(0.005)
    due = wire.scheduler.wake_at(wire.now)      # the next feedback read
    wire.run_until(due - 1e-6)
    wire.now = due + 0.0001                     # the thread slept past it; a command came
    wire.scheduler.set_goals({1: 2100}, 0.05)
    sent = len(wire.sent)
    wire.step()
    wire.run_for(0.005)
    assert [Instruction(s.packet.instruction) for s in wire.sent[sent:]][:2] == [
        Instruction.SYNC_WRITE, Instruction.SYNC_READ], 'the command, then the read behind it'


@BUSES
def test_telemetry_waits_while_a_command_is_due(protocol):
    wire = _admitted(protocol, options=replace(BUS_OPTIONS, poll_hz=0.0))
    wire.run_for(0.005)
    due = wire.scheduler.wake_at(wire.now)      # the next telemetry read
    wire.run_until(due - 1e-6)
    wire.now = due + 0.0001
    wire.scheduler.set_goals({1: 2100}, 0.05)
    sent = len(wire.sent)
    wire.step()
    wire.run_for(0.005)
    assert [Instruction(s.packet.instruction) for s in wire.sent[sent:]][:2] == [
        Instruction.SYNC_WRITE, Instruction.READ], 'the command, then the reading'


@BUSES
def test_a_goal_stream_with_feedback_leaves_no_reference_cycles(protocol):
    """Each sync write and sync read is freed as soon as it is done, not by the collector."""
    wire = _admitted(protocol)
    start = wire.now
    with cyclic_garbage() as found:
        for tick in range(200):
            wire.scheduler.set_goals({1: 2048 + tick % 50}, 0.002)
            wire.run_until(start + (tick + 1) * 0.005)
    assert found[0] == 0


@BUSES
def test_the_voltage_range_is_the_limit_registers_read_at_admission_else_the_datasheet(
        protocol):
    wire = BusWire(protocol)
    table = wire.table
    if protocol is Protocol.DYNAMIXEL:
        servo = wire.servo(5)
        for register, tenths in ((table.min_voltage_limit, 100), (table.max_voltage_limit, 130)):
            servo.write(register.address, register.encode(tenths), 0.0)
    wire.connect()
    wire.run_for(0.3)
    condition = wire.scheduler.conditions()[5]
    if protocol is Protocol.DYNAMIXEL:
        assert condition.voltage_range_v == pytest.approx((10.0, 13.0))
        assert condition.voltage_range_source == 'its voltage limit registers'
        assert wire.scheduler.conditions()[4].voltage_range_v == pytest.approx((6.0, 14.0))
    else:
        assert table.min_voltage_limit is None
        assert condition.voltage_range_v == (4.0, 14.0)
        assert condition.voltage_range_source == 'the range set for the STS3215 model'
