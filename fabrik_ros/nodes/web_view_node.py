"""web_view: see, drive and calibrate the arm in a browser (viser), beside or instead of RViz.

    ros2 run fabrik_ros web_view --ros-args --params-file config/arm_4dof.yaml
        -p arm_file:=config/arm_4dof.yaml   (the same file: calibration saves a copy of it)

then open http://127.0.0.1:8080. Needs ``pip install viser yourdfpy``; nothing else in
fabrik_ros does.
"""

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
import sys
from typing import Optional

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PoseStamped
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters
from rclpy.client import Client
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from std_srvs.srv import SetBool, Trigger
from visualization_msgs.msg import MarkerArray

from fabrik_ros.nodes.configured_node import ConfiguredNode
from fabrik_ros.nodes.markers import CHAIN_ID, NAMESPACE, TARGET_ID
from fabrik_ros.nodes.ros_parameters import (
    declare,
    declare_arm,
    ParameterConfigError,
    refuse_unknown_overrides,
)
from fabrik_ros.nodes.spin import spin_until_shutdown
from fabrik_ros.webview.calibration import CalibrationError
from fabrik_ros.webview.calibration_by_hand import HandCalibrationSession
from fabrik_ros.webview.calibration_session import CalibrationSession
from fabrik_ros.webview.status_view import Status, StatusBoard

INSTALL_HINT = 'web_view needs viser and yourdfpy: pip install viser yourdfpy'
# Not latched, on purpose: a target replayed to a fabrik_ik started later would move the arm
# to wherever the gizmo was dragged long ago. Only the newest target counts.
_NEWEST_TARGET_ONLY = QoSProfile(depth=1, durability=DurabilityPolicy.VOLATILE)
# As fabrik_ik publishes it: latched, so a page opened later shows the current verdict.
_REACHED_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# No arm has more servos than this: a servo_positions message naming more is not the driver's.
_MAX_SERVOS = 64


