"""BusLink against the simulated Feetech and Dynamixel buses on real ptys."""

from dataclasses import replace
import re
import threading
import time

import pytest

from fabrik_ros.boardsim.feetech_bus import FeetechBusFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io import LinkState, LinkTimeout, Protocol
from fabrik_ros.servo_io.bus_line import BUS_OPTIONS
from fabrik_ros.servo_io.bus_link import BusLink
from fabrik_ros.servo_io.protocols.dialect import BUS_PROTOCOLS
from test.polling import poll

IDS = (1, 2, 3, 4, 5, 6)
# A reply timeout far above a pty's latency on a busy machine; short back-off for the replug.
FAST = replace(BUS_OPTIONS, reply_timeout_s=0.1, handshake_timeout_s=0.5, backoff_min_s=0.02,
               backoff_max_s=0.1, path_check_s=0.05)
BUSES = pytest.mark.parametrize('protocol', BUS_PROTOCOLS, ids=lambda p: p.value)


@pytest.fixture
def bus_link():
    """Return a factory ``(board, **options) -> BusLink`` started on the board's symlink."""
    links = []

    def start(board, **options):
        options.setdefault('options', FAST)
        link = BusLink(board.path, protocol=board.protocol, ids=options.pop('ids', IDS),
                       **options).start()
        links.append(link)
        return link

    yield start
    for link in links:
        link.close()


def _now(board):
    return time.monotonic()


def _place(board, servo_id, count):
    """Leave a servo standing at ``count`` with its goal register there (no command pending)."""
    bus = board.firmware
    with bus.lock:
        servo = bus.servo(servo_id)
        goal = servo.table.goal_position
        servo.write(goal.address, goal.encode(count), _now(board))
        servo.move_by_hand(count, _now(board))


def _counts(link, servo_id):
    positions = link.positions()
    return None if positions is None else positions.counts.get(servo_id)


def _present(board, servo_id):
    with board.firmware.lock:
        return round(board.firmware.servo(servo_id).present(_now(board)))


@pytest.mark.timeout(20)
@BUSES
def test_start_reads_where_the_servos_stand_and_moves_none_of_them(sim_board, bus_link,
                                                                   protocol):
    board = sim_board(protocol)
    for servo_id, count in zip(IDS, (300, 900, 1500, 2100, 2700, 3300), strict=True):
        _place(board, servo_id, count)
    link = bus_link(board)
    link.set_goals({servo_id: 2048 for servo_id in IDS})   # before anything was read: dropped
    assert link.wait_ready(3.0) == IDS
    assert poll(lambda: link.positions() is not None and len(link.positions().counts) == 6)
    assert dict(link.positions().counts) == dict(zip(IDS, (300, 900, 1500, 2100, 2700, 3300),
                                                     strict=True))
    link.torque(True)
    link.sync(2.0)
    assert [_present(board, i) for i in IDS] == [300, 900, 1500, 2100, 2700, 3300]
    assert board.firmware.torques() == [True] * 6
    link.set_goals({1: 400}, move_s=0.0)
    assert poll(lambda: _present(board, 1) == 400)
    assert poll(lambda: _counts(link, 1) == 400)
    assert link.board == ('STS3215 x6' if protocol is Protocol.FEETECH else 'XL430-W250 x6')


@pytest.mark.timeout(20)
@BUSES
def test_limit_registers_are_read_at_connect(sim_board, bus_link, protocol):
    board = sim_board(protocol)
    with board.firmware.lock:
        servo = board.firmware.servo(5)
        table = servo.table
        servo.write(table.min_position_limit.address, table.min_position_limit.encode(144), 0.0)
        servo.write(table.max_position_limit.address, table.max_position_limit.encode(3953), 0.0)
    link = bus_link(board)
    link.wait_ready(3.0)
    assert link.limits()[5] == (144, 3953) and link.limits()[1] == (0, 4095)


@pytest.mark.timeout(20)
@BUSES
def test_limp_move_by_hand_and_attach_again_without_a_jump(sim_board, bus_link, protocol):
    board = sim_board(protocol)
    link = bus_link(board)
    link.wait_ready(3.0)
    link.torque(True)
    link.sync(2.0)
    link.torque(False)
    link.sync(2.0)
    assert board.firmware.torques() == [False] * 6
    with board.firmware.lock:
        board.firmware.move_by_hand(3, 3500, _now(board))
    assert poll(lambda: _counts(link, 3) == 3500), 'a limp arm still reports its positions'
    link.torque(True)
    link.sync(2.0)
    assert board.firmware.torques() == [True] * 6
    assert _present(board, 3) == 3500, 're-attached where the hand left it'
    link.set_goals({3: 3400})
    assert poll(lambda: _present(board, 3) == 3400)


