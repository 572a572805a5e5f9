"""servo_driver on a port that is not the board: refused in one escaped line (issue 22.2).

Each test runs the servo_driver console script as a process against a real pty that streams
seeded random bytes (what a wrong baud rate or another device on the port looks like), reads
its console until the refusal is logged, stops it, and checks what reached the console: the
refusal names the likely cause, nothing says the board connected or the arm moves, and no
byte outside printable ASCII (a device byte printed raw) appears on stdout or stderr.
"""

import os
from pathlib import Path
import signal
import subprocess
import sys
import threading
import time

import pytest

from test.nodes.conftest import ARM_CONFIG
from test.servo_io.impostor import answering_maestro, answering_ssc32, PtyImpostor

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]

BIN = Path(sys.executable).parent
REFUSALS = {
    'ssc32': ('refused, no SSC-32U: ', 'an SSC-32U ships at 9600 baud'),
    'maestro': ('refused, no Pololu Maestro: ', 'USB Dual Port serial mode'),
    'native': ('no NATIVE board answered within 3.0 s', 'no NATIVE board answered'),
}
WAIT_S = 30.0


class Console:
    """Collect a process's stdout and stderr as bytes; wait for a phrase on stderr."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.out = bytearray()
        self.err = bytearray()
        self._changed = threading.Condition()
        self._readers = [threading.Thread(target=self._read, args=(stream, buffer), daemon=True)
                         for stream, buffer in ((process.stdout, self.out),
                                                (process.stderr, self.err))]
        for reader in self._readers:
            reader.start()

    def _read(self, stream, buffer: bytearray) -> None:
        for chunk in iter(lambda: stream.read1(4096), b''):
            with self._changed:
                buffer += chunk
                self._changed.notify_all()

    def wait_for(self, phrase: bytes, timeout_s: float) -> bool:
        """Return True once ``phrase`` is on stderr, False after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while phrase not in self.err:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return True

    def join(self) -> None:
        """Wait until both streams are closed."""
        for reader in self._readers:
            reader.join(10.0)


def _drive(protocol: str, port: str, *extra: str,
           phrase: bytes = b'') -> tuple[int, bytes, bytes, bool]:
    """Run servo_driver until it logs ``phrase`` (or WAIT_S passes), then Ctrl-C it.

    ``phrase`` defaults to the refusal of ``protocol``.
    """
    args = [str(BIN / 'servo_driver'), '--ros-args', '--params-file', str(ARM_CONFIG),
            '-p', f'port:={port}', '-p', f'protocol:={protocol}', *extra]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=_environment())
    console = Console(process)
    try:
        seen = console.wait_for(phrase or REFUSALS[protocol][0].encode(), WAIT_S)
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(20.0)
        console.join()
    return code, bytes(console.out), bytes(console.err), seen


def _environment() -> dict:
    return {**os.environ, 'RCUTILS_COLORIZED_OUTPUT': '0'}


def _raw_bytes(data: bytes) -> list[int]:
    """Return the bytes that are neither printable ASCII nor a line feed."""
    return sorted({byte for byte in data if not (0x20 <= byte <= 0x7E or byte == 0x0A)})


@pytest.mark.parametrize('protocol, seed', [('ssc32', 5), ('maestro', 6), ('native', 7)])
def test_random_bytes_on_the_port_are_refused_in_one_escaped_line(protocol, seed):
    with PtyImpostor(seed=seed) as impostor:
        code, out, err, seen = _drive(protocol, impostor.path)
    text = err.decode('ascii', 'replace')
    assert seen, f'no refusal logged within {WAIT_S} s:\n{text}'
    assert _raw_bytes(out + err) == [], 'device bytes reached the console unescaped'
    lines = [line for line in text.splitlines() if REFUSALS[protocol][0] in line]
    assert lines[0].startswith('[WARN]') and REFUSALS[protocol][1] in lines[0], lines[0]
    assert len(lines[0]) < 800
    assert 'board connected:' not in text and 'moving home over' not in text, text
    assert code == 0, text


@pytest.mark.parametrize('protocol, respond, pose', [
    ('ssc32', answering_ssc32(b'SSC32-V2.50USB\r', 255), 'an unknown'),
    ('ssc32', answering_ssc32(b'SSC32-V2.50USB\r', 150), 'the reported'),
    ('maestro', answering_maestro(0, 0xFFFF), 'an unknown'),
    ('maestro', answering_maestro(0, 6000), 'the reported')],
    ids=['ssc32-2550us', 'ssc32-1500us', 'maestro-0xffff', 'maestro-1500us'])
def test_the_safe_start_never_begins_from_a_pose_the_board_cannot_report(protocol, respond,
                                                                         pose):
    """2550 µs on an SSC-32U, a position beyond 14 bits on a Maestro: the pose is unknown."""
    with PtyImpostor(respond=respond) as impostor:
        code, out, err, seen = _drive(protocol, impostor.path, phrase=b'board ready: moving home')
    text = err.decode('ascii', 'replace')
    assert seen, f'no safe start logged within {WAIT_S} s:\n{text}'
    [line] = [line for line in text.splitlines() if 'board ready: moving home' in line]
    assert line.endswith(f' s from {pose} pose'), line


def test_a_servo_beyond_the_boards_channels_stops_the_driver_naming_its_key():
    result = subprocess.run(
        [str(BIN / 'servo_driver'), '--ros-args', '--params-file', str(ARM_CONFIG),
         '-p', 'servos.elbow.channel:=40', '-p', 'port:=/nonexistent'],
        capture_output=True, text=True, timeout=WAIT_S, check=False, env=_environment())
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-1].endswith(
        ' cannot start: servos.elbow.channel = 40, the native board drives channels 0..7 '
        '(protocol native)'), result.stderr
