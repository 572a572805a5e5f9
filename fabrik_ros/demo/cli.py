"""`make demo`: the arm on a simulated servo board; targets in, a table of what the board holds.

Runs in one process with no hardware and no ROS installation beyond the Python wheels:
fabrik_ik and servo_driver as real rclpy nodes, and the simulated board
(fabrik_ros.boardsim.SimBoard) answering on a pseudo-terminal. A client node sends a fixed
sequence of targets (reachable ones, one out of reach, a NaN, one in a foreign frame, a short
path) and waits, for each, until the board's pins emit the pulses of the commanded pose, or on
a servo bus until the servos stand at its counts. The PWM protocols drive config/arm_4dof.yaml,
the bus protocols the SO-101 (config/so101.yaml, six STS3215 or XL430 servos at 1 Mbaud).

    python -m fabrik_ros.demo [--protocol native|ssc32|maestro|feetech|dynamixel]
        [--config arm.yaml] [--plot poses.png]
    python -m fabrik_ros.demo --board simavr     # the real Uno firmware, running in simavr
"""

import argparse
from collections.abc import Iterable, Sequence
import math
from pathlib import Path
import sys
import tempfile
import time
from typing import Optional

import numpy as np

from fabrik_ros.boardsim import SimBoard
from fabrik_ros.boardsim.simavr_board import build_hardware, SimavrBoard
from fabrik_ros.demo.pin_board import PinBoard, readout_for, SimBus
from fabrik_ros.demo.session import (
    DemoError,
    DemoSession,
    DemoStopped,
    Kind,
    Outcome,
    Row,
    Step,
)
from fabrik_ros.kinematics import Arm, load_arm
from fabrik_ros.process.stop import StopRequest
from fabrik_ros.ros_env import isolate_ros
from fabrik_ros.servo_io import OFFERED_PROTOCOLS, Protocol

CONFIG_DIR = Path(__file__).resolve().parents[2] / 'config'
DEFAULT_CONFIG = CONFIG_DIR / 'arm_4dof.yaml'
DEFAULT_BUS_CONFIG = CONFIG_DIR / 'so101.yaml'


SEQUENCE = (
    Step('in front', Kind.POINT, ((0.15, 0.0, 0.12),), Outcome.REACHED),
    Step('left, low', Kind.POINT, ((0.12, 0.10, 0.04),), Outcome.REACHED),
    Step('pose, right', Kind.POSE, ((0.18, -0.05, 0.02),), Outcome.REACHED),
    Step('out of reach', Kind.POINT, ((0.40, 0.05, 0.10),), Outcome.CLOSEST),
    Step('NaN', Kind.POINT, ((math.nan, 0.10, 0.10),), Outcome.REJECTED),
    Step("frame 'world'", Kind.POINT, ((0.15, 0.0, 0.12),), Outcome.REJECTED, 'world'),
    Step('short path', Kind.PATH, ((0.16, -0.06, 0.08), (0.17, 0.0, 0.11),
                                   (0.16, 0.06, 0.08), (0.12, 0.08, 0.12)), Outcome.REACHED),
    Step('behind, high', Kind.POINT, ((-0.08, 0.05, 0.20),), Outcome.REACHED),
)

# The same kinds of step for the SO-101, whose yaw axis stands 39 mm ahead of its base link
# and 62 mm up and which reaches about 0.41 m; it cannot lean back over its base as far as the
# 4-DOF arm's "behind, high", so its last step is behind the yaw axis, higher up.
SO101_SEQUENCE = (
    Step('in front', Kind.POINT, ((0.20, 0.0, 0.15),), Outcome.REACHED),
    Step('left, low', Kind.POINT, ((0.15, 0.12, 0.04),), Outcome.REACHED),
    Step('pose, right', Kind.POSE, ((0.22, -0.08, 0.05),), Outcome.REACHED),
    Step('out of reach', Kind.POINT, ((0.60, 0.05, 0.10),), Outcome.CLOSEST),
    Step('NaN', Kind.POINT, ((math.nan, 0.10, 0.10),), Outcome.REJECTED),
    Step("frame 'world'", Kind.POINT, ((0.20, 0.0, 0.15),), Outcome.REJECTED, 'world'),
    Step('short path', Kind.PATH, ((0.20, -0.06, 0.10), (0.22, 0.0, 0.13),
                                   (0.20, 0.06, 0.10), (0.15, 0.10, 0.15)), Outcome.REACHED),
    Step('behind, high', Kind.POINT, ((-0.05, 0.15, 0.30),), Outcome.REACHED),
)
# A sequence is made for an arm's geometry: an arm file with the SO-101's joints (a calibrated
# copy of config/so101.yaml too) gets the SO-101's, any other the 4-DOF arm's.
SO101_JOINTS = ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll')