@pytest.mark.timeout(20)
@BUSES
def test_error_bits_and_readings_reach_the_health(sim_board, bus_link, protocol):
    board = sim_board(protocol)
    link = bus_link(board)
    link.wait_ready(3.0)
    with board.firmware.lock:
        servo = board.firmware.servo(4)
        servo.error_bits = 0x20 if protocol is Protocol.FEETECH else 0x24
        servo.heat.ambient_c = servo.temperature_c = 58.0     # steady: a hot enclosure
    assert poll(lambda: 'overload' in link.health()[4].error_words
                and link.health()[4].temperature_c == 58.0)
    assert link.health()[2].error_words == ()


@pytest.mark.timeout(20)
@BUSES
def test_a_silent_servo_is_named_and_the_others_keep_going(sim_board, bus_link, protocol):
    board = sim_board(protocol)
    link = bus_link(board)
    link.wait_ready(3.0)
    link.torque(True)
    link.sync(2.0)
    link.take_notices()
    with board.firmware.lock:
        board.firmware.servo(2).silent = True
    assert poll(lambda: link.health()[2].silent_since_s is not None)
    assert link.admitted() == (1, 3, 4, 5, 6)
    link.set_goals({1: 1000, 6: 3000})
    assert poll(lambda: _counts(link, 1) == 1000 and _counts(link, 6) == 3000)
    assert any('servo id 2: stopped answering' in str(notice) for notice in link.take_notices())
    with board.firmware.lock:
        board.firmware.servo(2).silent = False
    assert poll(lambda: link.admitted() == IDS)
    assert link.health()[2].silent_since_s is None


@pytest.mark.timeout(30)
@BUSES
def test_corrupted_bytes_are_skipped_and_the_goals_still_arrive(sim_board, bus_link, protocol):
    board = sim_board(protocol, corrupt_rate=0.002, seed=3)
    link = bus_link(board)
    link.wait_ready(5.0)
    link.torque(True)
    link.sync(5.0)
    link.set_goals({servo_id: 1000 + 300 * servo_id for servo_id in IDS})
    expected = [1000 + 300 * servo_id for servo_id in IDS]
    assert poll(lambda: [_present(board, i) for i in IDS] == expected, 10.0)
    assert poll(lambda: link.codec_counts()['bad checksums']
                + link.codec_counts()['garbage bytes'] > 0, 10.0)
    assert poll(lambda: link.positions() is not None
                and [link.positions().counts.get(i) for i in IDS] == expected, 5.0)


@pytest.mark.timeout(20)
@BUSES
def test_unplug_and_replug_reconnect_and_read_before_any_goal(sim_board, bus_link, protocol):
    board = sim_board(protocol)
    link = bus_link(board)
    link.wait_ready(3.0)
    link.torque(True)
    link.set_goals({1: 1200})
    assert poll(lambda: _present(board, 1) == 1200)
    board.unplug()
    assert poll(lambda: link.state is not LinkState.READY)
    link.set_goals({1: 3000})                 # while the cable is out: stale by the replug
    with board.firmware.lock:
        board.firmware.move_by_hand(4, 2500, _now(board))
    board.replug()
    assert poll(lambda: link.state is LinkState.READY and link.admitted() == IDS)
    assert link.stats().reconnects == 1
    assert poll(lambda: _counts(link, 1) == 1200)
    assert _present(board, 1) == 1200, 'the goal from before the replug is not written'
    link.set_goals({1: 1300})
    assert poll(lambda: _present(board, 1) == 1300)


def test_a_bus_where_nobody_answers_is_refused_with_the_likely_causes(sim_board, bus_link):
    board = sim_board(Protocol.FEETECH)
    link = bus_link(board, ids=(11, 12))
    with pytest.raises(LinkTimeout):
        link.wait_ready(1.0)
    assert poll(lambda: link.last_error is not None)
    message = str(link.last_error)
    assert 'no feetech servo answered a ping (ids [11, 12], 1000000 baud)' in message
    assert 'likely' in message and 'servo supply off' in message


def test_a_pwm_protocol_and_bad_goals_are_refused_by_name():
    with pytest.raises(ValueError, match="protocol = 'native', must be a bus protocol"):
        BusLink('/dev/null/never', protocol=Protocol.NATIVE, ids=IDS)
    link = BusLink('/dev/null/never', protocol=Protocol.FEETECH, ids=IDS)
    with pytest.raises(ValueError, match=r'move_s = 70.0, must be within \[0, 65.535\]'):
        link.set_goals({1: 100}, 70.0)
    with pytest.raises(ValueError, match='goal for servo id 9'):
        link.set_goals({9: 100})


