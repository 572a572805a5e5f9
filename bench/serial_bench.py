"""Benchmark the serial bridge: bytes per command, command rate at 115200 baud, ack round trip.

Runs ServoLink against SimBoard on a pty. A pty has no baud rate, so the simulated board models
the line (11.52 bytes/ms at 115200 baud, both directions); the figures are those of that model
plus the real pty and thread overheads. Prints a table and writes bench/out/serial_bench.json.

    .venv/bin/python bench/serial_bench.py [--seconds 2.0]
"""

import argparse
import json
from pathlib import Path
import tempfile
import threading
import time

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.servo_io import LinkOptions, Protocol, PWM_PROTOCOLS, ServoLink
from fabrik_ros.servo_io.protocols import maestro, native, ssc32

BAUD = 115200
CHANNELS = 6
PULSES = (1000, 1200, 1400, 1600, 1800, 2000)
OUT = Path(__file__).parent / 'out' / 'serial_bench.json'
OFFER_PERIOD_S = 0.0002


def command_bytes() -> dict:
    """Return host→board and board→host bytes of one 6-servo move (500 ms) per protocol."""
    six = dict(enumerate(PULSES))
    maestro_speeds = b''.join(maestro.encode_set_speed(ch, 40) for ch in range(CHANNELS))
    return {
        'native SET_PULSES + ACK': {
            'to_board': len(native.encode_set_pulses(1, PULSES, 500)),
            'to_host': len(native.encode_ack(1, native.Command.SET_PULSES))},
        'ssc32 group move with T': {
            'to_board': len(ssc32.encode_group_move(six, time_ms=500)), 'to_host': 0},
        'maestro 6x Set Target': {
            'to_board': sum(len(maestro.encode_set_target(ch, p)) for ch, p in six.items()),
            'to_host': 0},
        'maestro 6x Set Target + 6x Set Speed (new move time)': {
            'to_board': sum(len(maestro.encode_set_target(ch, p)) for ch, p in six.items())
            + len(maestro_speeds), 'to_host': 0},
        'maestro Set Multiple Targets (Mini Maestro only)': {
            'to_board': len(maestro.encode_set_multiple_targets(0, PULSES)), 'to_host': 0},
    }


def line_limit_hz(sizes: dict) -> float:
    """Return the commands per second the line carries: each direction has its own wire."""
    return BAUD / 10.0 / max(sizes['to_board'], sizes['to_host'])


def max_rate(protocol_kind: Protocol, seconds: float, directory: str) -> dict:
    """Return how many pulse commands per second reach the board when offered far too fast."""
    board = SimBoard(protocol_kind, link_path=f'{directory}/tty_{protocol_kind.value}',
                     baud=BAUD).start()
    options = LinkOptions(max_rate_hz=100000.0, poll_hz=0.0)
    link = ServoLink(board.path, protocol=protocol_kind, options=options).start()
    try:
        link.wait_ready(5.0)
        link.set_pulses(PULSES)
        link.enable([True] * CHANNELS)
        link.sync(5.0)
        stop = threading.Event()

        def produce() -> None:
            # About 5000 commands/s: far above any line rate, yet leaves the GIL to the link.
            step = 0
            while not stop.is_set():
                step += 1
                link.set_pulses(tuple(1000 + (step + ch) % 1000 for ch in range(CHANNELS)))
                time.sleep(OFFER_PERIOD_S)

        before = link.stats()
        producer = threading.Thread(target=produce)
        start = time.monotonic()
        producer.start()
        stop.wait(seconds)
        stop.set()
        producer.join()
        elapsed = time.monotonic() - start
        after = link.stats()
    finally:
        link.close()
        board.stop()
    sent = after.frames_sent - before.frames_sent
    offered = after.commands - before.commands
    return {'commands_offered_per_s': offered / elapsed, 'writes_per_s': sent / elapsed,
            'coalesced_fraction': (after.coalesced - before.coalesced) / max(1, offered)}


def round_trip(seconds: float, directory: str, baud: int) -> dict:
    """Return ACK round-trip times of native SET_PULSES sent at 100 Hz [ms]."""
    board = SimBoard(Protocol.NATIVE, link_path=f'{directory}/tty_rtt_{baud}',
                     baud=baud or None).start()
    link = ServoLink(board.path, options=LinkOptions(max_rate_hz=100.0, poll_hz=0.0)).start()
    samples = []
    try:
        link.wait_ready(5.0)
        tick = threading.Event()
        end = time.monotonic() + seconds
        step = 0
        while time.monotonic() < end:
            step += 1
            link.set_pulses(tuple(1000 + (step + ch) % 1000 for ch in range(CHANNELS)))
            link.sync(1.0)
            samples.append(link.stats().rtt_last_s)
            tick.wait(0.01)
    finally:
        link.close()
        board.stop()
    samples.sort()
    return {'samples': len(samples), 'median_ms': 1000 * samples[len(samples) // 2],
            'p99_ms': 1000 * samples[min(len(samples) - 1, int(0.99 * len(samples)))]}


def main() -> None:
    """Run every measurement, print it, and write the JSON file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=3.0, help='duration of each run')
    seconds = parser.parse_args().seconds
    sizes = command_bytes()
    print(f'bytes per {CHANNELS}-servo command (to board / to host, line limit at {BAUD} baud)')
    for name, size in sizes.items():
        size['line_limit_hz'] = line_limit_hz(size)
        print(f'  {name:55s} {size["to_board"]:3d} / {size["to_host"]:2d}  '
              f'{size["line_limit_hz"]:6.0f} Hz')
    with tempfile.TemporaryDirectory() as directory:
        rates = {kind.value: max_rate(kind, seconds, directory) for kind in PWM_PROTOCOLS}
        rtts = {'115200 baud modelled': round_trip(seconds, directory, BAUD),
                'pty only (no line model)': round_trip(seconds, directory, 0)}
    print(f'max command rate through ServoLink at {BAUD} baud (offered at ~5 kHz)')
    for name, rate in rates.items():
        print(f'  {name:8s} {rate["writes_per_s"]:6.0f} commands/s reach the board; '
              f'{rate["commands_offered_per_s"]:8.0f}/s offered, '
              f'{100 * rate["coalesced_fraction"]:.1f} % coalesced')
    print('native ACK round trip (SET_PULSES at 100 Hz)')
    for name, rtt in rtts.items():
        print(f'  {name:26s} median {rtt["median_ms"]:.2f} ms, p99 {rtt["p99_ms"]:.2f} ms '
              f'({rtt["samples"]} samples)')
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({'baud': BAUD, 'bytes_per_command': sizes, 'max_rate': rates,
                               'ack_round_trip': rtts}, indent=2) + '\n', encoding='utf-8')
    print(f'wrote {OUT}')


if __name__ == '__main__':
    main()