def sequence_for(arm: Arm) -> tuple[Step, ...]:
    """Return the demo's steps for ``arm``: the SO-101's for its joints, else the 4-DOF's."""
    return SO101_SEQUENCE if arm.joint_names == SO101_JOINTS else SEQUENCE


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the sequence, print the table (and plot it), and return the exit status."""
    options = _parser().parse_args(argv)
    isolate_ros(force=False)
    if options.config is None:
        options.config = (DEFAULT_BUS_CONFIG if Protocol(options.protocol).is_bus
                          else DEFAULT_CONFIG)
    arm = load_arm(options.config)
    started = time.monotonic()
    stop = StopRequest()
    stop.install()
    try:
        rows, diagnostics = _run(arm, options, stop)
    except DemoError as error:
        print(f'demo failed: {error}', file=sys.stderr)
        return 1
    except DemoStopped as stopped:
        print(f'demo: {stopped}; the board and the nodes were shut down', flush=True)
        return 0
    finally:
        stop.release()
    print(_table(arm, rows, readout_for(arm).label))
    print(diagnostics)
    failures = [r for r in rows if r.outcome is not r.step.expect]
    if options.plot:
        _plot(arm, rows, options.plot)
        print(f'plot: {options.plot}')
    print(f'{len(rows)} steps in {time.monotonic() - started:.1f} s; '
          f'{len(rows) - len(failures)} as expected')
    return 1 if failures else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='python -m fabrik_ros.demo',
                                     description=__doc__.splitlines()[0])
    parser.add_argument('--protocol', choices=[p.value for p in OFFERED_PROTOCOLS],
                        default='native',
                        help='protocol of the simulated board and the driver (default: native)')
    parser.add_argument('--config', type=Path,
                        help='arm parameter file (default: config/arm_4dof.yaml on a PWM '
                             'board, config/so101.yaml on a bus); its servos must be of the '
                             "protocol's kind (pulses or counts)")
    parser.add_argument('--plot', type=Path, help='draw the poses into this PNG file')
    parser.add_argument('--board', choices=['python', 'simavr'], default='python',
                        help='python: the simulated board of fabrik_ros.servo_io; simavr: the '
                             'Uno firmware of hardware/ in the simavr simulator, measured on '
                             'its pins (native protocol only)')
    return parser


class _SimavrPins:
    """The firmware in simavr, seen as the demo sees any board: a port and its pins' pulses."""

    protocol = Protocol.NATIVE

    def __init__(self, link_path: str) -> None:
        self._simavr = SimavrBoard(pty_link=link_path)
        self.path = link_path
        self.pty_path = ''      # known once started

    def __enter__(self) -> '_SimavrPins':
        build_hardware('firmware', 'sim')
        self.pty_path = self._simavr.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._simavr.stop()

    def pulses(self) -> list[int]:
        return self._simavr.held_pulses()


def _run(arm: Arm, options: argparse.Namespace,
         stop: StopRequest) -> tuple[list[Row], str]:
    with tempfile.TemporaryDirectory(prefix='fabrik_demo_') as folder:
        link_path = str(Path(folder) / 'ttyDEMO')
        board: PinBoard
        protocol = Protocol(options.protocol)
        units = {True: 'counts (bus servos)', False: 'pulse widths (a PWM board)'}
        if options.board == 'simavr':
            if protocol is not Protocol.NATIVE:
                raise DemoError('--board simavr runs the fabrik_ros firmware: native protocol')
            board = _SimavrPins(link_path)
        elif protocol.is_bus != (arm.servo_map.unit == 'count'):
            raise DemoError(f'--config {options.config}: its servos are calibrated in '
                            f"{units[arm.servo_map.unit == 'count']}, --protocol "
                            f'{protocol.value} drives {units[protocol.is_bus]}')
        elif protocol.is_bus:
            servos = (*arm.servo_map.calibrations, *arm.servo_map.aux)
            board = SimBus(protocol, link_path, [servo.channel for servo in servos])
        else:
            board = SimBoard(protocol, link_path=link_path)
        with board, DemoSession(arm, board, options.config, stop=stop) as session:
            print(f'{options.board} {board.protocol.value} board on {board.path} '
                  f'-> {board.pty_path}', flush=True)
            session.wait_home()
            rows = [session.run(step) for step in sequence_for(arm)]
            return rows, session.driver_summary()