@pytest.mark.timeout(20)
@BUSES
def test_the_servos_named_at_ready_are_all_that_answered_not_the_admitted_so_far(sim_board,
                                                                                protocol):
    """The driver logs ``board connected: <board>`` at READY, while admission has just begun.

    It said "STS3215 x3" on a six-servo bus: the models of the servos admitted so far.
    """
    board = sim_board(protocol)
    at_ready = []
    link = BusLink(board.path, protocol=protocol, ids=IDS, options=FAST,
                   on_state=lambda state: state is LinkState.READY and at_ready.append(
                       link.board))
    with link:
        link.wait_ready(3.0)
        assert at_ready == [f'6 of 6 {protocol.value} servos answered the ping '
                            '(ids 1 2 3 4 5 6)']
        assert re.fullmatch(r'\S+ x6', link.board), link.board
        with board.firmware.lock:
            board.firmware.servo(4).silent = True
        assert poll(lambda: link.health()[4].silent_since_s is not None)
        assert re.fullmatch(r'\S+ x5 \(silent: id 4\)', link.board), link.board


class _InstantBus:
    """A bus adapter (pyserial's interface) whose servos answer at once; it notes read waits."""

    out_waiting = 0

    def __init__(self) -> None:
        self._firmware = FeetechBusFirmware(ServoModel(len(IDS)), 'sim')
        self._cv = threading.Condition()
        self._inbox = bytearray()
        self._cancelled = False
        self.timeout = 0.01
        self.waits: list[float] = []        # the timeout of each read that found nothing

    @property
    def in_waiting(self) -> int:
        with self._cv:
            return len(self._inbox)

    def write(self, data: bytes) -> int:
        reply = self._firmware.receive(bytes(data), time.monotonic())
        with self._cv:
            self._inbox += reply
            self._cv.notify_all()
        return len(data)

    def read(self, size: int) -> bytes:
        with self._cv:
            if not self._inbox:
                self.waits.append(self.timeout)
            self._cv.wait_for(lambda: self._inbox or self._cancelled, self.timeout)
            self._cancelled = False
            data = bytes(self._inbox[:size])
            del self._inbox[:size]
            return data

    def cancel_read(self) -> None:
        with self._cv:
            self._cancelled = True
            self._cv.notify_all()

    def close(self) -> None:
        pass


@pytest.mark.timeout(20)
def test_an_idle_link_sleeps_in_the_port_until_it_has_something_to_do():
    """With nothing due the I/O thread waits for bytes or its next timer, not in short slices."""
    adapter = _InstantBus()
    link = BusLink('loop://instant', protocol=Protocol.FEETECH, ids=IDS,
                   options=replace(BUS_OPTIONS, poll_hz=0.0), telemetry_hz=0.0,
                   serial_factory=lambda path, baud, write_timeout_s: adapter)
    with link:
        assert link.wait_ready(5.0) == IDS
        assert poll(lambda: adapter.waits and adapter.waits[-1] > 0.5), adapter.waits[-5:]


@pytest.mark.timeout(20)
def test_a_dynamixel_servo_in_overload_shutdown_is_rebooted_and_admitted_anew_holding(
        sim_board, bus_link):
    board = sim_board(Protocol.DYNAMIXEL)
    link = bus_link(board)
    link.wait_ready(3.0)
    link.torque(True)
    link.sync(2.0)
    with board.firmware.lock:
        board.firmware.servo(3).error_bits = 0x20       # overload: in Shutdown(63)
    assert poll(lambda: not board.firmware.torques()[2]), 'the shutdown leaves it limp'
    assert poll(lambda: link.health()[3].hardware_errors == ('overload',), timeout_s=10.0)
    with board.firmware.lock:
        board.firmware.move_by_hand(3, 3100, _now(board))
    assert link.take_admitted() == {}
    assert link.reboot([3]) == (3,)
    assert poll(lambda: board.firmware.torques() == [True] * 6), 'torque on again'
    assert poll(lambda: 3 in link.take_admitted())
    assert _present(board, 3) == 3100, 'held where it stood'
    assert link.health()[3].hardware_errors == ()
    link.set_goals({3: 3000})
    assert poll(lambda: _present(board, 3) == 3000), 'and takes goals again'


@pytest.mark.timeout(20)
def test_feetech_servos_cannot_be_rebooted_and_say_why(sim_board, bus_link):
    board = sim_board(Protocol.FEETECH)
    link = bus_link(board)
    link.wait_ready(3.0)
    assert 'factory reset' in link.reboot_refusal
    with pytest.raises(ValueError) as refused:
        link.reboot([3])
    assert str(refused.value) == link.reboot_refusal


@pytest.mark.timeout(20)
@BUSES
def test_one_servo_kept_limp_on_the_wire_while_the_others_hold(sim_board, bus_link, protocol):
    board = sim_board(protocol)
    link = bus_link(board)
    link.wait_ready(3.0)
    link.torque(True)
    link.limp(3, True)
    bus = board.firmware

    def torques():
        with bus.lock:
            return [bus.servo(i).torque for i in IDS]

    assert poll(lambda: torques() == [i != 3 for i in IDS]), torques()
    _place(board, 3, 1500)          # limp: it stays where the hand put it
    assert poll(lambda: _counts(link, 3) == 1500), 'its position is still reported'
    link.set_goals({3: 2500, 4: 2500})
    assert poll(lambda: _counts(link, 4) == 2500)
    assert _counts(link, 3) == 1500 and torques()[2] is False
