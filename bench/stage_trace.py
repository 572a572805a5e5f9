"""Split each target's latency into stages, from stamps the node processes take themselves.

The nodes run as e2e_latency.py runs them, but through this file, which first wraps their
callbacks (fabrik_ik's target, markers, joint_states and diagnostics; servo_driver's command,
tick, states and diagnostics; the link's set_pulses or set_goals; a bus's answered requests),
the serial port's writes and the collector's runs with stamps of ``time.monotonic()`` and the
thread's CPU time, kept in memory and written to ``<trace dir>/<module>.json`` at exit. The
monotonic clock is the one the publisher and the simulated board stamp with, so per target:
published → fabrik_ik's callback → its end → servo_driver's callback → the command handed to
the link → the write (and by which thread) → the first byte at the board. On a servo bus
(1 Mbaud, as e2e_latency.py runs it) also the reads written between a command and its sync
write, and the request before it. A diagnostic: the wrappers add a few µs per callback, so
figures for the record come from e2e_latency.py. Also counts, per rate, the targets that met
one of the nodes' periodic pieces of work on their way, and with ``--slowest N`` prints the
stages of the N slowest targets.

    .venv/bin/python bench/stage_trace.py [--layout two_process] [--protocol native]
        [--rates 20 50 500] [--seconds 5] [--slowest 10]
"""

import argparse
import atexit
import bisect
import collections
import functools
import gc
import importlib
import json
import math
import os
from pathlib import Path
import sys
import tempfile
import threading
import time
from typing import Optional

_TRACE_DIR = 'FABRIK_STAGE_TRACE_DIR'
_WRAPPED = {  # (module, class, method) -> stage name
    ('fabrik_ros.nodes.ik_node', 'FabrikIkNode', '_on_target_point'): 'ik_target',
    ('fabrik_ros.nodes.ik_node', 'FabrikIkNode', '_publish_unpublished'): 'ik_markers',
    ('fabrik_ros.nodes.ik_node', 'FabrikIkNode', '_on_joint_states'): 'ik_joint_states',
    ('fabrik_ros.nodes.ik_node', 'FabrikIkNode', '_publish_diagnostics'): 'ik_diagnostics',
    ('fabrik_ros.nodes.driver_node', 'ServoDriverNode', '_on_joint_commands'): 'driver_command',
    ('fabrik_ros.nodes.driver_node', 'ServoDriverNode', 'command'): 'driver_command',
    ('fabrik_ros.nodes.driver_node', 'ServoDriverNode', '_on_control_timer'): 'driver_tick',
    ('fabrik_ros.nodes.driver_node', 'ServoDriverNode', '_publish_states'): 'driver_states',
    ('fabrik_ros.nodes.driver_node', 'ServoDriverNode', '_publish_diagnostics'):
        'driver_diagnostics',
    ('fabrik_ros.servo_io.link', 'ServoLink', 'set_pulses'): 'set_pulses',
    ('fabrik_ros.servo_io.bus_link', 'BusLink', 'set_goals'): 'set_pulses',
    ('fabrik_ros.servo_io.bus_exchange', 'BusExchange', '_finish'): 'bus_answered',
}
SYNC_WRITE = 0x83      # both makers' instruction byte
STAGES = ('to fabrik_ik', 'fabrik_ik', 'fabrik_ik CPU', 'to servo_driver',
          'servo_driver to write', 'write to board', 'total')
PERIODIC = ('ik_markers', 'ik_joint_states', 'ik_diagnostics', 'driver_tick', 'driver_states',
            'driver_diagnostics')


# -- inside a node process ---------------------------------------------------------------------

def run_traced_node(entry_point: str) -> None:
    """Wrap the callbacks and port writes with stamps, then run ``module:function``."""
    events: list[tuple] = []

    def note(kind: str, **extra) -> None:
        events.append((kind, time.monotonic(), time.thread_time(),
                       threading.current_thread().name, extra))

    for (module_name, class_name, method), stage in _WRAPPED.items():
        cls = getattr(importlib.import_module(module_name), class_name)
        if hasattr(cls, method):
            setattr(cls, method, _stamped(getattr(cls, method), stage, note))
    from fabrik_ros.servo_io import serial_port
    write = serial_port.SerialPort.write

    def stamped_write(port, data: bytes) -> None:
        note('write', size=len(data), packet=_packet_kind(data))
        write(port, data)

    serial_port.SerialPort.write = stamped_write
    gc.callbacks.append(lambda phase, info: note('gc' + ('<' if phase == 'start' else '>'),
                                                 generation=info['generation']))
    module, function = entry_point.split(':')
    out = Path(os.environ[_TRACE_DIR]) / f'{module.rsplit(".", 1)[-1]}.json'
    atexit.register(lambda: out.write_text(json.dumps(events), encoding='utf-8'))
    getattr(importlib.import_module(module), function)()


