"""BusScheduler when answers come late (fake clock, no pty).

A stalled bus is not a silent one, a late answer is not the next request's, and a reply's
deadline runs from the write. On a loaded 2-core host the simulator's board thread was seen
stalling 20-50 ms: the driver then named all six servos "stopped answering" and, moments
later, "answers again".
"""

import pytest

from fabrik_ros.servo_io.bus_line import BUS_OPTIONS
from fabrik_ros.servo_io.bus_silence import BUS_QUIET_S, SILENT_AFTER_S
from fabrik_ros.servo_io.protocols.dialect import BUS_PROTOCOLS, Protocol
from test.servo_io.bus_wire import BUSES as WIRES
from test.servo_io.bus_wire import BusWire, IDS

BUSES = pytest.mark.parametrize('protocol', BUS_PROTOCOLS, ids=lambda p: p.value)


def _stall(wire: BusWire, start_s: float, length_s: float):
    """Return a ``delay`` under which the bus answers nothing from ``start_s`` for ``length_s``.

    What it was asked meanwhile it answers when it resumes, as a preempted thread does.
    """
    def delay(reply: bytes) -> float:
        return max(0.0, start_s + length_s - wire.now) if wire.now >= start_s else 0.0
    return delay


@BUSES
@pytest.mark.parametrize('stall_s', [0.1, 0.12, 0.3])
def test_a_bus_that_stalls_for_a_moment_is_not_named_silent(protocol, stall_s):
    """Twice the longest stall the tester saw; longer ones outlast three requests in a row."""
    wire = BusWire(protocol)
    wire.connect()
    wire.scheduler.set_torque(True)
    wire.run_for(0.2)
    assert wire.scheduler.admitted() == IDS
    wire.scheduler.take_notices()
    assert stall_s > 2 * BUS_OPTIONS.reply_timeout_s
    wire.delay = _stall(wire, wire.now, stall_s)
    wire.run_for(0.5)
    assert wire.count.timeouts >= 1, 'the stall was seen'
    assert wire.scheduler.take_notices() == [], 'nobody was named silent, nor back'
    assert all(c.silent_since_s is None for c in wire.scheduler.conditions().values())
    assert wire.scheduler.admitted() == IDS
    assert all(wire.servo(servo_id).torque for servo_id in IDS)
    assert wire.scheduler.positions.stamp_s >= wire.now - 0.03


@BUSES
def test_a_servo_that_stays_silent_is_still_named_within_the_silence_window(protocol):
    wire = BusWire(protocol)
    wire.connect()
    wire.run_for(0.2)
    wire.scheduler.take_notices()
    wire.servo(4).silent = True
    went_s = wire.now
    while wire.scheduler.conditions()[4].silent_since_s is None:
        assert wire.now < went_s + SILENT_AFTER_S + 0.1, 'named within the window and a ping'
        wire.run_for(0.005)
    notices = [str(n) for n in wire.scheduler.take_notices()]
    assert len(notices) == 1 and notices[0].startswith('servo id 4: stopped answering'), notices


@BUSES
def test_a_bus_where_no_servo_answers_any_more_names_them_all(protocol):
    wire = BusWire(protocol)
    wire.connect()
    wire.run_for(0.2)
    wire.scheduler.take_notices()
    went_s = wire.now
    for servo_id in IDS:
        wire.servo(servo_id).silent = True      # the servos' supply cut
    wire.run_for(BUS_QUIET_S / 2)
    assert wire.scheduler.take_notices() == [], 'a quiet bus may be a stalled host, not yet'
    while any(c.silent_since_s is None for c in wire.scheduler.conditions().values()):
        assert wire.now < went_s + BUS_QUIET_S + 0.3, 'named soon after the window'
        wire.run_for(0.01)
    notices = [str(n) for n in wire.scheduler.take_notices()]
    assert len(notices) == len(IDS), notices
    assert all('no servo on the bus answered either' in n for n in notices), notices


@BUSES
def test_a_late_answer_does_not_pass_for_the_next_request(protocol):
    """Servo 2's answer to its model-number read comes just after the reply timeout.

    Before, the retry's answer then came during the next read (the limits) and was taken
    for it: a reply of the wrong length, and servo 2's admission ended there, neither
    admitted nor silent.
    """
    late = {'done': False}
    make_codec = WIRES[protocol][0]

    def delay(reply: bytes) -> float:
        codec = make_codec()
        codec.feed(reply)
        status = codec.take_status()
        if status is None or status.id != 2 or len(status.params) != 2 or late['done']:
            return 0.0
        late['done'] = True
        return BUS_OPTIONS.reply_timeout_s + 0.0005
    wire = BusWire(protocol, delay=delay)
    wire.connect()
    wire.run_for(0.3)
    assert late['done'] and wire.count.timeouts == 1
    assert wire.scheduler.admitted() == IDS
    assert wire.scheduler.limits()[2] == wire.scheduler.limits()[1]


def test_the_reply_deadline_starts_at_the_write_not_when_the_request_was_taken():
    """A thread preempted between taking a request and writing it must not lose its answer."""
    wire = BusWire(Protocol.FEETECH)
    wire.connect()
    wire.run_for(0.2)
    scheduler = wire.scheduler
    away_s = 2 * BUS_OPTIONS.reply_timeout_s
    while scheduler.in_flight() or wire.replies:
        wire.run_for(0.0005)
    while True:                                 # up to the next request that expects answers
        wire.now = max(wire.now + 0.0001, scheduler.wake_at(wire.now))
        data = scheduler.next_write(wire.now)
        if data is not None and scheduler.in_flight():
            break
        if data is not None:
            wire._send(data)
    wire.now += away_s                          # the thread was away before writing
    scheduler.written(wire.now)
    wire._send(data)
    timeouts = wire.count.timeouts
    wire.run_for(0.01)
    assert wire.count.timeouts == timeouts, 'answered within its time after the write'
    assert not scheduler.in_flight()
