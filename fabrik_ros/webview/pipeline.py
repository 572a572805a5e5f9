"""`make web`: fabrik_ik, servo_driver on a simulated board, and web_view, until Ctrl-C.

    python -m fabrik_ros.webview.pipeline [--port 8080] [--protocol native]

Starts each as its own process (the installed console scripts), prints the address to open,
and on Ctrl-C (or SIGTERM) stops them in order: web_view, fabrik_ik, servo_driver (which
leaves the servos as ``on_shutdown`` says), then the board. DDS stays on loopback.
"""

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import time
from typing import Optional
import urllib.error
import urllib.request

from fabrik_ros.ros_env import isolate_ros
from fabrik_ros.servo_io.protocols.dialect import OFFERED_PROTOCOLS
from fabrik_ros.webview.token_gate import is_loopback

_SOURCE_ROOT = Path(__file__).resolve().parents[2]


def shipped_config(name: str, source_root: Path = _SOURCE_ROOT) -> Path:
    """Return the shipped arm file ``name``: the checkout's, else the installed package's.

    A colcon install keeps config/ in ``share/fabrik_ros``, not beside the Python package;
    without either, the checkout's path (which a missing file then names).
    """
    checkout = source_root / 'config' / name
    if checkout.exists():
        return checkout
    try:
        from ament_index_python.packages import get_package_share_directory
        installed = Path(get_package_share_directory('fabrik_ros')) / 'config' / name
    except (ImportError, LookupError, OSError):
        return checkout
    return installed if installed.exists() else checkout


DEFAULT_CONFIG = shipped_config('arm_4dof.yaml')
_STOP_WAIT_S = 10.0
_READY_POLL_S = 0.1
# A start slower than this is said on the terminal [s].
_SLOW_START_S = 20.0


class PipelineError(RuntimeError):
    """A process of the pipeline could not start or died; the message says which and why."""


@dataclass(frozen=True)
class PipelineOptions:
    """What to run: the arm file, where the page is served, the board's protocol.

    ``namespace`` (e.g. ``/arm2``) puts the three nodes in a namespace of their own;
    ``driver_parameters`` (``name:=value``) go to servo_driver besides the arm file.
    """

    config: Path = DEFAULT_CONFIG
    host: str = '127.0.0.1'
    port: int = 8080
    protocol: str = 'native'
    calibration_file: Optional[Path] = None
    namespace: str = ''
    driver_parameters: tuple[str, ...] = ()


class Pipeline:
    """The four processes of ``make web``; a context manager that stops them on exit."""

    def __init__(self, options: PipelineOptions) -> None:
        self.options = options
        self._folder = tempfile.TemporaryDirectory(prefix='fabrik_web_')
        self._processes: list[tuple[str, subprocess.Popen]] = []
        self._environment = loopback_environment()

    @property
    def url(self) -> str:
        """Return the address of the page."""
        return f'http://{self.options.host}:{self.options.port}'

    def start(self) -> 'Pipeline':
        """Start the board, servo_driver, fabrik_ik and web_view (in that order)."""
        options = self.options
        config = str(options.config)
        link = str(Path(self._folder.name) / 'board')
        calibration = options.calibration_file or Path(self._folder.name) / 'calibrated.yaml'
        self._run('sim_device', '--protocol', options.protocol, '--link', link)
        ros = ['--ros-args', '--params-file', config]
        if options.namespace:
            ros += ['-r', f'__ns:={options.namespace}']
        driver = [arg for name_value in options.driver_parameters for arg in ('-p', name_value)]
        self._run('servo_driver', *ros, '-p', f'port:={link}',
                  '-p', f'protocol:={options.protocol}', *driver)
        self._run('fabrik_ik', *ros)
        self._run('web_view', *ros,
                  '-p', f'host:={options.host}', '-p', f'port:={options.port}',
                  '-p', f'arm_file:={config}', '-p', f'calibration_file:={calibration}')
        return self

    def _run(self, executable: str, *args: str) -> None:
        command = [console_script(executable), *args]
        # A session of its own: the terminal's Ctrl-C reaches only this process, which then
        # stops each child once, in order.
        process = subprocess.Popen(command, env=self._environment,
                                   start_new_session=True)
        self._processes.append((executable, process))

    def wait_ready(self, say: Callable[[str], None]) -> None:
        """Wait until the page answers, however long a loaded machine takes to start it.

        A process that exits ends the wait; a slow start is said once, so a person at the
        terminal knows it is not stuck.

        :raises PipelineError: if a process exits before the page answers
        """
        slow_at: Optional[float] = time.monotonic() + _SLOW_START_S
        while not _answers(self.url):
            self.check_alive()
            if slow_at is not None and time.monotonic() > slow_at:
                say(f'make web: still starting: waiting for {self.url} to answer')
                slow_at = None
            time.sleep(_READY_POLL_S)

    def check_alive(self) -> None:
        """Raise PipelineError naming the first process that has exited."""
        for name, process in self._processes:
            if process.poll() is not None:
                raise PipelineError(f'{name} exited with status {process.returncode}')

    def stop(self) -> dict[str, int]:
        """Stop every process, newest first (SIGINT, then SIGTERM, then SIGKILL).

        :return: each process's exit status
        """
        statuses = {}
        for name, process in reversed(self._processes):
            statuses[name] = _stop(process)
        self._processes.clear()
        self._folder.cleanup()
        return statuses

    def __enter__(self) -> 'Pipeline':
        """Start the processes."""
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        """Stop the processes."""
        self.stop()


