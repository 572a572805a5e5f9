"""One request at a time on a half-duplex servo bus: its write, its answers, late answers.

The host and the servos share one wire: while servos answer, the host must not write. So a
request that expects answers keeps the line until they are all in or its deadline passes.
The deadline runs from the request's write (:meth:`BusExchange.written`), not from when the
I/O thread took it, so a thread preempted in between does not judge on-time answers late.

Status packets carry no sequence number, so a late answer could pass for the next request's.
Two rules keep them apart: after a timeout the line stays quiet for ``DRAIN_S`` and whatever
arrives meanwhile is dropped (the makers' SDKs clear the port before each packet for the same
reason), and an answer whose length is not the one the request asked for is dropped. The
servos that missed a request are counted by :mod:`fabrik_ros.servo_io.bus_silence`.
"""

from collections.abc import Mapping
import math
from typing import Optional

from fabrik_ros.servo_io.bus_reports import Notice
from fabrik_ros.servo_io.bus_requests import Request, ServoRecord
from fabrik_ros.servo_io.bus_silence import missed
from fabrik_ros.servo_io.link_options import LinkOptions
from fabrik_ros.servo_io.link_stats import Counters
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec, StatusPacket

# After a timeout the line stays quiet this long, and whatever arrives meanwhile (a late
# answer) is dropped: two 1 ms USB frames, for bytes already in the adapter.
DRAIN_S = 0.002


class BusExchange:
    """The request on the line, when the line is free again, and the answers that close it.

    :param codec: the protocol's packets (its receive buffer is fed by the link)
    :param servos: what is known of each servo, by id (errors and misses are noted there)
    :param options: baud (line time of each byte), reply timeout, ``lost_after``
    :param counters: statistics, updated in place
    :param notices: where a servo named silent is appended
    """

    def __init__(self, codec: BusCodec, servos: Mapping[int, ServoRecord],
                 options: LinkOptions, counters: Counters, notices: list[Notice]) -> None:
        self.codec = codec
        self.options = options
        self.count = counters
        self._servos = servos
        self._notices = notices
        self._byte_s = 10.0 / options.baud
        self.flight: Optional[Request] = None      # the request whose answers are awaited
        self.line_free_s = 0.0                     # when the line carries nothing more
        self._unwritten: Optional[Request] = None  # handed out, its write not yet reported
        self._drain = False                        # quiet after a timeout (``DRAIN_S``)
        self._answered_s = -math.inf               # the latest request any servo answered

    def reset(self, now_s: float) -> None:
        """Start over on a new connection: nothing on the line, nothing received."""
        self.flight = self._unwritten = None
        self._drain = False
        self._answered_s = -math.inf
        self.codec.clear()
        self.line_free_s = now_s

    def free(self, now_s: float) -> bool:
        """Return True if a request may be written now; a drain that ended clears the codec."""
        if self.flight is not None or now_s < self.line_free_s:
            return False
        if self._drain:
            self._drain = False
            self.codec.clear()          # a late answer's first bytes, the rest to come
        return True

    def note_write(self, data: bytes, now_s: float) -> None:
        """Account for bytes on the line (also the handshake's pings, written by the link)."""
        self.line_free_s = max(self.line_free_s, now_s) + len(data) * self._byte_s
        self.count.frames_sent += 1
        self.count.bytes_sent += len(data)

    def send(self, request: Request, now_s: float) -> bytes:
        """Put ``request`` on the line now; return its bytes, which the caller must write."""
        self.note_write(request.data, now_s)
        request.sent_s = now_s
        if request.expect:
            answers_s = request.answer_bytes * self._byte_s
            request.deadline_s = self.line_free_s + answers_s + self.options.reply_timeout_s
            self.flight = request
        elif request.done is not None:
            request.done({}, now_s)
        self._unwritten = request
        return request.data

    def written(self, now_s: float) -> None:
        """Note that the bytes :meth:`send` handed out last went out at ``now_s``.

        The line, and the answers' deadline, run from then.
        """
        request, self._unwritten = self._unwritten, None
        if request is None or now_s <= request.sent_s:
            return
        if request.expect and request is not self.flight:
            return                      # answered already: the line is free
        delay = now_s - request.sent_s
        self.line_free_s += delay
        if request is self.flight:
            request.sent_s = now_s
            request.deadline_s += delay

    def received(self, now_s: float) -> None:
        """Take the statuses the codec has recognised; those nobody asked for are dropped."""
        while (status := self.codec.take_status()) is not None:
            flight = self.flight
            if flight is None or not self._answers(flight, status):
                continue
            servo = self._servos[status.id]
            self.count.acks += 1
            self.count.rtts.append(now_s - flight.sent_s)
            self._answered_s = max(self._answered_s, flight.sent_s)
            servo.error = status.error
            servo.misses = 0
            flight.statuses[status.id] = status
            if len(flight.statuses) == len(flight.expect):
                self._finish(flight, now_s)

    def expire(self, now_s: float) -> None:
        """Close a request whose answers are late; the servos that missed it are counted."""
        flight = self.flight
        if flight is None or now_s < flight.deadline_s:
            return
        self.count.timeouts += 1
        self._drain = True
        self.line_free_s = max(self.line_free_s, now_s + DRAIN_S)
        for servo_id in flight.expect:
            if servo_id not in flight.statuses:
                notice = missed(self._servos[servo_id], flight.sent_s, now_s,
                                lost_after=self.options.lost_after,
                                answered_s=self._answered_s)
                if notice is not None:
                    self._notices.append(notice)
        self._finish(flight, now_s)

    @staticmethod
    def _answers(flight: Request, status: StatusPacket) -> bool:
        """Return True if ``status`` is one the request on the line still waits for.

        An answer of another length is another request's, late; an error may come bare.
        """
        if status.id not in flight.expect or status.id in flight.statuses:
            return False            # nobody asked (a late answer, an echo)
        return len(status.params) == flight.params or bool(status.error and not status.params)

    def _finish(self, flight: Request, now_s: float) -> None:
        self.flight = self._unwritten = None
        self.line_free_s = max(self.line_free_s, now_s)
        if flight.done is not None:
            flight.done(flight.statuses, now_s)
