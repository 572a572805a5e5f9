"""Split each target's latency into stages, from stamps the node processes take themselves.

The nodes run as e2e_latency.py runs them, but through this file, which first wraps their
callbacks (fabrik_ik's target, markers, joint_states and diagnostics; servo_driver's command,
tick, states and diagnostics; the link's set_pulses) and the serial port's writes with
stamps of ``time.monotonic()`` and the thread's CPU time, kept in memory and written to
``<trace dir>/<module>.json`` at exit. The monotonic clock is the one the publisher and the
simulated board stamp with, so per target: published → fabrik_ik's callback → its end →
servo_driver's callback → set_pulses → the write (and by which thread) → the first byte at the
board. A diagnostic: the wrappers add a few µs per callback, so figures for the record come
from e2e_latency.py. Also counts, per rate, the targets that met one of the nodes' periodic
callbacks on their way (a timer running when the target arrived) and their latency.

    .venv/bin/python bench/stage_trace.py [--layout two_process] [--protocol native]
        [--rates 20 50 500] [--seconds 5]
"""

import argparse
import atexit
import bisect
import collections
import functools
import importlib
import json
import os
from pathlib import Path
import sys
import tempfile
import threading
import time

_TRACE_DIR = 'FABRIK_STAGE_TRACE_DIR'
_WRAPPED = {  # (module, class, method) -> stage name
    ('fabrik_ros.nodes.ik_node', 'FabrikIkNode', '_on_target_point'): 'ik_target',
    ('fabrik_ros.nodes.ik_node', 'FabrikIkNode', '_on_marker_timer'): 'ik_markers',
    ('fabrik_ros.nodes.ik_node', 'FabrikIkNode', '_on_joint_states'): 'ik_joint_states',
    ('fabrik_ros.nodes.ik_node', 'FabrikIkNode', '_on_diagnostics_timer'): 'ik_diagnostics',
    ('fabrik_ros.nodes.driver_node', 'ServoDriverNode', '_on_joint_commands'): 'driver_command',
    ('fabrik_ros.nodes.driver_node', 'ServoDriverNode', 'command'): 'driver_command',
    ('fabrik_ros.nodes.driver_node', 'ServoDriverNode', '_on_control_timer'): 'driver_tick',
    ('fabrik_ros.nodes.driver_node', 'ServoDriverNode', '_on_state_timer'): 'driver_states',
    ('fabrik_ros.nodes.driver_node', 'ServoDriverNode', '_on_diagnostics_timer'):
        'driver_diagnostics',
    ('fabrik_ros.servo_io.link', 'ServoLink', 'set_pulses'): 'set_pulses',
    # the gap pacers' settle timers (nodes/gap_pacer.py), where the nodes have them
    ('fabrik_ros.nodes.ik_node', 'FabrikIkNode', '_on_marker_settle'): 'ik_markers',
    ('fabrik_ros.nodes.driver_node', 'ServoDriverNode', '_on_state_settle'): 'driver_states',
}
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
        note('write', size=len(data))
        write(port, data)

    serial_port.SerialPort.write = stamped_write
    module, function = entry_point.split(':')
    out = Path(os.environ[_TRACE_DIR]) / f'{module.rsplit(".", 1)[-1]}.json'
    atexit.register(lambda: out.write_text(json.dumps(events), encoding='utf-8'))
    getattr(importlib.import_module(module), function)()


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

    def stages(self, published_s: float, arrived_s: float) -> dict:
        """Return one target's stages [ms] and the periodic callbacks it met."""
        ik_in = self.first('ik_target<', published_s)
        ik_out = self.first('ik_target>', ik_in[1])
        driver_in = self.first('driver_command<', ik_out[1] - 0.0005)
        sent = self.first('set_pulses<', driver_in[1])
        write = self.first('write', sent[1])
        met = [stage for stage in PERIODIC if any(
            start < end_of_wait and end > start_of_wait
            for start, end in self.spans[stage]
            for start_of_wait, end_of_wait in ((published_s, ik_in[1]),
                                               (ik_out[1], driver_in[1])))]
        return {'to fabrik_ik': ik_in[1] - published_s, 'fabrik_ik': ik_out[1] - ik_in[1],
                'fabrik_ik CPU': ik_out[2] - ik_in[2], 'to servo_driver': driver_in[1] - ik_out[1],
                'servo_driver to write': write[1] - driver_in[1],
                'write to board': arrived_s - write[1], 'total': arrived_s - published_s,
                'writer': 'caller' if write[3] == driver_in[3] else 'I/O thread', 'met': met}


def main() -> None:
    """Stream each rate through traced nodes and print the stages per rate."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--layout', default='two_process', choices=['two_process'])
    parser.add_argument('--protocol', default='native', choices=['native', 'ssc32', 'maestro'])
    parser.add_argument('--rates', nargs='+', type=float, default=[20.0, 50.0, 500.0])
    parser.add_argument('--seconds', type=float, default=5.0)
    args = parser.parse_args()
    from board_timing import frames_from_chunks, pulse_of
    import e2e_latency
    import node_processes
    import numpy as np
    from target_matching import match_frames

    from fabrik_ros.servo_io import Protocol

    node_processes._NODE_MAIN = Path(__file__).resolve()     # the nodes start through this file
    with tempfile.TemporaryDirectory() as directory:
        os.environ[_TRACE_DIR] = directory
        segments = []
        rig = e2e_latency.Rig(node_processes.Layout(args.layout), Path(directory),
                              protocol=Protocol(args.protocol))
        try:
            rig.wait_ready()
            for rate in args.rates:
                rig.board.take_chunks()
                first = rig.index
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
    for rate, targets in segments:
        rows = [trace.stages(published, arrived) for published, arrived in targets]
        print(f'{rate:g} Hz, {len(rows)} targets: stage p50 / p90 / p99')
        for key in rows[0]:
            if key not in ('writer', 'met'):
                values = 1e3 * np.array([row[key] for row in rows])
                print(f'  {key:22s} {np.median(values):6.2f} {np.percentile(values, 90):6.2f} '
                      f'{np.percentile(values, 99):6.2f}')
        writers = collections.Counter(row['writer'] for row in rows)
        print(f'  command written by: {dict(writers)}')
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
