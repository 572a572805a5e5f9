"""BusExchange: one request on the line, its deadline from the write, late answers kept apart."""

import pytest

from fabrik_ros.servo_io.bus_exchange import BusExchange, DRAIN_S
from fabrik_ros.servo_io.bus_line import BUS_OPTIONS
from fabrik_ros.servo_io.bus_requests import Request, ServoRecord
from fabrik_ros.servo_io.link_stats import Counters
from fabrik_ros.servo_io.protocols.bus_codec import StatusPacket
from fabrik_ros.servo_io.protocols.dialect import BUS_PROTOCOLS, Protocol
from test.servo_io.bus_wire import BUSES as WIRES

BUSES = pytest.mark.parametrize('protocol', BUS_PROTOCOLS, ids=lambda p: p.value)
ADDRESS = 56                    # any register; the servo side is played by hand here


class _Line:
    """A BusExchange for servo 1 and the answers each request got."""

    def __init__(self, protocol: Protocol) -> None:
        make_codec, table, _ = WIRES[protocol]
        self.codec = make_codec()
        self.exchange = BusExchange(self.codec, {1: ServoRecord(1, table)}, BUS_OPTIONS,
                                    Counters(), [])
        self.answers: list[dict[int, StatusPacket]] = []

    def read(self, now_s: float, size: int = 2) -> Request:
        """Put a read of ``size`` bytes of servo 1 on the line at ``now_s``."""
        request = Request('read', self.codec.read(1, ADDRESS, size), (1,),
                          self.codec.status_size(size), params=size,
                          done=lambda statuses, stamp_s: self.answers.append(dict(statuses)))
        assert self.exchange.free(now_s)
        self.exchange.send(request, now_s)
        return request

    def answer(self, value: int, now_s: float, size: int = 2) -> None:
        """Let servo 1's answer carrying ``value`` arrive at ``now_s``."""
        self.codec.feed(self.codec.status(1, 0, value.to_bytes(size, 'little')))
        self.exchange.received(now_s)

    def first_free_s(self, from_s: float) -> float:
        """Return the first 0.1 ms step from ``from_s`` on which the line is free."""
        now_s = from_s
        while not self.exchange.free(now_s):
            now_s += 0.0001
        return now_s

    def values(self) -> list[int]:
        return [int.from_bytes(statuses[1].params, 'little') for statuses in self.answers
                if 1 in statuses]


@BUSES
def test_a_late_answer_during_the_drain_is_not_taken_for_the_next_request(protocol):
    line = _Line(protocol)
    first = line.read(0.0)
    line.exchange.expire(first.deadline_s)
    assert line.answers == [{}], 'timed out'
    line.answer(111, first.deadline_s + 0.0005)             # the first read's, late
    again_s = line.first_free_s(first.deadline_s)
    assert again_s >= first.deadline_s + DRAIN_S - 1e-9, 'the line stays quiet meanwhile'
    line.read(again_s)
    line.answer(222, again_s + 0.0003)
    assert line.values() == [222]


@BUSES
def test_the_first_bytes_of_a_late_answer_are_dropped_when_the_drain_ends(protocol):
    line = _Line(protocol)
    first = line.read(0.0)
    line.exchange.expire(first.deadline_s)
    late = line.codec.status(1, 0, (111).to_bytes(2, 'little'))
    line.codec.feed(late[:3])                               # the rest is still in the adapter
    again_s = line.first_free_s(first.deadline_s)
    line.read(again_s)
    line.codec.feed(late[3:])
    line.answer(222, again_s + 0.0003)
    assert line.values() == [222]


@BUSES
def test_an_answer_of_another_length_is_another_requests_and_is_dropped(protocol):
    line = _Line(protocol)
    request = line.read(0.0, size=2)
    line.answer(7, 0.0002, size=4)                          # a late answer to a longer read
    assert line.exchange.flight is request and line.answers == []
    line.answer(222, 0.0003)
    assert line.values() == [222]


def test_the_answers_deadline_runs_from_the_write_not_from_the_take():
    line = _Line(Protocol.FEETECH)
    request = line.read(0.0)
    taken_deadline_s = request.deadline_s
    line.exchange.written(0.05)                             # the thread was away meanwhile
    line.exchange.expire(taken_deadline_s)
    assert line.exchange.flight is request, 'still within its time from the write'
    assert request.deadline_s == pytest.approx(taken_deadline_s + 0.05)
    assert line.exchange.line_free_s > 0.05