def loopback_environment() -> dict[str, str]:
    """Return this process's environment with DDS on loopback, in a domain of its own.

    The domain is drawn once here (unless ROS_DOMAIN_ID is set): every process of one
    pipeline must get the same environment.
    """
    env = dict(os.environ)
    isolate_ros(env, force=True)     # fabrik_ros.ros_env: the way this ROS distro understands
    return env


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as response:
            return response.status == 200
    except urllib.error.HTTPError as refused:
        return refused.code == 403      # served beyond loopback: up, and asking for its token
    except (urllib.error.URLError, OSError):
        return False


def _stop(process: subprocess.Popen) -> int:
    for stop in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            break
        process.send_signal(stop)
        try:
            process.wait(_STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            continue
    return process.wait()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='python -m fabrik_ros.webview.pipeline',
                                     description=__doc__.splitlines()[0])
    parser.add_argument('--config', type=Path, default=DEFAULT_CONFIG,
                        help='arm parameter file (default: config/arm_4dof.yaml)')
    parser.add_argument('--host', default='127.0.0.1', help='address of the page '
                        '(default: 127.0.0.1; 0.0.0.0 serves every interface)')
    parser.add_argument('--port', type=int, default=8080, help='port of the page (8080)')
    parser.add_argument('--protocol', choices=[p.value for p in OFFERED_PROTOCOLS],
                        default='native', help='simulated board and driver protocol')
    parser.add_argument('--calibration-file', type=Path, help='where the page saves a '
                        'calibrated copy of the arm file (default: a temporary folder)')
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the pipeline until Ctrl-C or SIGTERM; return 1 if a process failed.

    Each process's exit status is printed on one line when they have stopped: a process that
    had to be killed, or exited with an error, makes the whole run fail.
    """
    parsed = _parser().parse_args(argv)
    options = PipelineOptions(parsed.config, parsed.host, parsed.port, parsed.protocol,
                              parsed.calibration_file)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    pipeline = Pipeline(options)
    try:
        status = _run_until_stopped(pipeline)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # a second Ctrl-C must not cut it short
        statuses = pipeline.stop()
    print(f'make web: stopped {describe_statuses(statuses)}', flush=True)
    return status if all(code == 0 for code in statuses.values()) else 1


def _run_until_stopped(pipeline: Pipeline) -> int:
    try:
        pipeline.start()
        pipeline.wait_ready(lambda line: print(line, flush=True))
        if is_loopback(pipeline.options.host):
            print(f'open {pipeline.url} in a browser; Ctrl-C stops', flush=True)
        else:
            print('open the address web_view prints with its token in a browser; Ctrl-C stops',
                  flush=True)
        while True:
            pipeline.check_alive()
            time.sleep(0.5)
    except KeyboardInterrupt:
        return 0
    except PipelineError as error:
        print(f'make web: {error}', file=sys.stderr)
        return 1


def console_script(name: str) -> str:
    """Return the path of the package's console script ``name``, else ``name`` for PATH.

    A pip install puts the scripts beside the interpreter; a colcon (ament_python) install
    puts them in ``<prefix>/lib/fabrik_ros``, where ``ros2 run`` and launch find them through
    the ament index, and which is on no PATH.
    """
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    try:
        from ament_index_python.packages import get_package_prefix, PackageNotFoundError
    except ImportError:
        return name
    try:
        installed = Path(get_package_prefix('fabrik_ros')) / 'lib' / 'fabrik_ros' / name
    except (PackageNotFoundError, OSError):    # not indexed, or no AMENT_PREFIX_PATH at all
        return name
    return str(installed) if installed.exists() else name


def describe_statuses(statuses: Mapping[str, int]) -> str:
    """Return each process's exit status in words, in the order they were stopped.

    >>> describe_statuses({'web_view': 0, 'fabrik_ik': -9, 'sim_device': 2})
    'web_view: 0, fabrik_ik: killed by SIGKILL, sim_device: 2'
    """
    return ', '.join(f'{name}: {_status_words(code)}' for name, code in statuses.items())


def _status_words(code: int) -> str:
    if code >= 0:
        return str(code)
    try:
        return f'killed by {signal.Signals(-code).name}'
    except ValueError:
        return f'killed by signal {-code}'


if __name__ == '__main__':
    sys.exit(main())