def _packet_kind(data: bytes) -> str:
    """Return 'goals' for a bus's sync write, 'read' for another bus packet, else 'frame'."""
    if data[:4] == b'\xff\xff\xfd\x00' and len(data) > 7:      # Dynamixel Protocol 2.0
        instruction = data[7]
    elif data[:2] == b'\xff\xff' and len(data) > 4:              # Feetech (Protocol 1.0)
        instruction = data[4]
    else:
        return 'frame'
    return 'goals' if instruction == SYNC_WRITE else 'read'


def _stamped(method, stage: str, note):
    @functools.wraps(method)      # rclpy inspects a timer callback's signature
    def wrapper(self, *args, **kwargs):
        note(stage + '<')
        try:
            return method(self, *args, **kwargs)
        finally:
            note(stage + '>')
    return wrapper


# -- the benchmark side ----------------------------------------------------------------------

class Trace:
    """The stamps of every node process, searchable by stage."""

    def __init__(self, directory: Path) -> None:
        events = sorted((e for path in directory.glob('*.json')
                         for e in json.loads(path.read_text(encoding='utf-8'))),
                        key=lambda e: e[1])
        self.by_kind: dict[str, list] = collections.defaultdict(list)
        for event in events:
            self.by_kind[event[0]].append(event)
        self.times = {kind: [e[1] for e in found] for kind, found in self.by_kind.items()}
        self.spans = {stage: [(start[1], end[1]) for start in self.by_kind.get(stage + '<', [])
                              if (end := self.first(stage + '>', start[1])) is not None]
                      for stage in PERIODIC}

    def first(self, kind: str, after_s: float):
        """Return the first event of ``kind`` at or after ``after_s``, None if there is none."""
        times = self.times.get(kind, [])
        index = bisect.bisect_left(times, after_s)
        return self.by_kind[kind][index] if index < len(times) else None

    def last(self, kind: str, before_s: float):
        """Return the last event of ``kind`` before ``before_s``, None if there is none."""
        times = self.times.get(kind, [])
        index = bisect.bisect_left(times, before_s)
        return self.by_kind[kind][index - 1] if index else None

    def between(self, kind: str, start_s: float, end_s: float) -> list:
        """Return the events of ``kind`` from ``start_s`` to ``end_s``."""
        times = self.times.get(kind, [])
        return self.by_kind[kind][bisect.bisect_left(times, start_s):
                                  bisect.bisect_left(times, end_s)]

    def stages(self, published_s: float, arrived_s: float) -> Optional[dict]:
        """Return one target's stages [ms] and the periodic callbacks it met (None: untraced)."""
        ik_in = self.first('ik_target<', published_s)
        ik_out = ik_in and self.first('ik_target>', ik_in[1])
        driver_in = ik_out and self.first('driver_command<', ik_out[1] - 0.0005)
        sent = driver_in and self.first('set_pulses<', driver_in[1])
        write = sent and self.first('write', sent[1])
        if not write:
            return None
        ahead = 0       # bus packets written between the command and its sync write
        while write[4].get('packet') == 'read':
            ahead += 1
            write = self.first('write', write[1] + 1e-9)
        before = self.last('write', sent[1])
        answered = self.first('bus_answered<', before[1]) if before is not None else None
        met = [stage for stage in PERIODIC if any(
            start < end_of_wait and end > start_of_wait
            for start, end in self.spans[stage]
            for start_of_wait, end_of_wait in ((published_s, ik_in[1]),
                                               (ik_out[1], driver_in[1])))]
        return {'to fabrik_ik': ik_in[1] - published_s, 'fabrik_ik': ik_out[1] - ik_in[1],
                'fabrik_ik CPU': ik_out[2] - ik_in[2], 'to servo_driver': driver_in[1] - ik_out[1],
                'servo_driver to write': write[1] - driver_in[1],
                'write to board': arrived_s - write[1], 'total': arrived_s - published_s,
                'writer': 'caller' if write[3] == driver_in[3] else 'I/O thread', 'met': met,
                'reads ahead': ahead,
                'since last write': sent[1] - before[1] if before is not None else None,
                'last write kind': before[4].get('packet') if before is not None else None,
                'answered after': answered[1] - before[1] if answered is not None else None,
                'collections': [(e[4]['generation'], e[1] - published_s)
                                for e in self.between('gc<', published_s, arrived_s)]}


