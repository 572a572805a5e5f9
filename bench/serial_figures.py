"""Serial figures in the results schema, measured with serial_bench's functions.

Per protocol: bytes of one 6-servo pulse command on the wire (host → board, plus the board's
answer where the protocol has one), the line limit those bytes imply at 115200 baud, and the
command rate that actually reaches the simulated board through ServoLink when commands are
offered far faster than the line carries them.
"""

from pathlib import Path
import sys
import tempfile

sys.path.insert(0, str(Path(__file__).resolve().parent))

import serial_bench  # noqa: E402

from fabrik_ros.servo_io import Protocol, PWM_PROTOCOLS  # noqa: E402


def command_sizes() -> dict[str, dict]:
    """Return serial_bench's byte counts of the plain pulse command of each protocol.

    The first entry per protocol in serial_bench is the command ServoLink sends for a move.
    """
    sizes = serial_bench.command_bytes()
    chosen = {}
    for kind in PWM_PROTOCOLS:
        name = next(n for n in sizes if n.split()[0] == kind.value)
        chosen[kind.value] = {'command': name, **sizes[name]}
    return chosen


def run(*, quick: bool = False) -> dict:
    """Measure every protocol; keys are the protocol names."""
    seconds = 0.3 if quick else 3.0
    out = {}
    with tempfile.TemporaryDirectory() as directory:
        for kind, size in command_sizes().items():
            total = size['to_board'] + size['to_host']
            rate = serial_bench.max_rate(Protocol(kind), seconds, directory)
            out[kind] = {'command': size['command'], 'bytes_per_command': total,
                         'bytes_to_board': size['to_board'], 'bytes_to_host': size['to_host'],
                         'line_limit_hz': serial_bench.line_limit_hz(size),
                         'max_rate_hz': rate['writes_per_s'],
                         'coalesced_fraction': rate['coalesced_fraction']}
        rtt = serial_bench.round_trip(seconds, directory, serial_bench.BAUD)
    out['native']['ack_round_trip_median_ms'] = rtt['median_ms']
    out['native']['ack_round_trip_p99_ms'] = rtt['p99_ms']
    return out


def print_table(report: dict) -> None:
    """Print one line per protocol."""
    print(f'serial at {serial_bench.BAUD} baud, one {serial_bench.CHANNELS}-servo pulse command')
    print(f'{"protocol":9} {"bytes":>5} {"line limit":>11} {"reached board":>14}  command')
    for kind, f in report.items():
        print(f'{kind:9} {f["bytes_per_command"]:5d} {f["line_limit_hz"]:8.0f} Hz '
              f'{f["max_rate_hz"]:11.0f} Hz  {f["command"]}')