class WebViewNode(ConfiguredNode):
    """Serve the arm page and connect it to the arm's topics and the driver's services.

    - In: ``joint_states`` (the drawn arm), ``ik_markers`` (the solver's target and pose),
      ``target_reached`` (whether fabrik_ik reached it: green or red), ``/diagnostics``.
    - Out: ``target_point`` as the gizmo is dragged (``target_pose``, with its orientation,
      when ``use_pose_orientation``), ``<driver>/jog_us`` while calibrating.
    - Calls ``<driver>/home`` and ``<driver>/enable``.
    - Bus servos: ``<driver>/servo_positions`` (their counts, as the arm is moved by hand),
      and the driver's ``protocol`` parameter (the homing offset's sign per maker).
    """

    def __init__(self, **node_options) -> None:
        super().__init__('web_view', **node_options)
        from fabrik_ros.webview.page import WebPage  # viser: only this node needs it
        self._arm = declare_arm(self)
        self._declare_own_parameters()
        refuse_unknown_overrides(self)
        driver = self._parameter('driver')
        self._home: Client[Trigger.Request, Trigger.Response] = self.create_client(
            Trigger, f'{driver}/home')
        self._enable: Client[SetBool.Request, SetBool.Response] = self.create_client(
            SetBool, f'{driver}/enable')
        self._jog = self.create_publisher(JointState, f'{driver}/jog_us', 10)
        self._point = self.create_publisher(PointStamped, 'target_point', _NEWEST_TARGET_ONLY)
        self._pose = self.create_publisher(PoseStamped, 'target_pose', _NEWEST_TARGET_ONLY)
        self._statuses = StatusBoard()
        # What the user last asked of ~/enable, until the driver reports it (or refuses):
        # reports published before the driver took the request must not flip the box back.
        self._asked_enabled: Optional[bool] = None
        session = self._calibration_session()
        self.page = WebPage(self._arm, host=self._parameter('host'),
                            port=self._parameter('port'), actions=self,
                            calibration=session,
                            jog_range_us=self._jog_range_us(),
                            orientation=self._parameter('use_pose_orientation'))
        self.create_subscription(JointState, 'joint_states', self._on_joint_states, 10)
        self.create_subscription(MarkerArray, 'ik_markers', self._on_markers, 10)
        self.create_subscription(Bool, 'target_reached', self._on_reached, _REACHED_QOS)
        self.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, 10)
        if isinstance(session, HandCalibrationSession):
            self._listen_to_bus_servos(driver, session)
        self._announce()

    def _announce(self) -> None:
        """Say where the page is; print its token once, to this terminal only."""
        host = self._parameter('host')
        self.get_logger().info(f'serving the arm on http://{host}:{self.page.port}')
        if self.page.token is None:
            return
        # Not through the ROS logger: it also publishes on /rosout and writes the log files.
        print(f'web_view: whoever opens the page drives the arm; it needs this address, '
              f'token included (printed only here): {self.page.url()}', flush=True)

    def _declare_own_parameters(self) -> None:
        declare(self, 'host', '127.0.0.1', 'Address the page is served on (0.0.0.0: every '
                'interface, so other machines can drive the arm: they need the token that '
                'web_view prints at start)')
        declare(self, 'port', 8080, 'TCP port of the page (0: any free port; one in use '
                'stops web_view with a line naming it)', ints=(0, 65535))
        declare(self, 'driver', 'servo_driver', 'Name of the servo driver node whose ~/home, '
                '~/enable and ~/jog_us the page uses')
        declare(self, 'use_pose_orientation', False, 'Let the gizmo turn and publish '
                'target_pose with its orientation (set it as fabrik_ik has it)')
        declare(self, 'jog_range_us', [500.0, 2500.0], 'Range of the calibration slider '
                '[µs]; the driver still refuses pulses outside its jog_guard_us')
        declare(self, 'arm_file', '', 'The arm file the nodes read: the calibrated copy keeps '
                "its text and comments ('' = calibration cannot be saved)")
        declare(self, 'calibration_file', '', "Where the calibrated copy goes ('' = "
                '<arm_file>.calibrated.yaml); an existing file there is backed up first')

    def _jog_range_us(self) -> tuple[float, float]:
        bounds = list(self._parameter('jog_range_us'))
        if len(bounds) != 2 or not 0.0 < bounds[0] < bounds[1]:
            raise ParameterConfigError('jog_range_us', bounds, 'must be two pulse widths '
                                       '[min, max] with 0.0 < min < max')
        return bounds[0], bounds[1]

    def _calibration_session(self) -> CalibrationSession | HandCalibrationSession:
        source = Path(self._parameter('arm_file')) if self._parameter('arm_file') else None
        target = self._parameter('calibration_file')
        if target:
            target = Path(target)
        elif source is not None:
            target = source.with_name(f'{source.stem}.calibrated{source.suffix}')
        if self._arm.servo_map.unit == 'count':
            return HandCalibrationSession(self._arm, source, target or None)
        return CalibrationSession(self._arm, source, target or None)

    def _listen_to_bus_servos(self, driver: str, session: HandCalibrationSession) -> None:
        """Show the servos' counts; ask the driver's protocol until it answers."""
        self._hand = session
        self.create_subscription(JointState, f'{driver}/servo_positions',
                                 self._on_servo_positions, 10)
        self._driver_parameters: Client[GetParameters.Request, GetParameters.Response] = \
            self.create_client(GetParameters, f'{driver}/get_parameters')
        self._protocol_timer = self.create_timer(1.0, self._ask_protocol)

    def _on_servo_positions(self, msg: JointState) -> None:
        if len(msg.name) == len(msg.position) <= _MAX_SERVOS:
            self.page.show_servo_positions(dict(zip(msg.name, msg.position, strict=True)))

    def _ask_protocol(self) -> None:
        if not self._driver_parameters.service_is_ready():
            return
        self._protocol_timer.cancel()
        self._driver_parameters.call_async(GetParameters.Request(names=['protocol'])) \
            .add_done_callback(self._on_protocol)

    def _on_protocol(self, done) -> None:
        values = done.result().values if done.exception() is None else []
        if not values or values[0].type != ParameterType.PARAMETER_STRING:
            self._protocol_timer.reset()    # not answered (yet): ask again
            return
        try:
            self._hand.set_protocol(values[0].string_value)
        except CalibrationError as error:
            self.page.show_reply(f'calibration by hand: {error}')

    # -- from the arm to the page ------------------------------------------------------------

    def _on_joint_states(self, msg: JointState) -> None:
        if len(msg.name) == len(msg.position):
            self.page.show_joint_states(dict(zip(msg.name, msg.position, strict=True)))

    def _on_markers(self, msg: MarkerArray) -> None:
        ours = {m.id: m for m in msg.markers if m.ns == NAMESPACE}
        if CHAIN_ID not in ours or TARGET_ID not in ours:
            return
        chain = [(p.x, p.y, p.z) for p in ours[CHAIN_ID].points]
        position = ours[TARGET_ID].pose.position
        self.page.show_solution(chain, (position.x, position.y, position.z))

    def _on_reached(self, msg: Bool) -> None:
        self.page.show_reached(bool(msg.data))

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        # /diagnostics is global; in a namespace (one of two arms) show this arm's nodes only.
        own = self.get_namespace().strip('/')
        statuses = [Status(s.name, s.level[0] if isinstance(s.level, bytes) else int(s.level),
                           s.message, {kv.key: kv.value for kv in s.values})
                    for s in msg.status if not own or s.name.startswith(f'{own}/')]
        self._statuses.update(statuses)
        self.page.show_status(self._statuses.markdown())
        driver = self.resolve_service_name(self._parameter('driver')).lstrip('/')
        for status in statuses:
            if status.name == f'{driver}: servo board' and 'enabled' in status.values:
                self._show_reported_enabled(status.values['enabled'] == 'True')

    def _show_reported_enabled(self, enabled: bool) -> None:
        if self._asked_enabled is not None and enabled != self._asked_enabled:
            return
        self._asked_enabled = None
        self.page.show_attached(enabled)

    # -- from the page to the arm (PageActions; called from the page's threads) -------------

    def send_target(self, position_m, wxyz) -> None:
        """Publish the gizmo's pose as the IK target, in the arm's base frame."""
        stamp = self.get_clock().now().to_msg()
        frame = self._arm.base_frame
        if self._parameter('use_pose_orientation'):
            pose = PoseStamped()
            pose.header.stamp, pose.header.frame_id = stamp, frame
            pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = position_m
            o = pose.pose.orientation
            o.w, o.x, o.y, o.z = wxyz
            self._pose.publish(pose)
            return
        point = PointStamped()
        point.header.stamp, point.header.frame_id = stamp, frame
        point.point.x, point.point.y, point.point.z = position_m
        self._point.publish(point)

    def home(self) -> None:
        """Call the driver's ~/home and show its answer."""
        self._call(self._home, Trigger.Request())

    def enable(self, attached: bool) -> None:
        """Call the driver's ~/enable and show its answer."""
        self._asked_enabled = bool(attached)
        self._call(self._enable, SetBool.Request(data=bool(attached)),
                   on_refused=self._forget_asked_enabled)

    def _forget_asked_enabled(self) -> None:
        self._asked_enabled = None      # refused: the next report shows the truth again

    def jog(self, joint: str, pulse_us: float) -> None:
        """Publish one calibration jog of ``joint`` to ``pulse_us`` [µs]."""
        self._jog.publish(JointState(name=[joint], position=[float(pulse_us)]))

    def end_jog(self) -> None:
        """Publish the empty jog that ends the session (the driver takes the arm home)."""
        self._jog.publish(JointState())
        self.page.show_reply('jog ended: the arm goes home slowly')

    def _call(self, client, request, on_refused: Callable[[], None] = lambda: None) -> None:
        """Call ``client``; show the answer; run ``on_refused`` unless the service succeeded."""
        if not client.service_is_ready():
            self.page.show_reply(f'{client.srv_name} is not available (is servo_driver '
                                 'running? parameter driver names it)')
            on_refused()
            return
        client.call_async(request).add_done_callback(
            lambda done: self._show_answer(client.srv_name, done, on_refused))

    def _show_answer(self, service: str, done, on_refused: Callable[[], None]) -> None:
        error = done.exception()
        if error is not None or not done.result().success:
            on_refused()
        self.page.show_reply(f'{service}: {error or done.result().message}')

    def shutdown(self) -> None:
        """Stop serving the page."""
        self.page.stop()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='web_view', description=__doc__.splitlines()[0],
        epilog='Parameters (-p name:=value): host (127.0.0.1), port (8080), driver '
               '(servo_driver), use_pose_orientation (false), jog_range_us ([500.0, 2500.0]), '
               'arm_file, calibration_file. Install: pip install viser yourdfpy.')
    parser.add_argument('ros_args', nargs='*',
                        help='--ros-args --params-file <arm file> [-p name:=value ...]')
    return parser


def main(args: Optional[Sequence[str]] = None) -> None:
    """Run web_view until Ctrl-C; exit 1 with one line if viser is not installed."""
    argv = list(sys.argv if args is None else args)
    own = argv[1:argv.index('--ros-args')] if '--ros-args' in argv else argv[1:]
    if '-h' in own or '--help' in own:
        _parser().print_help()
        return
    try:
        import viser  # noqa: F401
        import yourdfpy  # noqa: F401
    except ImportError as error:
        print(f'{INSTALL_HINT} ({error.name} is missing)', file=sys.stderr)
        raise SystemExit(1) from None
    try:
        spin_until_shutdown(WebViewNode, argv)
    except KeyboardInterrupt:
        pass    # Ctrl-C while the page was still being built: as normal a stop as any
