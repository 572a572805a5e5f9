"""Run the Uno firmware in simavr and watch its servo pins, for tests, demos and launch files.

:class:`SimavrBoard` starts ``hardware/build/fabrik_servo_sim`` (hardware/sim/), which runs
``fabrik_servo_bridge.elf`` on a simulated ATmega328P with UART0 on a pseudo-terminal. A host
opens :attr:`SimavrBoard.port` at 115200 baud exactly as it would a real Uno. Every servo pin
edge, every byte on the serial line and a 10 ms heartbeat come back with simulated-cycle
timestamps, so pulse widths and frame periods are measured in simulated time, however fast
or slow the host machine is. Received bytes and heartbeats also carry the host's monotonic
clock at the moment the simulation took them (:attr:`LineByte.host_s`, :meth:`clock`), which
ties host-side events to simulated time (bench/pin_latency.py).

>>> build_hardware()                                            # doctest: +SKIP
>>> with SimavrBoard() as board, ServoLink(board.port) as link:  # doctest: +SKIP
...     link.wait_ready(5.0)
...     link.set_pulses([1500] * 6)
...     link.enable([True] * 6)
...     board.wait_for(lambda: board.pulses(0), 5.0, 'a pulse on channel 0')
...     board.pulses(0)[-1].width_us
1500.0
"""

from collections.abc import Callable
from dataclasses import dataclass
import fcntl
import os
from pathlib import Path
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from typing import IO, Optional

# The firmware sources live beside the package in a source checkout; elsewhere (an installed
# package) FABRIK_ROS_HARDWARE_DIR names the hardware/ folder of a checkout.
HARDWARE_DIR = Path(os.environ.get('FABRIK_ROS_HARDWARE_DIR',
                                   Path(__file__).resolve().parents[2] / 'hardware'))
BUILD_DIR = HARDWARE_DIR / 'build'
FIRMWARE_ELF = BUILD_DIR / 'fabrik_servo_bridge.elf'
HARNESS = BUILD_DIR / 'fabrik_servo_sim'
F_CPU_HZ = 16_000_000
CHANNELS = 6
FRAME_PERIOD_S = 0.020
# What building and simulating needs (Debian: gcc-avr avr-libc simavr libsimavr-dev libelf-dev).
_TOOLS = ('make', 'cc', 'avr-gcc', 'avr-g++', 'avr-objcopy', 'avr-size')
_FILES = ('/usr/include/simavr/sim_avr.h', '/usr/include/simavr/parts/uart_pty.h',
          '/usr/lib/avr/include/avr/io.h', '/usr/include/libelf.h')


class HarnessError(RuntimeError):
    """The firmware did not build, or the simulator did not start or died."""


def missing_prerequisites() -> list[str]:
    """Return the tools and headers that building and simulating needs but are absent."""
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    return missing + [path for path in _FILES if not Path(path).exists()]


