"""A simulated servo board on a pseudo-terminal, for tests, benchmarks and hardware-free demos.

:class:`SimBoard` opens ``os.openpty()``, optionally puts a symlink in front of the terminal
(like ``/dev/serial/by-id/...``) and answers on it from a thread, speaking the native protocol
(hardware/PROTOCOL.md), the SSC-32U or the Maestro protocol, or as a bus of Feetech STS
servos (``feetech_bus.py``). It can be unplugged and replugged behind the same symlink, fall
silent, and corrupt bytes, to exercise the link's recovery.

A pty has no baud rate: bytes move as fast as the kernel copies them. With ``baud`` set (the
default, 115200; 1 Mbaud on a servo bus) the board models the line instead: it takes in and sends
out at most ``baud / 10`` bytes per second (11.52 bytes per ms at 115200), so a host that writes
faster than a real line would carry is throttled as on hardware. The two directions are
independent, as on a UART: a chunk from the host is handed to the firmware once its last byte has
arrived, and a reply reaches the host once its last byte has been sent, while the board goes on
reading. A pty has no DTR line either, so the board cannot see the host open the port and reset
itself; ``boot_delay_s`` models the Arduino bootloader after :meth:`SimBoard.start`,
:meth:`SimBoard.replug` and :meth:`SimBoard.reset`.

``cli.py`` (the ``sim_device`` command) runs one from the command line. Instruments (the
reliability tests' tapped board, the latency benchmark's timed board) subclass it and override
its hooks, :meth:`SimBoard.on_plugged` to :meth:`SimBoard.on_thread_start`; nothing else of
the board is meant to be overridden.
"""

from collections import deque
from collections.abc import Callable
import os
import random
import select
import threading
import time
import tty
from typing import Optional

from fabrik_ros.boardsim.board_firmware import SimFirmware
from fabrik_ros.boardsim.bus_firmware import BusFirmware
from fabrik_ros.boardsim.dynamixel_bus import DynamixelBusFirmware
from fabrik_ros.boardsim.feetech_bus import FeetechBusFirmware
from fabrik_ros.boardsim.link_claim import check_folder, LinkClaim
from fabrik_ros.boardsim.maestro_board import MaestroFirmware
from fabrik_ros.boardsim.native_board import NativeFirmware
from fabrik_ros.boardsim.servo_model import ServoModel
from fabrik_ros.boardsim.ssc32_board import Ssc32Firmware
from fabrik_ros.servo_io.protocols.dialect import Protocol

_FIRMWARE = {Protocol.NATIVE: (NativeFirmware, 'fabrik-sim'),
             Protocol.SSC32: (Ssc32Firmware, 'SSC32-V2.50USB'),
             Protocol.MAESTRO: (MaestroFirmware, 'maestro-sim'),
             Protocol.FEETECH: (FeetechBusFirmware, 'STS3215'),
             Protocol.DYNAMIXEL: (DynamixelBusFirmware, 'XL430-W250')}
SIMULATED_PROTOCOLS = tuple(_FIRMWARE)
PROTOCOL_BAUD = -1       # ``baud`` default: 1 Mbaud on a servo bus, 115200 on a PWM board
_CHUNK = 64              # bytes taken from the pty per step, so line throttling stays smooth
_TICK_S = 0.002          # longest the board thread sleeps without checking its timers


