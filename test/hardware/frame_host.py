"""A host end of the board protocol on a real serial port, one request at a time, for tests."""

from collections.abc import Callable
from typing import Optional

import serial

from fabrik_ros.servo_io.deadline import Deadline
from fabrik_ros.servo_io.protocols.native import Frame, FrameDecoder

BAUD = 115200


class FrameHost:
    """Send protocol v1 frames (built by ``servo_io.protocols.native``) and read replies.

    :param path: the board's serial device (here: a simavr pty).
    """

    def __init__(self, path: str) -> None:
        self.serial = serial.Serial(path, BAUD, timeout=0.02)
        self.decoder = FrameDecoder()
        self.frames: list[Frame] = []    # every frame received, in order
        self.bytes_sent = 0
        self._seq = 0

    def next_seq(self) -> int:
        """Return the next sequence number (1, 2, ... 255, 0, 1, ...)."""
        self._seq = (self._seq + 1) % 256
        return self._seq

    def send(self, data: bytes) -> None:
        """Write raw bytes: frames, garbage, anything."""
        self.serial.write(data)
        self.serial.flush()
        self.bytes_sent += len(data)

    def request(self, frame: bytes, timeout_s: float = 2.0) -> Frame:
        """Send one request frame and return the reply carrying its SEQ.

        :raises TimeoutError: if no such reply arrives within ``timeout_s``.
        """
        seq = frame[3]
        seen = len(self.frames)
        self.send(frame)
        return self.wait_frame(lambda f: f.seq == seq, timeout_s, seen)

    def wait_frame(self, match: Callable[[Frame], bool], timeout_s: float,
                   seen: Optional[int] = None) -> Frame:
        """Return the first frame after the first ``seen`` ones for which ``match`` is true.

        :raises TimeoutError: if none arrives within ``timeout_s``.
        """
        start = len(self.frames) if seen is None else seen
        deadline = Deadline(timeout_s)
        while True:
            for frame in self.frames[start:]:
                if match(frame):
                    return frame
            start = len(self.frames)
            if deadline.expired():
                raise TimeoutError(f'no matching frame within {timeout_s} s '
                                   f'(received {self.frames[-3:]})')
            # Block for the first byte only, then take whatever else has arrived.
            self.frames.extend(self.decoder.feed(self.serial.read(self.serial.in_waiting or 1)))

    def close(self) -> None:
        """Close the port."""
        self.serial.close()