def build_hardware(*targets: str) -> None:
    """Run ``make -C hardware`` (default: firmware, harness and host tests).

    :raises HarnessError: with make's output if the build fails.
    """
    command = ['make', '-C', str(HARDWARE_DIR), *(targets or ('all',))]
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    # Two processes building at once (the test suite's two workers, a demo beside a test run)
    # would write the same objects: one builds, the other then finds everything current.
    with open(BUILD_DIR / '.build.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise HarnessError(f'{" ".join(command)} failed:\n{result.stdout}\n{result.stderr}')


@dataclass(frozen=True)
class Pulse:
    """One complete high pulse on a servo pin."""

    channel: int
    rise_s: float      # simulated time of the rising edge [s]
    width_us: float    # high time [µs]


@dataclass(frozen=True)
class LineByte:
    """One byte on the serial line, with the simulated time it crossed [s].

    ``host_s`` is ``time.monotonic()`` when the simulation took a received byte, None for
    a sent one (the host reads those whenever it reads).
    """

    time_s: float
    value: int
    host_s: Optional[float] = None


class SimavrBoard:
    """The firmware running in simavr, its pty, and everything measured on its pins.

    A reader thread drains the harness log as it comes (the harness would stall on a full
    pipe); the measurement methods return snapshots and :meth:`wait_for` blocks on it.

    :param speed: simulated seconds per real second (1.0 = real time, so a host's timeouts
        mean what they say; 0 = as fast as the machine allows).
    :param eeprom_path: EEPROM image loaded at start (if the file exists) and saved at stop,
        so stored limits survive a restart; None = erased EEPROM, not saved.
    :param duration_s: stop on its own after this much simulated time; None = run until
        :meth:`stop`.
    :param pty_link: also make this symlink to the pty (a fixed name for launch files).
    :param elf: firmware to run.
    :param harness: the simulator harness built from hardware/sim/.
    """

    def __init__(self, *, speed: float = 1.0, eeprom_path: Optional[Path] = None,
                 duration_s: Optional[float] = None, pty_link: Optional[str] = None,
                 elf: Path = FIRMWARE_ELF, harness: Path = HARNESS) -> None:
        if speed < 0:
            raise ValueError(f'speed = {speed!r}, must be >= 0')
        self.speed = speed
        self.eeprom_path = eeprom_path
        self.duration_s = duration_s
        self.pty_link = pty_link
        self.elf = elf
        self.harness = harness
        self.port = ''
        self._log = _HarnessLog()
        self._changed = threading.Condition()
        self._process: Optional[subprocess.Popen[bytes]] = None
        self._reader: Optional[threading.Thread] = None
        self._stderr: Optional[IO[bytes]] = None

    # -- life cycle ------------------------------------------------------------------------

    def start(self, timeout_s: float = 10.0) -> str:
        """Start the simulator; return the pty path once it is there.

        :raises HarnessError: if the harness is not built or does not come up in time.
        """
        if not self.harness.exists() or not self.elf.exists():
            raise HarnessError(f'{self.harness} or {self.elf} missing: run make -C hardware all')
        command = [str(self.harness), '--speed', repr(self.speed)]
        if self.eeprom_path is not None:
            command += ['--eeprom', str(self.eeprom_path)]
        if self.duration_s is not None:
            command += ['--duration-ms', str(round(self.duration_s * 1000))]
        if self.pty_link is not None:
            command += ['--pty-link', self.pty_link]
        self._stderr = tempfile.TemporaryFile()
        # A session of its own: a Ctrl-C meant for the host's process group must not end the
        # board before the host has left the servos in their final state; stop() ends it. A
        # host killed outright takes it along: its next 10 ms heartbeat on the pipe nobody
        # reads ends it (SIGPIPE, which Popen restores to its default for the harness).
        self._process = subprocess.Popen(command + [str(self.elf)], stdout=subprocess.PIPE,
                                         stderr=self._stderr, start_new_session=True)
        self._reader = threading.Thread(target=self._read, name='fabrik_servo_sim log',
                                        daemon=True)
        self._reader.start()
        try:
            self.wait_for(lambda: self._log.port, timeout_s, 'the pty line')
        except (TimeoutError, HarnessError):
            self.stop()
            raise
        self.port = self._log.port
        return self.port

    def stop(self, timeout_s: float = 5.0) -> None:
        """End the simulation (saving the EEPROM) and collect what it logged last."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if self._reader is not None:
            self._reader.join(timeout_s)
        if self._stderr is not None:
            self._stderr.close()
        self._process = None

    def __enter__(self) -> 'SimavrBoard':
        """Start the simulator."""
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop the simulator."""
        self.stop()

    def reset(self) -> None:
        """Reset the AVR, as the DTR pulse of a real Uno's USB-serial chip does."""
        if self._process is None:
            raise HarnessError('reset: the simulator is not running')
        self._process.send_signal(signal.SIGUSR1)

    # -- measurements (snapshots) ----------------------------------------------------------------

    @property
    def pid(self) -> Optional[int]:
        """Return the simulator's process id while it runs (to give it a scheduling class)."""
        return None if self._process is None else self._process.pid

    @property
    def now_s(self) -> float:
        """Return the latest simulated time the log has reached [s]."""
        return self._log.now_s

    @property
    def high_mask(self) -> int:
        """Return the pins that were high at the last 10 ms heartbeat (bit i = channel i)."""
        return self._log.high_mask

    @property
    def longest_high_ticks(self) -> int:
        """Return the most heartbeats in a row any pin stayed high (a pulse spans at most 1)."""
        return self._log.longest_high_ticks

    @property
    def reset_times_s(self) -> list[float]:
        """Return when each reset (:meth:`reset`) happened [s, simulated]."""
        with self._changed:
            return list(self._log.reset_times_s)

    @property
    def received(self) -> list[LineByte]:
        """Return the bytes the board received from the host so far."""
        with self._changed:
            return list(self._log.received)

    @property
    def sent(self) -> list[LineByte]:
        """Return the bytes the board sent to the host so far."""
        with self._changed:
            return list(self._log.sent)

    def clock(self) -> list[tuple[float, float]]:
        """Return (simulated s, host ``time.monotonic()`` s) pairs, one per 10 ms heartbeat.

        Their slope is the simulation's speed against the host clock; their scatter about it
        is how unevenly the simulation runs (it runs ahead in bursts, then is held back).
        """
        with self._changed:
            return list(self._log.clock)

    def pulses(self, channel: Optional[int] = None, since_s: float = 0.0) -> list[Pulse]:
        """Return the complete pulses of one channel (or all) rising at or after ``since_s``."""
        with self._changed:
            return [pulse for pulse in self._log.pulses
                    if (channel is None or pulse.channel == channel) and pulse.rise_s >= since_s]

    def held_pulses(self) -> list[int]:
        """Return each channel's latest pulse width [µs, rounded], 0 for a pin gone quiet.

        A pin is quiet when it has not pulsed within the last two 20 ms frames of simulated
        time, which is what a detached channel looks like on a real Uno.
        """
        with self._changed:
            since_s = self._log.now_s - 2 * FRAME_PERIOD_S
            held = [0] * CHANNELS
            for pulse in reversed(self._log.pulses):
                if pulse.rise_s < since_s:
                    break
                if not held[pulse.channel]:
                    held[pulse.channel] = round(pulse.width_us)
            return held

    def wait_for(self, condition: Callable[[], object], timeout_s: float, what: str) -> None:
        """Block until ``condition()`` is true, re-checking it whenever the log grows.

        :raises TimeoutError: naming ``what`` if that takes longer than ``timeout_s`` (real).
        :raises HarnessError: if the simulator ends first.
        """
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not condition():
                if self._log.ended is not None:
                    raise HarnessError(f'fabrik_servo_sim ended ({self._log.ended}) before '
                                       f'{what}: {self.stderr_text()}')
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f'{what} not seen within {timeout_s} s '
                                       f'(simulated time {self.now_s:.3f} s)')
                self._changed.wait(left)

    def wait_sim_time(self, time_s: float, timeout_s: float) -> None:
        """Block until the simulation has passed ``time_s`` of simulated time [s]."""
        self.wait_for(lambda: self.now_s >= time_s, timeout_s, f'simulated time {time_s:.3f} s')

    def stderr_text(self) -> str:
        """Return what the simulator wrote to stderr so far (for failure messages)."""
        if self._stderr is None or self._stderr.closed:
            return ''
        self._stderr.seek(0)
        return self._stderr.read().decode(errors='replace')

    def _read(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        with process.stdout:
            for line in process.stdout:
                with self._changed:
                    self._log.take(line.decode('ascii', 'replace').split())
                    self._changed.notify_all()
        with self._changed:
            if self._log.ended is None:
                self._log.ended = f'exit status {process.wait()}'
            self._changed.notify_all()


class _HarnessLog:
    """What the harness has logged so far (see hardware/sim/fabrik_servo_sim.c)."""

    def __init__(self) -> None:
        self.port = ''
        self.now_s = 0.0
        self.reset_times_s: list[float] = []
        self.ended: Optional[str] = None
        self.pulses: list[Pulse] = []
        self.received: list[LineByte] = []
        self.sent: list[LineByte] = []
        self.clock: list[tuple[float, float]] = []
        self.high_mask = 0
        self.longest_high_ticks = 0
        self._high_run = [0] * CHANNELS

    def take(self, words: list[str]) -> None:
        """Take one log line, split into words."""
        if not words or words[0] == '#':
            return
        kind = words[0]
        if kind == 'pty':
            self.port = words[1]
            return
        self.now_s = max(self.now_s, int(words[-1 if kind == 'pulse' else 1]) / F_CPU_HZ)
        if kind == 'pulse':
            channel, rise, fall = (int(word) for word in words[1:])
            self.pulses.append(Pulse(channel, rise / F_CPU_HZ, (fall - rise) * 1e6 / F_CPU_HZ))
        elif kind == 'rx':
            self.received.append(LineByte(int(words[1]) / F_CPU_HZ, int(words[2], 16),
                                          int(words[3]) / 1e9))
        elif kind == 'tx':
            self.sent.append(LineByte(int(words[1]) / F_CPU_HZ, int(words[2], 16)))
        elif kind == 'tick':
            self._heartbeat(int(words[2]))
            self.clock.append((self.now_s, int(words[3]) / 1e9))
        elif kind == 'reset':
            self.reset_times_s.append(self.now_s)
        elif kind == 'end':
            self.ended = words[2]

    def _heartbeat(self, mask: int) -> None:
        """Track pins that stay high across heartbeats: a pulse never lasts 10 ms."""
        self.high_mask = mask
        for channel in range(CHANNELS):
            self._high_run[channel] = self._high_run[channel] + 1 if mask >> channel & 1 else 0
        self.longest_high_ticks = max(self.longest_high_ticks, *self._high_run)
