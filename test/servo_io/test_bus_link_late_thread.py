"""BusLink when its I/O thread is late: answers already in the port are not judged late.

On a loaded host the link's thread can be away for longer than the reply timeout (34 ms)
right after reading the first part of an answer, while the rest already waits in the
port. A live SO-101 run (web_view + servo_driver + the simulated Feetech bus) showed what
followed: servos named "stopped answering" and "answers again", over and over. Here the
adapter is a fake whose servos (the Feetech simulator's firmware) answer at once; the
answer to a sync read arrives in two packets, and the test's clock jumps past the reply
timeout right after the link reads the first, as a preempted thread sees it.
"""

import threading
import time

import pytest

from fabrik_ros.boardsim.feetech_bus import FeetechBusFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.servo_io import Protocol
from fabrik_ros.servo_io.bus_line import BUS_OPTIONS
from fabrik_ros.servo_io.bus_link import BusLink
from fabrik_ros.servo_io.protocols.bus_codec import Instruction
from test.polling import poll

IDS = (1, 2, 3, 4, 5, 6)
FIRST_PACKET = 16           # bytes of the first packet of an answer: two Feetech statuses
AWAY_S = 2 * BUS_OPTIONS.reply_timeout_s


class _LateThreadAdapter:
    """A bus adapter (pyserial's interface) whose servos answer the moment a request is written.

    A sync read's answer comes in two packets: the first ``FIRST_PACKET`` bytes, then the
    rest, which has arrived by the time the first is read; reading the first moves ``clock``
    on by ``AWAY_S`` (the thread was preempted right after that read).
    """

    def __init__(self, clock: '_JumpingClock') -> None:
        self._clock = clock
        self._firmware = FeetechBusFirmware(ServoModel(len(IDS)), 'sim')
        self._cv = threading.Condition()
        self._inbox = bytearray()
        self._held = 0          # bytes of the inbox not yet arrived (the second packet)
        self.split_answers = 0

    @property
    def in_waiting(self) -> int:
        with self._cv:
            return len(self._inbox) - self._held

    out_waiting = 0

    def write(self, data: bytes) -> int:
        reply = self._firmware.receive(bytes(data), time.monotonic())
        with self._cv:
            if len(reply) > FIRST_PACKET and bytes(data)[4] == Instruction.SYNC_READ:
                self._held = len(reply) - FIRST_PACKET
            self._inbox += reply
            self._cv.notify_all()
        return len(data)

    def read(self, size: int) -> bytes:
        with self._cv:
            self._cv.wait_for(lambda: len(self._inbox) > self._held, 0.01)
            size = min(size, len(self._inbox) - self._held)
            data = bytes(self._inbox[:size])
            del self._inbox[:size]
            if self._held and len(self._inbox) == self._held:
                self._held = 0                  # the second packet came meanwhile
                self.split_answers += 1
                self._clock.jump(AWAY_S)        # ... while this thread was away
            return data

    def cancel_read(self) -> None:
        with self._cv:
            self._cv.notify_all()

    def close(self) -> None:
        pass


class _JumpingClock:
    """A monotonic clock that a preempted thread's absence moves on at once."""

    def __init__(self) -> None:
        self._offset = 0.0
        self._lock = threading.Lock()

    def jump(self, seconds: float) -> None:
        with self._lock:
            self._offset += seconds

    def __call__(self) -> float:
        with self._lock:
            return time.monotonic() + self._offset


@pytest.mark.timeout(20)
def test_answers_waiting_in_the_port_are_taken_before_a_request_is_judged_late():
    clock = _JumpingClock()
    adapter = _LateThreadAdapter(clock)
    link = BusLink('loop://late-thread', protocol=Protocol.FEETECH, ids=IDS,
                   serial_factory=lambda path, baud, write_timeout_s: adapter, clock=clock)
    with link:
        assert link.wait_ready(5.0) == IDS
        # Ten sync reads, each read by a thread away AWAY_S after the first packet.
        first = adapter.split_answers
        assert poll(lambda: adapter.split_answers >= first + 10, 5.0)
        notices = [str(notice) for notice in link.take_notices()]
        assert link.admitted() == IDS, notices
        assert not [n for n in notices if 'stopped answering' in n], notices
        assert link.stats().timeouts == 0
