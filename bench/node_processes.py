"""Start the nodes under test as their own processes and read their CPU time and memory.

Layouts: ``two_process`` runs fabrik_ik and servo_driver as the two executables do;
``composed`` runs both in one process and one executor (fabrik_ros.nodes.arm_composition,
the ``fabrik_arm`` executable). CPU and memory come from /proc, so nothing inside the nodes
is changed or slowed down to measure them.
"""

import atexit
from dataclasses import dataclass, field
import enum
import os
from pathlib import Path
import signal
import subprocess
import sys
from typing import Optional

from parent_watch import child_environment
import yaml

_CLOCK_TICKS = os.sysconf('SC_CLK_TCK')
_NODE_MAIN = Path(__file__).resolve().parent / 'node_main.py'
_STOP_WAIT_S = 5.0


class Layout(enum.Enum):
    """How the nodes are spread over processes."""

    TWO_PROCESS = 'two_process'
    COMPOSED = 'composed'


_PROCESSES = {
    Layout.TWO_PROCESS: (('fabrik_ik', 'fabrik_ros.nodes.ik_node:main'),
                         ('servo_driver', 'fabrik_ros.nodes.driver_node:main')),
    Layout.COMPOSED: (('fabrik_arm', 'fabrik_ros.nodes.arm_composition:main'),),
}


# The benchmark's former tuning, kept to repeat older figures: a driver tick of 500 Hz and a
# speed limit that never shapes a step (e2e_latency.py --tuned).
TUNED_OVERRIDES = {'control_rate_hz': 500.0, 'home_move_time_s': 0.0}
TUNED_SPEED_RAD_S = 100.0


@dataclass(frozen=True)
class DriverSettings:
    """Parameters the benchmark gives the nodes: what arm.launch.py sets, plus ``overrides``.

    :param port: the simulated board's path
    :param joints: number of joints (for per-joint overrides)
    :param protocol: the board protocol
    :param baud: serial line speed [bit/s]
    :param overrides: further servo_driver parameters; empty = the shipped defaults
    """

    port: str
    joints: int
    protocol: str = 'native'
    baud: int = 115200
    overrides: dict = field(default_factory=dict)

    @classmethod
    def tuned(cls, port: str, joints: int, **kwargs) -> 'DriverSettings':
        """Return the former benchmark tuning: 500 Hz tick, 100 rad/s, no slow move home."""
        overrides = {**TUNED_OVERRIDES, 'max_speed_rad_s': [TUNED_SPEED_RAD_S] * joints}
        return cls(port, joints, overrides=overrides, **kwargs)


def parameter_file(settings: DriverSettings, directory: Path) -> Path:
    """Write the benchmark's node parameters as a ROS 2 parameter file and return its path.

    As arm.launch.py starts the nodes: fabrik_ik follows RViz's tools, servo_driver gets the
    port, baud and protocol; everything else is the shipped default unless overridden.
    """
    params = {
        'fabrik_ik': {'ros__parameters': {'follow_rviz_tools': True}},
        'servo_driver': {'ros__parameters': {
            'port': settings.port, 'baud': int(settings.baud), 'protocol': settings.protocol,
            **settings.overrides}},
    }
    path = directory / 'bench_params.yaml'
    path.write_text(yaml.safe_dump(params), encoding='utf-8')
    return path


def _renice(niceness: int) -> None:
    """Change the starting process's nice value; keep the default where it is refused."""
    try:
        os.nice(niceness)
    except PermissionError:
        pass


@dataclass
class NodeProcess:
    """One node process and the log file its output goes to."""

    name: str
    popen: subprocess.Popen
    log: Path

    @property
    def pid(self) -> int:
        """Return the process id."""
        return self.popen.pid

    def cpu_s(self) -> float:
        """Return the CPU time (user + system) the process has used so far [s]."""
        stat = Path(f'/proc/{self.pid}/stat').read_text(encoding='ascii')
        fields = stat.rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS

    def rss_kib(self) -> int:
        """Return the resident set size [KiB]."""
        for line in Path(f'/proc/{self.pid}/status').read_text(encoding='ascii').splitlines():
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
        raise RuntimeError(f'/proc/{self.pid}/status has no VmRSS line')

    def alive(self) -> bool:
        """Return True while the process runs."""
        return self.popen.poll() is None

    def stop(self) -> Optional[int]:
        """Interrupt the process as Ctrl-C does and wait for it; kill it if it hangs."""
        if self in _RUNNING:
            _RUNNING.remove(self)
        if self.alive():
            self.popen.send_signal(signal.SIGINT)
        try:
            return self.popen.wait(_STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            return self.popen.wait()


# Every node process started here and not stopped yet: stopped at exit whatever the caller
# forgot (a benchmark that raised between starting the nodes and its own cleanup).
_RUNNING: list[NodeProcess] = []


def stop_all() -> dict[str, Optional[int]]:
    """Stop every node process still running; return each one's exit code by name."""
    codes = {}
    while _RUNNING:
        process = _RUNNING.pop()
        codes[process.name] = process.stop()
    return codes


atexit.register(stop_all)


def start_nodes(layout: Layout, config: Path, params: Path, log_dir: Path, *,
                profile_dir: Optional[Path] = None, niceness: int = 0) -> list[NodeProcess]:
    """Start the node processes of ``layout`` with the arm config and benchmark parameters.

    Each ends with this process, however it ends (node_main.py watches it): stopped by
    :meth:`NodeProcess.stop` or :func:`stop_all` (run at exit), sent SIGTERM if this process
    dies without either. Call it from a thread that lives as long as the nodes (Linux sends
    the signal when the starting thread ends).

    :param profile_dir: if given, every process runs under cProfile and writes
        ``<name>.prof`` there when it stops
    :param niceness: added to the processes' nice value (negative = more CPU share than the
        machine's other work; needs the privilege, else the nodes start at normal priority)
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    processes = []
    for name, entry in _PROCESSES[layout]:
        runner = [str(_NODE_MAIN), entry]
        if profile_dir is not None:
            runner = ['-m', 'cProfile', '-o', str(profile_dir / f'{name}.prof')] + runner
        command = [sys.executable, *runner, '--ros-args', '--params-file', str(config),
                   '--params-file', str(params)]
        log = log_dir / f'{layout.value}_{name}.log'
        with log.open('w', encoding='utf-8') as out:
            popen = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                     env=child_environment(),
                                     preexec_fn=(lambda: _renice(niceness)) if niceness else None)
        processes.append(NodeProcess(name, popen, log))
        _RUNNING.append(processes[-1])
    return processes
