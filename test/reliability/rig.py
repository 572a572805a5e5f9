"""The pipeline under test: servo_driver (and fabrik_ik) in-process on a TappedBoard, a probe.

The arm is the shipped 4-DOF config with its servos calibrated to a narrower pulse range
(:data:`CALIBRATED_US`) than the protocol allows, so "never a pulse outside the calibrated
range" is a check with teeth: the board's own limits would let 500..2500 µs through.
"""

from collections.abc import Sequence
from pathlib import Path
import time
from typing import Optional

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import PointStamped
import numpy as np
from sensor_msgs.msg import JointState
import yaml

from fabrik_ros.driver.board_layout import BoardLayout
from fabrik_ros.kinematics import Arm, load_arm
from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.ik_node import FabrikIkNode
from test.nodes.ros_harness import RosHarness
from test.reliability.tapped_board import TappedBoard

REPO_ROOT = Path(__file__).resolve().parents[2]
SHIPPED_CONFIG = REPO_ROOT / 'config' / 'arm_4dof.yaml'
CALIBRATED_US = (900, 2100)
# Quick moves, frequent reports, and a quick diagnostics period, as the node tests use.
FAST = ('-p', 'home_move_time_s:=0.2', '-p', 'max_speed_rad_s:=[20.0, 20.0, 20.0, 20.0]',
        '-p', 'poll_rate_hz:=20.0', '-p', 'diagnostics_period_s:=0.1')
OK, ERROR = DiagnosticStatus.OK, DiagnosticStatus.ERROR


def calibrated_config(directory: Path) -> Path:
    """Write the shipped arm config with every servo calibrated to CALIBRATED_US; return it."""
    document = yaml.safe_load(SHIPPED_CONFIG.read_text())
    params = document['/**']['ros__parameters']
    for servo in params['servos'].values():
        servo['min_us'], servo['max_us'] = (float(v) for v in CALIBRATED_US)
    path = directory / 'arm_calibrated.yaml'
    path.write_text(yaml.safe_dump(document))
    return path


