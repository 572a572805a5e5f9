"""A device on a real pty that is not the board the host expects.

That is what a wrong baud rate, a board in another serial mode or another device on the port
looks like to the link. It either streams seeded random bytes whatever it is sent, or
answers each request with what ``respond`` returns for it (a plausible but wrong version
line, an error register no board has, positions no board reports). Also runnable as a
script for trying servo_driver by hand: ``python -m test.servo_io.impostor --seed 7``
prints the pty path and streams until Ctrl-C.
"""

import argparse
from collections.abc import Callable
import os
import random
import select
import signal
import threading
import tty
from typing import Optional

from fabrik_ros.servo_io.protocols import maestro, ssc32

Respond = Callable[[bytes], bytes]      # bytes received -> bytes to answer (b'' = nothing)


class PtyImpostor:
    """Serve one pty from a thread: random bytes (``seed``) or answers (``respond``).

    :param seed: stream ``chunk`` random bytes every ``period_s`` from ``random.Random(seed)``
    :param respond: called with each read of the host's bytes; its result is written back
    :param chunk: bytes per random burst (64 every 5 ms is about 115200 baud)
    :param period_s: time between random bursts [s]
    """

    def __init__(self, *, seed: Optional[int] = None, respond: Optional[Respond] = None,
                 chunk: int = 64, period_s: float = 0.005) -> None:
        self._rng = random.Random(seed) if seed is not None else None
        self._respond = respond
        self._chunk = chunk
        self._period_s = period_s
        self._stop = threading.Event()
        master, self._slave = os.openpty()
        tty.setraw(self._slave)
        os.set_blocking(master, False)
        self._master = master
        self.path = os.ttyname(self._slave)
        self.received = bytearray()          # everything the host wrote
        self.sent = 0                        # bytes written to the host
        self._thread = threading.Thread(target=self._run, name='PtyImpostor', daemon=True)

    def start(self) -> 'PtyImpostor':
        """Start serving the pty."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and close the pty."""
        self._stop.set()
        self._thread.join(2.0)
        os.close(self._master)
        os.close(self._slave)

    def __enter__(self) -> 'PtyImpostor':
        """Start serving."""
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        """Stop serving."""
        self.stop()

    def _run(self) -> None:
        while not self._stop.is_set():
            readable, _, _ = select.select([self._master], [], [], self._period_s)
            if readable:
                try:
                    data = os.read(self._master, 4096)
                except OSError:
                    data = b''
                self.received += data
                if data and self._respond is not None:
                    self._write(self._respond(data))
            if self._rng is not None:
                self._write(self._rng.randbytes(self._chunk))

    def _write(self, data: bytes) -> None:
        try:
            self.sent += os.write(self._master, data)
        except (BlockingIOError, OSError):
            pass          # nobody reads: the pty's buffer is full, as a real line drops bytes


def answering_ssc32(version: bytes, pulse_byte: int = 150) -> Respond:
    """Answer VER with ``version`` and every QP with ``pulse_byte``, as a board would."""
    decoder = ssc32.Ssc32CommandDecoder()

    def respond(data: bytes) -> bytes:
        answer = b''
        for command in decoder.feed(data):
            if isinstance(command, ssc32.Version):
                answer += version
            elif isinstance(command, ssc32.QueryPulseWidths):
                answer += bytes([pulse_byte] * len(command.channels))
        return answer
    return respond


def answering_maestro(errors: int, position_quarters: int = 6000) -> Respond:
    """Answer Get Errors with ``errors`` and every Get Position with ``position_quarters``."""
    decoder = maestro.MaestroCommandDecoder()

    def respond(data: bytes) -> bytes:
        answer = b''
        for command in decoder.feed(data):
            if command.command == maestro.GET_ERRORS:
                answer += maestro.encode_u16(errors)
            elif command.command == maestro.GET_POSITION:
                answer += maestro.encode_u16(position_quarters)
        return answer
    return respond


def main() -> None:
    """Stream random bytes on a pty until Ctrl-C (for trying servo_driver by hand)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument('--seed', type=int, default=7, help='random seed')
    parser.add_argument('--link', help='also put a symlink to the pty here')
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)   # kill: remove the link too
    with PtyImpostor(seed=args.seed) as impostor:
        if args.link:
            os.symlink(impostor.path, args.link)
        print(args.link or impostor.path, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
        finally:
            if args.link:
                os.unlink(args.link)


if __name__ == '__main__':
    main()
