"""Run a simulated servo board on a pty until Ctrl-C, for trying the driver without hardware.

``python -m fabrik_ros.boardsim --protocol native --link ./ttyFAKE`` (also installed
as the ``sim_device`` console script) prints the path to open and serves a
:class:`~fabrik_ros.boardsim.board.SimBoard` there; ``--protocol ssc32`` or ``maestro``
imitates a Lynxmotion SSC-32U or a Pololu Maestro instead, ``--protocol feetech`` a bus of
Feetech STS3215 servos with ids 1..``--channels`` at 1 Mbaud, ``--protocol dynamixel`` one of
Dynamixel XL430-W250 (Protocol 2.0, limp at power-up). See ``board.py`` for how the
line speed and the Arduino boot are modelled. ``--board simavr`` runs the Uno firmware itself
in the simavr simulator, building it first if needed (see :func:`simavr_build`).

A real board does not stop when its host is stopped, and the host's last words (detach, or
hold) must reach it: on SIGINT or SIGTERM the simulated board keeps answering until the line
has been quiet for ``--linger-s`` (at most ``--linger-max-s``), then prints its final state,
``sim_device: final state: enabled [...] pulses [...] us`` (on a servo bus: ``torque [...]
positions [...] counts``), and exits 0.
"""

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
import os
from pathlib import Path
import subprocess
import sys
import time
from typing import Optional, Union

from fabrik_ros.boardsim import simavr_board
from fabrik_ros.boardsim.board import PROTOCOL_BAUD, SimBoard, SIMULATED_PROTOCOLS
from fabrik_ros.boardsim.bus_firmware import BusFirmware
from fabrik_ros.boardsim.hand import Hand, HandSweep, parse_sweep
from fabrik_ros.boardsim.link_claim import LinkClaim
from fabrik_ros.process.stop import StopRequest
from fabrik_ros.servo_io.protocols.dialect import OFFERED_PROTOCOLS, Protocol

__all__ = ['SimBoard', 'build_parser', 'main', 'SimavrBuild', 'simavr_build']

BOARDS = ('python', 'simavr')
DEFAULT_CHANNELS = 6
# The most outputs each protocol addresses: the native ENABLE mask is one byte; an SSC-32U has
# 32 channels, the largest Maestro 24; bus ids run from 1 to the highest unicast id.
MAX_CHANNELS = {Protocol.NATIVE: 8, Protocol.SSC32: 32, Protocol.MAESTRO: 24,
                Protocol.FEETECH: 253, Protocol.DYNAMIXEL: 252}
_POLL_S = 0.05


