"""Benchmark BusLink alone: a command in, the first byte of its sync write on the line.

For each bus protocol and command rate, BusLink drives six simulated servos (SimBoard on a
pty, the line modelled at 1 Mbaud) with its feedback at the default rate and telemetry
running, while this script sets a new goal at the rate and notes when. The board notes when
the first byte of each sync write arrived; a goal's latency is that minus the moment
``set_goals`` was called (the link's part of target -> first byte; the nodes add theirs, see
``e2e_latency.py``). Goals replaced before they went out (latest wins) count as coalesced.

    .venv/bin/python bench/bus_link_latency.py [--seconds 3] [--rates 50 200 500]

Prints one line per protocol and rate and writes bench/out/bus_link_latency.json.
"""

import argparse
import json
from pathlib import Path
import statistics
import tempfile
import threading
import time

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.servo_io import BUS_PROTOCOLS, BusLink, Protocol
from fabrik_ros.servo_io.bus_line import line_times
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec, Instruction
from fabrik_ros.servo_io.protocols.control_tables import STS3215, XL430_W250
from fabrik_ros.servo_io.protocols.dynamixel import DynamixelCodec
from fabrik_ros.servo_io.protocols.feetech import FeetechCodec

IDS = (1, 2, 3, 4, 5, 6)
RATES_HZ = (50, 200, 500)
OUT = Path(__file__).parent / 'out' / 'bus_link_latency.json'
CODECS = {Protocol.FEETECH: (FeetechCodec, STS3215), Protocol.DYNAMIXEL: (DynamixelCodec,
                                                                          XL430_W250)}


class StampedBus(SimBoard):
    """A simulated bus that keeps every chunk the host wrote with its first byte's arrival."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)      # type: ignore[arg-type]
        self.chunks: list[tuple[float, bytes]] = []

    def on_host_bytes(self, data: bytes, first_byte_s: float) -> None:
        """Keep the chunk (decoded after the run, so the board thread stays quick)."""
        self.chunks.append((first_byte_s, data))


def goal_arrivals(chunks: list[tuple[float, bytes]], codec: BusCodec,
                  baud: int, servo_id: int = 1) -> list[tuple[float, int]]:
    """Return (first byte [s], the servo's goal) of every sync write in the chunks naming it.

    A packet may span chunks (the board reads at most 64 bytes at a time): its first byte's
    arrival is looked up by its place in the byte stream.
    """
    table = CODECS[codec.protocol][1]
    starts: list[tuple[int, float]] = []       # (stream index of a chunk's first byte, its s)
    fed = 0
    found = []
    for first_s, data in chunks:
        starts.append((fed, first_s))
        codec.feed(data)
        fed += len(data)
        while (packet := codec.take_instruction()) is not None:
            end = fed - codec.pending
            begin = end - len(codec.packet(packet.id, packet.instruction, packet.params))
            index, chunk_s = next((i, s) for i, s in reversed(starts) if i <= begin)
            if packet.instruction != Instruction.SYNC_WRITE:
                continue
            fields = codec.FIELD_BYTES
            block = int.from_bytes(packet.params[fields:2 * fields], 'little')
            start = int.from_bytes(packet.params[:fields], 'little')
            body = packet.params[2 * fields:]
            for at in range(0, len(body), block + 1):       # id, then its block
                if body[at] == servo_id:
                    first_s = chunk_s + (begin - index) * 10.0 / baud
                    goal = table.goal_position.value_in(body[at + 1:at + 1 + block], start)
                    found.append((first_s, goal))
    return found


def measure(protocol: Protocol, rate_hz: float, seconds: float, folder: str) -> dict:
    """Return the latency figures of one protocol at one command rate."""
    board = StampedBus(protocol, link_path=f'{folder}/tty{protocol.value}{rate_hz}').start()
    link = BusLink(board.path, protocol=protocol, ids=IDS).start()
    try:
        link.wait_ready(3.0)
        link.torque(True)
        link.sync(3.0)
        board.chunks.clear()
        sent: dict[int, float] = {}
        tick = threading.Event()
        period = 1.0 / rate_hz
        start = time.monotonic()
        for index in range(round(seconds * rate_hz)):
            tick.wait(max(0.0, start + index * period - time.monotonic()))
            goal = 1000 + index % 2000
            sent[goal] = time.monotonic()
            link.set_goals({1: goal}, period)
        link.sync(2.0)
        stats = link.stats()
    finally:
        link.close()
        board.stop()
    codec_type, _ = CODECS[protocol]
    arrivals = goal_arrivals(board.chunks, codec_type(), board.baud)
    latencies = sorted(at - sent[goal] for at, goal in arrivals if goal in sent)
    commands = len(sent)
    return {
        'commands': commands, 'sync_writes': len(latencies), 'coalesced': stats.coalesced,
        'median_ms': 1e3 * statistics.median(latencies),
        'p99_ms': 1e3 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        'max_ms': 1e3 * latencies[-1]}


def main() -> None:
    """Measure every bus protocol at every rate, print and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=3.0, help='run per protocol and rate')
    parser.add_argument('--rates', type=int, nargs='+', default=list(RATES_HZ),
                        help='command rates [Hz]')
    args = parser.parse_args()
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as folder:
        for protocol in BUS_PROTOCOLS:
            codec_type, table = CODECS[protocol]
            times = line_times(codec_type(), table, len(IDS))
            print(f'{protocol.value}: line times at 1 Mbaud, six servos: ' + ', '.join(
                f'{name} {size} B {micro:.0f} us' for name, (size, micro) in times.items()))
            for rate in args.rates:
                figures = measure(protocol, rate, args.seconds, folder)
                results[f'{protocol.value}/{rate}'] = figures
                print(f'  {rate:4d} Hz: set_goals -> first byte of the sync write median '
                      f'{figures["median_ms"]:.2f} ms, p99 {figures["p99_ms"]:.2f} ms, max '
                      f'{figures["max_ms"]:.2f} ms; {figures["sync_writes"]} of '
                      f'{figures["commands"]} commands written ({figures["coalesced"]} '
                      'coalesced)')
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2) + '\n')
    print(f'wrote {OUT}')


if __name__ == '__main__':
    main()