def _table(arm: Arm, rows: Sequence[Row], held_label: str) -> str:
    """Return the rows as an aligned text table; ``held_label`` heads the board's column."""
    header = ('#', 'step', 'sent on', 'target [m]', 'result', 'residual [mm]',
              f'joint angles [deg] ({", ".join(arm.joint_names)})', held_label, 'time [s]')
    lines = [header]
    for index, row in enumerate(rows, start=1):
        step = row.step
        target = _vector(step.points[-1], '{:.3f}')
        if step.kind is Kind.PATH:
            target = f'{len(step.points)} poses -> {target}'
        residual = '-' if math.isnan(row.residual_m) else f'{1e3 * row.residual_m:.3f}'
        angles = ('- (arm stays)' if row.angles_rad is None
                  else _vector(np.degrees(row.angles_rad), '{:6.1f}'))
        result = row.outcome.value
        if step.kind is Kind.PATH and row.outcome is not Outcome.REJECTED:
            result += f' ({row.commands} solves)'
        if row.outcome is not step.expect:
            result += f' [expected {step.expect.value}]'
        lines.append((str(index), step.label, step.kind.value, target, result, residual,
                      angles, ' '.join(f'{p:4d}' for p in row.held),
                      f'{row.seconds:.2f}'))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = [' | '.join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
            for line in lines]
    text.insert(1, '-+-'.join('-' * width for width in widths))
    return '\n'.join(line.rstrip() for line in text)


def _vector(values: Iterable[float], number: str) -> str:
    return '(' + ', '.join(number.format(v) for v in values) + ')'


def _plot(arm: Arm, rows: Sequence[Row], path: Path) -> None:
    """Draw every commanded pose and its target in 3D into ``path`` (PNG)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(9, 7))
    axes = figure.add_subplot(projection='3d')
    colours = plt.get_cmap('tab10')
    for index, row in enumerate(rows, start=1):
        if row.angles_rad is None:
            continue
        points = arm.fk(row.angles_rad)
        colour = colours((index - 1) % 10)
        axes.plot(points[:, 0], points[:, 1], points[:, 2], '-o', color=colour, markersize=3,
                  label=f'{index} {row.step.label}: {row.outcome.value}')
        targets = np.array(row.step.points)
        axes.plot(targets[:, 0], targets[:, 1], targets[:, 2],
                  '--' if len(targets) > 1 else '', color=colour, marker='x', markersize=8)
    axes.set_xlabel('x [m]')
    axes.set_ylabel('y [m]')
    axes.set_zlabel('z [m]')
    axes.set_title(f'fabrik_ros demo: commanded poses (o) and targets (x), {arm.base_frame}')
    axes.legend(loc='upper left', fontsize='small')
    _equal_scale(axes, [arm.fk(r.angles_rad) for r in rows if r.angles_rad is not None]
                 + [np.array(r.step.points) for r in rows if r.angles_rad is not None])
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _equal_scale(axes, point_sets: Sequence[np.ndarray]) -> None:
    """Give x, y and z the same scale so the arm is drawn undistorted."""
    points = np.vstack(point_sets)
    low, high = points.min(axis=0) - 0.02, points.max(axis=0) + 0.02
    axes.set_xlim(low[0], high[0])
    axes.set_ylim(low[1], high[1])
    axes.set_zlim(min(low[2], 0.0), high[2])
    axes.set_box_aspect(tuple(high - np.array([low[0], low[1], min(low[2], 0.0)])))