def main() -> None:
    """Stream each rate through traced nodes and print the stages per rate."""
    from fabrik_ros.servo_io import Protocol

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--layout', default='two_process', choices=['two_process'])
    parser.add_argument('--protocol', default='native', choices=[p.value for p in Protocol])
    parser.add_argument('--rates', nargs='+', type=float, default=[20.0, 50.0, 500.0])
    parser.add_argument('--seconds', type=float, default=5.0)
    parser.add_argument('--slowest', type=int, default=0,
                        help='also print the stages of this many slowest targets per rate')
    args = parser.parse_args()
    from board_timing import frames_from_chunks, pulse_of
    import e2e_latency
    import node_processes
    import numpy as np
    from target_matching import match_frames

    node_processes._NODE_MAIN = Path(__file__).resolve()     # the nodes start through this file
    node_processes._STOP_WAIT_S = 30.0      # the nodes write their stamps at exit
    with tempfile.TemporaryDirectory() as directory:
        os.environ[_TRACE_DIR] = directory
        segments = []
        protocol = Protocol(args.protocol)
        rig = e2e_latency.Rig(node_processes.Layout(args.layout), Path(directory),
                              protocol=protocol,
                              baud=e2e_latency.BUS_BAUD if protocol.is_bus else e2e_latency.BAUD)
        try:
            rig.wait_ready()
            for rate in args.rates:
                rig.board.take_chunks()
                first = rig.index
                with e2e_latency.collector_held():
                    stamps = rig.stream(rate, args.seconds + 0.5)
                time.sleep(e2e_latency.DRAIN_S)
                frames = [(f.first_byte_s, pulse) for f in frames_from_chunks(
                    rig.board.take_chunks(), rig.baud, rig.protocol)
                    if (pulse := pulse_of(f.frame, rig.sweep.channel)) is not None]
                match = match_frames(frames, stamps, first, rig.sweep)
                warm = first + round(rate * 0.5)
                segments.append((rate, [(stamps[i - first], stamps[i - first] + latency)
                                        for i, latency in match.latency_s.items()
                                        if i >= warm]))
        finally:
            rig.close()
        trace = Trace(Path(directory))
    print(f'{args.layout}, {args.protocol}; load average {os.getloadavg()[0]:.1f}; ms')
    for stage, spans in trace.spans.items():
        if spans:
            took = 1e3 * np.array([end - start for start, end in spans])
            print(f'  periodic {stage}: {len(spans)} calls, p50 {np.median(took):.2f}, '
                  f'p99 {np.percentile(took, 99):.2f}, max {took.max():.2f}')
    for rate, targets in segments:
        rows = [row for published, arrived in targets
                if (row := trace.stages(published, arrived)) is not None]
        if not rows:
            print(f'{rate:g} Hz: no target traced all the way')
            continue
        print(f'{rate:g} Hz, {len(rows)} targets: stage p50 / p90 / p99')
        for key in STAGES:
            values = 1e3 * np.array([row[key] for row in rows])
            print(f'  {key:22s} {np.median(values):6.2f} {np.percentile(values, 90):6.2f} '
                  f'{np.percentile(values, 99):6.2f}')
        writers = collections.Counter(row['writer'] for row in rows)
        print(f'  command written by: {dict(writers)}')
        ahead = collections.Counter(row['reads ahead'] for row in rows)
        print(f'  bus reads written between a command and its sync write: {dict(ahead)}')
        for row in sorted(rows, key=lambda r: -r['total'])[:args.slowest]:
            since = row['since last write']
            print('  slow: ' + ' '.join(f'{1e3 * row[key]:.2f}' for key in STAGES)
                  + f" {row['writer']}, met {row['met']}, reads ahead {row['reads ahead']}, "
                  f"last write {row['last write kind']} "
                  f"{'-' if since is None else f'{1e3 * since:.2f}'} ms before, answered "
                  f"{1e3 * (row['answered after'] or math.nan):.2f} ms after it, collections "
                  f"{[(g, round(1e3 * t, 2)) for g, t in row['collections']]}")
        met = collections.defaultdict(list)
        for row in rows:
            met['+'.join(row['met']) or 'nothing'].append(1e3 * row['total'])
        for what, totals in sorted(met.items(), key=lambda item: -len(item[1])):
            print(f'  met {what}: {len(totals)} targets, total p50 {np.median(totals):.2f}, '
                  f'max {max(totals):.2f}')


if __name__ == '__main__':
    if len(sys.argv) > 1 and ':' in sys.argv[1]:      # started by the rig as a node process
        entry, sys.argv = sys.argv[1], [sys.argv[0]] + sys.argv[2:]
        run_traced_node(entry)
    else:
        from ros_env import isolate_ros
        isolate_ros()
        main()