class Rig:
    """A TappedBoard behind a symlink, servo_driver on it, optionally fabrik_ik, and a probe.

    :param ros: the harness whose executor spins everything.
    :param config: the arm config file every node reads.
    :param board: the (started or not) board; the driver opens its ``link_path``.
    :param ik: also run fabrik_ik, so targets go through the whole pipeline.
    :param extra: more ``-p name:=value`` arguments for the driver.
    """

    def __init__(self, ros: RosHarness, config: Path, board: TappedBoard, *, ik: bool = False,
                 extra: Sequence[str] = ()) -> None:
        self.ros = ros
        self.config = config
        self.board = board
        self.arm: Arm = load_arm(config)
        self.layout = BoardLayout.of(self.arm)
        self.extra = tuple(extra)
        self.ik: Optional[FabrikIkNode] = None
        if ik:
            self.ik = ros.add(FabrikIkNode(context=ros.context,
                                           cli_args=['--ros-args', '--params-file', str(config),
                                                     *ros.ros_args,
                                                     '-p', 'interactive_target:=false',
                                                     '-p', 'diagnostics_period_s:=0.1']))
        self.driver = self.start_driver()
        self.probe = ros.probe()
        self.commands_seen: list[JointState] = []
        self.diagnostics: dict[str, list[DiagnosticStatus]] = {}
        self.probe.create_subscription(JointState, 'joint_commands', self.commands_seen.append,
                                       100)
        self.probe.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics,
                                       50)
        self.commands = self.probe.create_publisher(JointState, 'joint_commands', 100)
        self.points = self.probe.create_publisher(PointStamped, 'target_point', 100)

    def start_driver(self, extra: Sequence[str] = ()) -> ServoDriverNode:
        """Start a servo_driver on the board (again, after :meth:`stop_driver`)."""
        args = ['--ros-args', '--params-file', str(self.config), *self.ros.ros_args,
                '-p', f'port:={self.board.link_path}',
                '-p', f'protocol:={self.board.protocol.value}', *FAST, *self.extra, *extra]
        self.driver = self.ros.add(ServoDriverNode(context=self.ros.context, cli_args=args))
        return self.driver

    def stop_driver(self) -> None:
        """Shut the driver down as main() does (its on_shutdown applies) and destroy it."""
        self.ros.destroy(self.driver)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        """Keep this test's statuses by node name ('<namespace>/servo_driver: ...' or not)."""
        own = self.ros.namespace.lstrip('/') + '/'
        for status in msg.status:
            node = status.name.split(':')[0]
            if '/' in node and not node.startswith(own):
                continue
            self.diagnostics.setdefault(node.rsplit('/', 1)[-1], []).append(status)

    # -- arm arithmetic ----------------------------------------------------------------------

    def pulses(self, angles: Sequence[float]) -> list[int]:
        """Return the channel vector the driver sends for ``angles`` [µs]."""
        return self.layout.pulse_vector(self.arm.servo_map.to_units(angles))

    def joint_pulses(self, vector: Sequence[int]) -> list[int]:
        """Return the joints' entries of a channel vector."""
        return [vector[ch] for ch in self.layout.joint_channels]

    # -- waiting -----------------------------------------------------------------------------

    def wait_subscribed(self) -> None:
        """Wait until the nodes listen to the probe's publishers."""
        publishers = [self.commands] + ([self.points] if self.ik is not None else [])
        self.ros.spin_until(lambda: all(p.get_subscription_count() for p in publishers),
                            timeout_s=10.0, what='the nodes to subscribe the probe topics')

    def wait_board_at(self, angles: Sequence[float], what: str, timeout_s: float = 10.0) -> None:
        """Wait until the board's targets and positions are the pulses of ``angles``."""
        expected = self.joint_pulses(self.pulses(angles))

        def there() -> bool:
            return (self.joint_pulses(self.board.targets()) == expected
                    and self.joint_pulses(self.board.positions()) == expected)

        self.ros.spin_until(there, timeout_s=timeout_s, what=lambda: (
            f'{what}: board targets {self.board.targets()}, positions '
            f'{self.board.positions()}, expected {expected}; driver {self.last_values()}'))

    def wait_level(self, level: bytes, what: str, timeout_s: float = 10.0) -> DiagnosticStatus:
        """Wait for a servo_driver diagnostics status of ``level``; return it."""
        def seen() -> bool:
            return any(s.level == level for s in self.diagnostics.get('servo_driver', [])[-3:])
        self.ros.spin_until(seen, timeout_s=timeout_s, what=what)
        return self.diagnostics['servo_driver'][-1]

    def last_values(self, node: str = 'servo_driver') -> dict[str, str]:
        """Return the key/values of ``node``'s latest diagnostics status."""
        statuses = self.diagnostics.get(node)
        return {kv.key: kv.value for kv in statuses[-1].values} if statuses else {}

    def spin_for(self, seconds: float) -> None:
        """Keep the executor (and every timer on it) running for ``seconds``."""
        end = time.monotonic() + seconds
        self.ros.spin_until(lambda: time.monotonic() >= end, timeout_s=seconds + 5.0,
                            what=f'{seconds} s of spinning')


def joint_state(names: Sequence[str], angles: Sequence[float]) -> JointState:
    """Return a JointState command for ``angles`` [rad]."""
    return JointState(name=list(names), position=[float(a) for a in angles])


def sweep_pose(home: Sequence[float], t_s: float) -> tuple[float, ...]:
    """Return a smooth pose near ``home`` at time ``t_s`` (slow sines, well inside limits)."""
    phases = np.arange(len(home))
    return tuple(float(h + 0.3 * np.sin(0.7 * t_s + 1.3 * p)) for h, p in zip(home, phases,
                                                                             strict=True))
