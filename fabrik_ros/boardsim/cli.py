"""Run a simulated servo board on a pty until Ctrl-C, for trying the driver without hardware.

``python -m fabrik_ros.boardsim --protocol native --link ./ttyFAKE`` (also installed
as the ``sim_device`` console script) prints the path to open and serves a
:class:`~fabrik_ros.boardsim.board.SimBoard` there; ``--protocol ssc32`` or ``maestro``
imitates a Lynxmotion SSC-32U or a Pololu Maestro instead. See ``board.py`` for how the
line speed and the Arduino boot are modelled.
"""

import argparse
from collections.abc import Sequence
import signal
import threading
from typing import Optional

from fabrik_ros.boardsim.board import SimBoard
from fabrik_ros.servo_io.protocols.dialect import Protocol

__all__ = ['SimBoard', 'build_parser', 'main']


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser of ``sim_device``."""
    parser = argparse.ArgumentParser(prog='sim_device', description=__doc__.splitlines()[0])
    parser.add_argument('--protocol', choices=[p.value for p in Protocol], default='native',
                        help='protocol the board speaks (default: native)')
    parser.add_argument('--link', help='symlink to create to the pty, e.g. ./ttyFAKE')
    parser.add_argument('--channels', type=int, default=6, help='servo outputs (default: 6)')
    parser.add_argument('--baud', type=int, default=115200,
                        help='modelled line speed in bit/s, 0 = unthrottled (default: 115200)')
    parser.add_argument('--speed-us-per-s', type=float, default=0.0,
                        help='fastest servo movement in µs/s, 0 = no cap (default: 0)')
    parser.add_argument('--boot-delay-s', type=float, default=0.0,
                        help='time before the board answers after start (default: 0)')
    parser.add_argument('--corrupt-rate', type=float, default=0.0,
                        help='probability of a bit flip per byte (default: 0)')
    parser.add_argument('--seed', type=int, default=0, help='corruption RNG seed')
    return parser


def main(args: Optional[Sequence[str]] = None) -> None:
    """Run a simulated board until Ctrl-C or SIGTERM, printing the path to open."""
    options = build_parser().parse_args(args)
    board = SimBoard(Protocol(options.protocol), channels=options.channels,
                     link_path=options.link, baud=options.baud or None,
                     speed_us_per_s=options.speed_us_per_s or None,
                     boot_delay_s=options.boot_delay_s, corrupt_rate=options.corrupt_rate,
                     seed=options.seed)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with board:
        print(f'sim_device: {board.protocol.value} board, {board.channels} channels, '
              f'at {board.path}', flush=True)
        try:
            done.wait()
        except KeyboardInterrupt:
            pass
        print(f'sim_device: stopped; outputs {list(board.pulses())} µs', flush=True)