class SimBoard:
    """A simulated board answering on a pty from a background thread.

    :param protocol: what the board speaks.
    :param channels: number of servo outputs.
    :param link_path: optional symlink created to point at the pty; an old symlink is
        replaced, but not one a live board claims (see link_claim.py), and the board removes
        the link on stop only while it still points at its pty.
    :param baud: modelled line speed [bit/s]; None = as fast as the pty goes; by default the
        protocol's factory rate (1,000,000 for bus servos, else 115200).
    :param speed_us_per_s: fastest an output may change (a slow servo); None = no cap.
    :param boot_delay_s: time after (re)start during which input is ignored (bootloader).
    :param corrupt_rate: probability that any byte, in either direction, has one bit flipped.
    :param seed: seed of the corruption RNG.
    :param clock: monotonic clock [s].

    Set ``silent = True`` to make the board stop answering (it still reads and drops input);
    ``firmware`` is the simulated firmware (``firmware.model`` holds the outputs, limits and
    enable bits) for tests that need to look deeper or to arrange a fault.
    """

    def __init__(self, protocol: Protocol = Protocol.NATIVE, *, channels: int = 6,
                 link_path: Optional[str] = None, baud: Optional[int] = PROTOCOL_BAUD,
                 speed_us_per_s: Optional[float] = None, boot_delay_s: float = 0.0,
                 corrupt_rate: float = 0.0, seed: int = 0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not 0.0 <= corrupt_rate <= 1.0:
            raise ValueError(f'corrupt_rate = {corrupt_rate!r}, must be within [0, 1]')
        self.protocol = Protocol(protocol)
        self.channels = channels
        self.link_path = link_path
        if baud == PROTOCOL_BAUD:
            baud = 1_000_000 if self.protocol.is_bus else 115200
        self.baud = baud
        self.boot_delay_s = boot_delay_s
        self.corrupt_rate = corrupt_rate
        self.speed_us_per_s = speed_us_per_s
        self._rng = random.Random(seed)
        self._clock = clock
        self._cv = threading.Condition()
        self._stopping = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._claim: Optional[LinkClaim] = None
        self._master = -1
        self._slave = -1
        self._wake_r = self._wake_w = -1
        self._actions: list[tuple[Callable[[], None], threading.Event]] = []
        self.pty_path = ''
        self.silent = False
        self.bytes_received = 0
        self.bytes_sent = 0
        self.boots = 0
        self._rx_free_at = 0.0
        self._tx_free_at = 0.0
        # Bytes on the modelled line, each with when its last byte is through [s]; a board
        # unplugged or reset loses them.
        self._inbox: deque[tuple[float, bytes]] = deque()
        self._outbox: deque[tuple[float, bytes]] = deque()
        self._boot_at = 0.0
        self._booted_at: Optional[float] = None
        self.firmware = self._new_firmware(self._new_model())

    def _new_model(self) -> ServoModel:
        return ServoModel(self.channels, speed_us_per_s=self.speed_us_per_s,
                          on_move=self.on_move)

    def _new_firmware(self, model: ServoModel) -> SimFirmware:
        kind, name = _FIRMWARE[self.protocol]
        return kind(model, name)

    # -- hooks for instruments: each runs on the board thread; the defaults do nothing -------

    def on_thread_start(self) -> None:
        """Run first on the board thread (to raise its priority, say)."""

    def on_plugged(self) -> None:
        """Run after a new pty is plugged in (at start and on every replug)."""

    def on_step(self, plugged: bool) -> None:
        """Run at every step of the board thread; ``plugged`` is False while unplugged."""

    def on_host_bytes(self, data: bytes, first_byte_s: float) -> None:
        """See the bytes the host wrote, as written, and when the first one arrived [s]."""

    def on_exchange(self, delivered: bytes, reply: bytes) -> None:
        """See what the firmware got (after line corruption) and what it answered (before)."""

    def on_move(self, channel: int, start_us: float, target_us: int, at_s: float,
                rate_us_per_s: float) -> None:
        """See every move an output starts (rate inf = a jump); see :class:`ServoModel`."""

    def outgoing(self, data: bytes) -> bytes:
        """Return the bytes to put on the line for a reply (``data``, as the line left it)."""
        return data

    # -- life cycle -------------------------------------------------------------------------

    @property
    def path(self) -> str:
        """Return the path a host should open: the symlink if there is one, else the pty."""
        return self.link_path or self.pty_path

    def start(self) -> 'SimBoard':
        """Open the pty (and symlink) and start answering.

        :raises FileExistsError: if ``link_path`` exists and is not a symlink (never replaced).
        :raises LinkClaimError: (an OSError) if its folder is missing or a live board claims it.
        """
        link = self.link_path
        if link:
            check_folder(link)
        if link and os.path.lexists(link) and not os.path.islink(link):
            raise FileExistsError(f'link_path = {link!r} exists and is not a symlink, '
                                  'must be a free name or an old symlink')
        if link:
            self._claim = LinkClaim(link).acquire()
        self._wake_r, self._wake_w = os.pipe()
        self._plug()
        self._thread = threading.Thread(target=self._run, name=f'SimBoard {self.protocol.name}',
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread, close the pty and remove the symlink."""
        self._stopping.set()
        if self._thread is not None:
            os.write(self._wake_w, b'x')
            self._thread.join(2.0)
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._thread = None
        self._unplug()
        if self._claim is not None:
            self._claim.release()
            self._claim = None

    def __enter__(self) -> 'SimBoard':
        """Start the board."""
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        """Stop the board."""
        self.stop()

    def _in_thread(self, action: Callable[[], None]) -> None:
        """Run ``action`` on the board thread, which owns the fds (here if it is not running)."""
        thread = self._thread
        if thread is None or not thread.is_alive() or thread is threading.current_thread():
            action()
            return
        done = threading.Event()
        with self._cv:
            self._actions.append((action, done))
        os.write(self._wake_w, b'x')
        done.wait()

    def unplug(self) -> None:
        """Pull the cable: close the pty (the host's reads fail) and remove the symlink."""
        self._in_thread(self._unplug)

    def _unplug(self) -> None:
        with self._cv:
            for fd in (self._master, self._slave):
                if fd >= 0:
                    os.close(fd)
            self._master = self._slave = -1
            self._booted_at = None
            self._inbox.clear()
            self._outbox.clear()
            if self.link_path and self._links_here():
                os.unlink(self.link_path)
            self._cv.notify_all()

    def _links_here(self) -> bool:
        """Return whether ``link_path`` is still this board's symlink to its pty."""
        try:
            return os.readlink(self.link_path or '') == self.pty_path
        except OSError:
            return False

    def replug(self) -> None:
        """Plug in again: a new pty behind the same symlink, and a power-cycled board.

        The native firmware keeps its limits (the Uno stores them in EEPROM); everything else
        starts from reset.
        """
        self._in_thread(self._replug)

    def _replug(self) -> None:
        self._unplug()
        self._power_cycle()
        self._plug()

    def reset(self) -> None:
        """Reboot the board on the same pty (brown-out): state lost, READY sent again."""
        self._in_thread(self._reset)

    def _reset(self) -> None:
        with self._cv:
            self._power_cycle()
            self._booted_at = None
            self._boot_at = self._clock() + self.boot_delay_s
        self._step(self._master, False)

    def _power_cycle(self) -> None:
        """Replace the firmware by a fresh one; the native board keeps its EEPROM limits.

        Bus servos have their own supply: the adapter restarts, the servos stay as they were.
        """
        with self._cv:
            if isinstance(self.firmware, BusFirmware):
                self.firmware.replugged()
            else:
                model = self._new_model()
                if self.protocol is Protocol.NATIVE:
                    model.limits = list(self.firmware.model.limits)
                self.firmware = self._new_firmware(model)
            self._inbox.clear()
            self._outbox.clear()

    def _plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        with self._cv:
            self._master, self._slave = master, slave
            self.pty_path = os.ttyname(slave)
            self._boot_at = self._clock() + self.boot_delay_s
            self._booted_at = None
        if self.link_path:
            temporary = f'{self.link_path}.{os.getpid()}.tmp'
            if os.path.lexists(temporary):
                os.unlink(temporary)
            os.symlink(self.pty_path, temporary)
            os.replace(temporary, self.link_path)
        self.on_plugged()
        self._step(master, False)    # without a boot delay, READY goes out before anyone reads

    # -- what the board does ---------------------------------------------------------------

    def pulses(self) -> tuple[int, ...]:
        """Return what each output pin emits now [µs]; 0 = nothing (detached or unset pin)."""
        with self._cv:
            return tuple(self.firmware.model.outputs(self._clock()))

    def positions(self) -> tuple[int, ...]:
        """Return each channel's current pulse whether it is enabled or not [µs, 0 = unset]."""
        with self._cv:
            return tuple(self.firmware.model.positions(self._clock()))

    def targets(self) -> tuple[int, ...]:
        """Return each channel's target [µs, 0 = unset]."""
        with self._cv:
            model = self.firmware.model
            return tuple(model.target(ch) for ch in range(self.channels))

    @property
    def enabled(self) -> tuple[bool, ...]:
        """Return which channels pulse."""
        with self._cv:
            mask = self.firmware.model.enabled_mask
        return tuple(bool(mask >> ch & 1) for ch in range(self.channels))

    @property
    def limits(self) -> tuple[tuple[int, int], ...]:
        """Return each channel's ``(min_us, max_us)``."""
        with self._cv:
            return tuple(self.firmware.model.limits)

    def wait_until(self, condition: Callable[['SimBoard'], bool], timeout_s: float) -> bool:
        """Return True as soon as ``condition(board)`` holds, False after ``timeout_s``."""
        end = self._clock() + timeout_s
        while not condition(self):
            left = end - self._clock()
            if left <= 0:
                return False
            with self._cv:
                self._cv.wait(min(left, 0.01))
        return True

    # -- board thread -------------------------------------------------------------------------

    def _run(self) -> None:
        self.on_thread_start()
        while not self._stopping.is_set():
            with self._cv:
                master = self._master
                actions, self._actions = self._actions, []
            for action, done in actions:
                action()
                done.set()
            if actions:
                continue
            readable = [self._wake_r] + ([master] if master >= 0 else [])
            ready, _, _ = select.select(readable, [], [], self._wait_s())
            if self._wake_r in ready:
                os.read(self._wake_r, 64)
            self._step(master, master in ready)

    def _wait_s(self) -> float:
        """Return how long the board thread may wait for input: until bytes on the line are due."""
        due = [queue[0][0] for queue in (self._inbox, self._outbox) if queue]
        return min([_TICK_S] + [max(0.0, at - self._clock()) for at in due])

    def _step(self, master: int, readable: bool) -> None:
        self.on_step(master >= 0)
        if master < 0:
            return
        data = self._read(master) if readable else b''
        if data:
            self._line_in(data)
        for at, chunk in self._arrived() or [(self._clock(), b'')]:
            self._take(master, chunk, at)
        self._send_due(master)

    def _take(self, master: int, data: bytes, arrived: float) -> None:
        """Let the firmware run at ``arrived`` [s] and receive ``data``; queue its reply."""
        if data:
            byte_s = 10.0 / self.baud if self.baud else 0.0
            self.on_host_bytes(data, arrived - (len(data) - 1) * byte_s)
        with self._cv:
            if master != self._master:
                return
            if self._booted_at is None:
                reply = self._boot(arrived)      # input during boot is lost, as on the Uno
            else:
                self.firmware.tick(arrived)
                reply = b''
                if data and not self.silent:
                    delivered = self._corrupt(data)
                    reply = self.firmware.receive(delivered, arrived)
                    self.on_exchange(delivered, reply)
            self._cv.notify_all()
        if reply and not self.silent:
            self._line_out(self.outgoing(self._corrupt(reply)))

    def _boot(self, now: float) -> bytes:
        if now < self._boot_at:
            return b''
        self._booted_at = now
        self.boots += 1
        return self.firmware.boot(now)

    def _read(self, master: int) -> bytes:
        try:
            data = os.read(master, _CHUNK)
        except OSError:
            return b''      # no host on the other end (EIO) or nothing after all
        self.bytes_received += len(data)
        return data

    def _line_in(self, data: bytes) -> None:
        """Put bytes read from the host on the modelled line, behind those still arriving."""
        self._rx_free_at = self._line_end(self._rx_free_at, data)
        self._inbox.append((self._rx_free_at, data))

    def _arrived(self) -> list[tuple[float, bytes]]:
        """Take the chunks whose last byte has arrived, each with when it did [s]."""
        now, taken = self._clock(), []
        while self._inbox and self._inbox[0][0] <= now:
            taken.append(self._inbox.popleft())
        return taken

    def _line_out(self, data: bytes) -> None:
        """Put a reply on the modelled line; it reaches the host when its last byte is sent."""
        self._tx_free_at = self._line_end(self._tx_free_at, data)
        self._outbox.append((self._tx_free_at, data))

    def _send_due(self, master: int) -> None:
        """Write to the host the replies whose last byte has been sent by now.

        A board fallen silent meanwhile sends nothing more, not even what it had begun.
        """
        now = self._clock()
        while self._outbox and self._outbox[0][0] <= now:
            _, data = self._outbox.popleft()
            if self.silent:
                continue
            try:
                self.bytes_sent += os.write(master, data)
            except OSError:
                pass            # host gone or its buffer full: the bytes are lost, as on a wire

    def _line_end(self, free_at: float, data: bytes) -> float:
        """Return when ``data`` is through a line that is free from ``free_at`` [s]."""
        now = self._clock()
        if not self.baud:
            return now
        return max(free_at, now) + len(data) * 10.0 / self.baud

    def _corrupt(self, data: bytes) -> bytes:
        if not self.corrupt_rate:
            return data
        out = bytearray(data)
        for index in range(len(out)):
            if self._rng.random() < self.corrupt_rate:
                out[index] ^= 1 << self._rng.randrange(8)
        return bytes(out)