class SetupError(RuntimeError):
    """The simulated board cannot run here; the message says what to do."""


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser of ``sim_device``."""
    parser = argparse.ArgumentParser(prog='sim_device', description=__doc__.splitlines()[0])
    parser.add_argument('--board', choices=BOARDS, default='python',
                        help='python: the simulated board of fabrik_ros.boardsim; simavr: the '
                             'Uno firmware in the simavr simulator, native protocol only '
                             '(default: python)')
    offered = tuple(dict.fromkeys(OFFERED_PROTOCOLS + tuple(p for p in SIMULATED_PROTOCOLS
                                                            if p.is_bus)))
    parser.add_argument('--protocol', choices=[p.value for p in offered],
                        default='native',
                        help='protocol the board speaks (default: native)')
    parser.add_argument('--link', help='symlink to create to the pty, e.g. ./ttyFAKE')
    parser.add_argument('--channels', type=int, default=DEFAULT_CHANNELS,
                        help='servo outputs (PWM: channels 0..N-1; a bus: servos with ids '
                             f'1..N) (default: {DEFAULT_CHANNELS}; sim.launch.py gives the '
                             "arm file's)")
    parser.add_argument('--baud', type=int, default=None,
                        help='modelled line speed in bit/s, 0 = unthrottled (default: 115200; '
                             '1000000 on a servo bus)')
    parser.add_argument('--speed-us-per-s', type=float, default=0.0,
                        help='fastest servo movement in µs/s, 0 = no cap (default: 0)')
    parser.add_argument('--boot-delay-s', type=float, default=0.0,
                        help='time before the board answers after start (default: 0)')
    parser.add_argument('--corrupt-rate', type=float, default=0.0,
                        help='probability of a bit flip per byte (default: 0)')
    parser.add_argument('--seed', type=int, default=0, help='corruption RNG seed')
    parser.add_argument('--object', action='append', default=[], type=_held_object,
                        metavar='ID:COUNT',
                        help="a bus only: an object in servo ID's way at position COUNT (as the "
                             'servo reports it, ~/servo_positions shows them): the shaft stops '
                             'there and pushes at its torque limit, as a gripper closing on '
                             'something; may be given more than once')
    parser.add_argument('--hand', action='append', default=[], type=_hand_sweep,
                        metavar='ID:COUNTS:PERIOD_S',
                        help='a bus only: a hand moves servo ID up to COUNTS either side of '
                             'where it stands, a round trip every PERIOD_S (a limp leader arm '
                             'moved by hand); may be given more than once')
    parser.add_argument('--linger-s', type=float, default=1.0,
                        help='after a stop signal, keep answering until the line has been '
                             'quiet this long (default: 1.0)')
    parser.add_argument('--linger-max-s', type=float, default=5.0,
                        help='... but no longer than this after the signal (default: 5.0)')
    return parser


def _held_object(text: str) -> tuple[int, float]:
    """Return ``(servo id, count)`` of ``--object ID:COUNT``."""
    servo_id, _, count = text.partition(':')
    try:
        return int(servo_id), float(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r}: must be ID:COUNT, e.g. 6:2300') from None


def _hand_sweep(text: str) -> HandSweep:
    """Return the sweep of ``--hand ID:COUNTS:PERIOD_S``."""
    try:
        return parse_sweep(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(args: Optional[Sequence[str]] = None) -> int:
    """Run a simulated board until SIGINT or SIGTERM, printing the path to open.

    :returns: 0 after a stop signal; 1 (with one line saying what to do) if it cannot start.
    """
    parser = build_parser()
    options = parser.parse_args(args)
    most = MAX_CHANNELS[Protocol(options.protocol)]
    if not 1 <= options.channels <= most:
        parser.error(f'--channels {options.channels}: must be within [1, {most}] for '
                     f'--protocol {options.protocol}')
    if options.board == 'simavr' and options.channels != simavr_board.CHANNELS:
        parser.error(f'--channels {options.channels}: --board simavr runs the Uno firmware, '
                     f'which has {simavr_board.CHANNELS} channels')
    if options.object and not Protocol(options.protocol).is_bus:
        parser.error(f'--object: --protocol {options.protocol} drives PWM servos, which '
                     'report no position to stop at; objects need a bus (feetech, dynamixel)')
    for servo_id, _ in options.object:
        if not 1 <= servo_id <= options.channels:
            parser.error(f'--object {servo_id}:...: no servo with id {servo_id} (ids 1..'
                         f'{options.channels})')
    if options.hand and not Protocol(options.protocol).is_bus:
        parser.error(f'--hand: --protocol {options.protocol} drives PWM servos, which a hand '
                     'cannot move and that report no position; hands need a bus')
    for sweep in options.hand:
        if not 1 <= sweep.servo_id <= options.channels:
            parser.error(f'--hand {sweep.servo_id}:...: no servo with id {sweep.servo_id} '
                         f'(ids 1..{options.channels})')
    stop = StopRequest()
    stop.install()
    try:
        return _serve(options, stop)
    finally:
        stop.release()


def _serve(options: argparse.Namespace, stop: StopRequest) -> int:
    try:
        board = _make_board(options)
        with board:
            print(f'sim_device: {options.board} {options.protocol} board, '
                  f'{options.channels} channels, at {board.path}', flush=True)
            _serve_until_stopped(stop, board.received_bytes, options)
            enabled, pulses = board.final_state()
    except (SetupError, OSError) as error:
        if stop.signal is not None:     # e.g. make ended by the same Ctrl-C: nothing went wrong
            print(f'sim_device: stopped by {stop.signal.name} before the board started',
                  flush=True)
            return 0
        print(f'sim_device: cannot start: {error}', file=sys.stderr, flush=True)
        return 1
    if Protocol(options.protocol).is_bus:
        print(f'sim_device: final state: torque {enabled} positions {pulses} counts', flush=True)
    else:
        print(f'sim_device: final state: enabled {enabled} pulses {pulses} us', flush=True)
    return 0


def _serve_until_stopped(stop: StopRequest, received: Callable[[], int],
                         options: argparse.Namespace) -> None:
    """Return once stopped and the host has been quiet for the linger time (bounded)."""
    while not stop.wait(_POLL_S):
        pass
    stopped_at = last_input_at = time.monotonic()
    seen = received()
    while True:
        now = time.monotonic()
        if received() != seen:
            seen, last_input_at = received(), now
        if now - last_input_at >= options.linger_s or now - stopped_at >= options.linger_max_s:
            return
        time.sleep(_POLL_S)


class _PythonBoard:
    """A :class:`SimBoard` as sim_device serves it."""

    def __init__(self, options: argparse.Namespace) -> None:
        baud = PROTOCOL_BAUD if options.baud is None else options.baud or None
        self.board = SimBoard(Protocol(options.protocol), channels=options.channels,
                              link_path=options.link, baud=baud,
                              speed_us_per_s=options.speed_us_per_s or None,
                              boot_delay_s=options.boot_delay_s,
                              corrupt_rate=options.corrupt_rate, seed=options.seed)
        self.options = options
        self.path = ''
        self._hand: Optional[Hand] = None

    def __enter__(self) -> '_PythonBoard':
        self.board.start()
        self.path = self.board.path
        firmware = self.board.firmware
        for servo_id, count in self.options.object:
            assert isinstance(firmware, BusFirmware)    # main refuses objects off a bus
            try:
                firmware.place_object(servo_id, count, time.monotonic())
            except ValueError as error:
                self.board.stop()
                raise SetupError(f'--object {servo_id}:{count:g}: {error}') from None
        if self.options.hand:
            assert isinstance(firmware, BusFirmware)    # main refuses hands off a bus
            self._hand = Hand(firmware, self.options.hand).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._hand is not None:
            self._hand.stop()
        self.board.stop()

    def received_bytes(self) -> int:
        return self.board.bytes_received

    def final_state(self) -> tuple[list[bool], list[int]]:
        firmware = self.board.firmware
        if isinstance(firmware, BusFirmware):     # torque and present positions [counts]
            return firmware.torques(), firmware.present_positions(time.monotonic())
        return list(self.board.enabled), list(self.board.pulses())


class _SimavrBoard:
    """The Uno firmware in simavr as sim_device serves it; state read off its pins."""

    def __init__(self, options: argparse.Namespace, build: 'SimavrBuild') -> None:
        self.board = simavr_board.SimavrBoard(
            pty_link=options.link, elf=build.firmware_elf, harness=build.harness,
            eeprom_path=build.build_dir / 'simavr_eeprom.bin')
        self.path = ''
        # The harness makes the link; the claim keeps it one board's, as SimBoard's does.
        self._claim = LinkClaim(options.link) if options.link else None

    def __enter__(self) -> '_SimavrBoard':
        if self._claim is not None:
            self._claim.acquire()
        try:
            self.board.start()
        except (simavr_board.HarnessError, TimeoutError) as error:
            self._release()
            raise SetupError(f'simavr did not start: {error}') from None
        self.path = self.board.pty_link or self.board.port
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.board.stop()
        self._release()

    def _release(self) -> None:
        if self._claim is not None:
            self._claim.release()

    def received_bytes(self) -> int:
        return len(self.board.received)

    def final_state(self) -> tuple[list[bool], list[int]]:
        pulses = self.board.held_pulses()
        return [bool(width) for width in pulses], pulses


def _make_board(options: argparse.Namespace) -> Union[_PythonBoard, _SimavrBoard]:
    if options.board == 'python':
        return _PythonBoard(options)
    if options.protocol != Protocol.NATIVE.value:
        raise SetupError(f'--board simavr runs the fabrik_ros firmware, which speaks the native '
                         f'protocol; --protocol {options.protocol} is not supported there')
    return _SimavrBoard(options, simavr_build())


@dataclass(frozen=True)
class SimavrBuild:
    """Where the firmware sources are and where their simavr build goes."""

    hardware_dir: Path    # the hardware/ folder: Makefile, firmware/, sim/
    build_dir: Path       # make's BUILD: a checkout builds in place, an install in a cache

    @property
    def firmware_elf(self) -> Path:
        """Return the firmware image simavr runs."""
        return self.build_dir / 'fabrik_servo_bridge.elf'

    @property
    def harness(self) -> Path:
        """Return the simulator harness."""
        return self.build_dir / 'fabrik_servo_sim'


def locate_hardware(environ: Optional[Mapping[str, str]] = None, *,
                    checkout: Path = simavr_board.HARDWARE_DIR,
                    share: Optional[Path] = None) -> SimavrBuild:
    """Return where the firmware sources are and where to build them, checked in this order.

    FABRIK_ROS_HARDWARE_DIR (built in place); the checkout this module runs from (built in
    place, as the test suite does); the copy installed under share/fabrik_ros/hardware (built
    under ``$XDG_CACHE_HOME/fabrik_ros`` or ``~/.cache/fabrik_ros``, never in the install tree).

    :param checkout: the hardware/ folder beside the package in a source checkout.
    :param share: the installed share/fabrik_ros (None: looked up in the ament index).
    :raises SetupError: if none holds the Makefile.
    """
    environ = os.environ if environ is None else environ
    if environ.get('FABRIK_ROS_HARDWARE_DIR'):
        folder = Path(environ['FABRIK_ROS_HARDWARE_DIR'])
        if not (folder / 'Makefile').is_file():
            raise SetupError(f'FABRIK_ROS_HARDWARE_DIR = {folder} holds no Makefile; it must '
                             f'name the hardware/ folder of a fabrik_ros checkout')
        return SimavrBuild(folder, folder / 'build')
    if (checkout / 'Makefile').is_file():
        return SimavrBuild(checkout, checkout / 'build')
    share = share or _installed_share()
    if share is not None and (share / 'hardware' / 'Makefile').is_file():
        cache = Path(environ.get('XDG_CACHE_HOME') or Path.home() / '.cache')
        return SimavrBuild(share / 'hardware', cache / 'fabrik_ros' / 'hardware_build')
    raise SetupError('the firmware sources (hardware/) are not installed with this package; '
                     'rebuild it (colcon build) or set FABRIK_ROS_HARDWARE_DIR to the hardware/ '
                     'folder of a fabrik_ros checkout')


def simavr_build(environ: Optional[Mapping[str, str]] = None) -> SimavrBuild:
    """Locate the firmware sources and build firmware and harness (make is incremental).

    :raises SetupError: naming the missing tools and how to install them, or make's error.
    """
    build = locate_hardware(environ)
    missing = simavr_board.missing_prerequisites()
    if missing:
        raise SetupError(f'building the firmware for simavr needs {", ".join(missing)}; on '
                         f'Debian/Ubuntu: sudo apt-get install make gcc gcc-avr avr-libc '
                         f'simavr libsimavr-dev libelf-dev')
    build.build_dir.mkdir(parents=True, exist_ok=True)
    command = ['make', '-C', str(build.hardware_dir), f'BUILD={build.build_dir}', 'firmware',
               'sim']
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-5:]
        raise SetupError(f'{" ".join(command)} failed: ' + ' | '.join(tail))
    return build


def _installed_share() -> Optional[Path]:
    """Return share/fabrik_ros of an installed package, or None without one."""
    try:
        from ament_index_python.packages import get_package_share_directory
        return Path(get_package_share_directory('fabrik_ros'))
    except (ImportError, LookupError, ValueError):
        return None


if __name__ == '__main__':
    sys.exit(main())
