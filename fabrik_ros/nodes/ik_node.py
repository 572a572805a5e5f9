"""fabrik_ik: target poses, points and paths in; joint commands and IK markers out."""

from collections.abc import Callable
import math
import time
from typing import Optional

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PoseStamped
from nav_msgs.msg import Path
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from visualization_msgs.msg import InteractiveMarkerFeedback, MarkerArray

from fabrik_ros.kinematics import Arm, IkResult, TargetError
from fabrik_ros.kinematics.approach import ApproachMiss
from fabrik_ros.monitoring.cause_throttle import CauseThrottle
from fabrik_ros.monitoring.solve_stats import SolveStats
from fabrik_ros.nodes.configured_node import ConfiguredNode
from fabrik_ros.nodes.diagnostics import (
    diagnostic_array,
    diagnostic_status,
    Level,
    status_name,
)
from fabrik_ros.nodes.frames import BaseFrames, TransformWait
from fabrik_ros.nodes.interactive_target import (
    InteractiveTarget,
    target_from_feedback,
    Vector,
)
from fabrik_ros.nodes.jog_intake import JogIntake
from fabrik_ros.nodes.joint_states import (
    JointCommandError,
    JointStateMessage,
    positions_by_name,
)
from fabrik_ros.nodes.markers import solution_markers, workspace_marker
from fabrik_ros.nodes.path_follower import PathFollower
from fabrik_ros.nodes.path_intake import PathIntake, PathRequest
from fabrik_ros.nodes.ros_parameters import (
    declare,
    declare_arm,
    refuse_unknown_overrides,
    with_solver_changes,
)
from fabrik_ros.nodes.spin import spin_until_shutdown
from fabrik_ros.nodes.targets import (
    cause_of,
    Target,
    target_from_point,
    target_from_pose,
)
from fabrik_ros.nodes.timers import create_timer, set_period

RUNTIME_SOLVER_KEYS = ('solver.tolerance_m', 'solver.max_iterations',
                       'solver.min_improvement_m', 'solver.bend')
_WARN_EVERY_S = 2.0
# Targets closer together than this are a stream, each solved from the previous answer [s].
STREAM_GAP_S = 1.0
_INTERACTIVE = 'interactive target'
# Latched so that RViz, started later, still shows the last solution.
_MARKER_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Drawing markers costs more than a solve; RViz needs no more than a screen's worth a second.
_MARKER_RATE_HZ = 30.0
# Nobody draws markers on a robot without RViz: then the newest solution waits, and a reader
# is looked for this often [s].
_READER_WAIT_S = 1.0
# Targets are positions, not steps: when solving falls behind, only the newest one matters.
_LATEST_TARGET = 1
# A pose target whose tool axis ends farther than this from the asked approach gets a warning
# and WARN diagnostics [deg]. The solver meets an approach the arm can meet to 1e-9 rad; a
# hobby servo's gear backlash alone leaves the tool about a degree off, so a smaller miss is
# not worth a line (/diagnostics reports every miss as it is).
APPROACH_WARN_DEG = 1.0
# A joint this near an end of its range is named as holding the tool off the approach [rad].
_AT_LIMIT_RAD = 1e-6


class FabrikIkNode(ConfiguredNode):
    """Solve each target with the arm's constrained FABRIK and publish the joint command.

    - ``target_point`` (PointStamped), ``target_pose`` (PoseStamped; its orientation's x axis
      is the tool approach when ``use_pose_orientation``) and ``target_path`` (nav_msgs/Path,
      followed along a smooth curve from the tool's position at ``path_speed_m_s``). A new
      target ends a path. A path of more than ``MAX_PATH_POSES`` poses is refused from its
      header; a smaller one is prepared on a worker thread (path_intake), so targets are
      answered meanwhile, and a target that comes first supersedes it.
    - Targets in another frame than the base frame are transformed with tf2_ros where it is
      installed (nodes/frames.py). A target that is not finite, in a frame tf cannot
      transform (without tf2_ros: any but the base frame; an empty frame_id means the base
      frame), or (with ``use_pose_orientation``) has no usable orientation is dropped with a
      throttled warning naming the topic it came on. An unreachable one moves the arm to the
      closest pose within limits, with a warning that says whether the position or only the
      approach direction is out of reach, and WARN diagnostics. A pose target whose tool
      axis ends more than ``APPROACH_WARN_DEG`` from its approach is warned of with the angle
      and why (the part of the approach outside the arm's vertical plane, joints at a
      limit), and /diagnostics carries the angle of every pose target.
    - Target subscriptions keep only the newest message (a burst leaves one solve: the
      latest); path poses all count, so ``target_path`` queues as usual.
    - ``ik_markers`` show the newest solution at most 30 times a second (latched), and
      ``target_reached`` (std_msgs/Bool, latched with them) says whether it reached its target;
      each is published only while someone subscribes to it, and a subscriber that comes
      later gets the newest solution within a second.
    - ``jog/twist`` (TwistStamped) and ``jog/joints`` (JointJog) drive the tool and the joints
      live (:mod:`~fabrik_ros.nodes.jog_intake`); a target ends a jog, a jog ends a path.
    - Each solve is seeded with the latest ``joint_states`` (else the last command), so the
      elbow does not flip between consecutive targets.
    - ``command_sink``, if given, is called with each joint command [rad, joint_names order]
      before it is published: a driver in the same process takes it without a DDS hop.
    - ``solver.tolerance_m``, ``solver.max_iterations``, ``solver.min_improvement_m`` and
      ``solver.bend`` can be changed at run time; bad values are refused with the reason.
    """

    def __init__(self, *, command_sink: Optional[Callable[[tuple[float, ...]], None]] = None,
                 **node_options) -> None:
        super().__init__('fabrik_ik', **node_options)
        # The on-set callback also sees the arm's own declarations, which declare_arm checks:
        # it applies solver changes only once the arm is built.
        self._arm_built = False
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._arm: Arm = declare_arm(self, mutable=RUNTIME_SOLVER_KEYS)
        self._arm_built = True
        self._declare_own_parameters()
        # Jog (issue 36): jog/twist and jog/joints, integrated into joint commands.
        # Twists in another frame than the base or tool frame are rotated through tf.
        twist_topic = self.resolve_topic_name('jog/twist')
        self._jog = JogIntake(self, arm=lambda: self._arm, seed=self._seed,
                              send=self._send_jog, stop_path=self._stop_path,
                              rotation_to_base=lambda frame, stamp: self._frames.rotation_to_base(
                                  frame, stamp.to_msg(), where=twist_topic))
        refuse_unknown_overrides(self)
        self._names = self._arm.joint_names
        self._command_sink = command_sink
        self._last_command: Optional[tuple[float, ...]] = None
        self._last_command_s = -math.inf      # when it was solved (monotonic) [s]
        self._last_approach_error_rad: Optional[float] = None   # of the last solve
        self._joint_states: Optional[tuple[float, ...]] = None
        self._follower: Optional[PathFollower] = None
        self._path_started_s = 0.0
        self._path_topic = 'target_path'
        self._paths = PathIntake()
        self._path_active = False     # a path is being prepared or followed
        self._stats = SolveStats()
        self._rejections = CauseThrottle(_WARN_EVERY_S)
        self._commands = self.create_publisher(JointState, 'joint_commands', 10)
        self._command_msg = JointStateMessage()
        self._markers = self.create_publisher(MarkerArray, 'ik_markers', _MARKER_QOS)
        self._reached = self.create_publisher(Bool, 'target_reached', _MARKER_QOS)
        self._diagnostics = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        # Targets in any tf frame: a tf2_ros buffer and listener on this node, if installed.
        self._frames = BaseFrames.for_node(self, self._arm.base_frame)
        self._tf_wait = TransformWait(self, self._frames, self._accept)
        self._subscribe_targets()
        self.create_subscription(JointState, 'joint_states', self._on_joint_states, 10)
        self._path_timer = create_timer(self, 1.0 / self._path_rate_hz, self._on_path_timer)
        self._path_timer.cancel()
        self._unpublished: Optional[tuple] = None
        self._reported_s = time.monotonic()
        self._marker_timer = create_timer(self, 1.0 / _MARKER_RATE_HZ, self._on_marker_timer)
        create_timer(self, self._diagnostics_period_s, self._publish_diagnostics)
        self._publish_markers(self._arm.home, self._arm.fk(self._arm.home)[-1], None,
                              reached=True, always=True)
        self._interactive: Optional[InteractiveTarget] = None
        if self._parameter('interactive_target'):
            self._interactive = InteractiveTarget.serve(
                self, frame_id=self._arm.base_frame,
                start_m=_vector(self._arm.fk(self._arm.home)[-1]),
                on_drag=self._on_interactive_drag)

    # -- set-up ------------------------------------------------------------------------------

    def _declare_own_parameters(self) -> None:
        declare(self, 'follow_rviz_tools', False, 'Also take targets from RViz: Publish '
                'Point (/clicked_point) and 2D Goal Pose (/goal_pose)')
        declare(self, 'interactive_target', True, 'Serve a draggable 3D target for RViz when '
                'the interactive_markers package is installed')
        declare(self, 'use_pose_orientation', False, 'Use the x axis of a target_pose '
                'orientation as the tool approach direction', read_only=False)
        declare(self, 'path_speed_m_s', 0.05, 'Speed a target_path is followed at [m/s]',
                floats=(0.001, 2.0), read_only=False)
        self._path_rate_hz = declare(self, 'path_rate_hz', 20.0, 'How often a followed path '
                                     'is solved [Hz]', floats=(1.0, 200.0))
        self._diagnostics_period_s = declare(self, 'diagnostics_period_s', 1.0,
                                             'Period of /diagnostics [s]', floats=(0.1, 60.0))

    def _subscribe_targets(self) -> None:
        latest = _LATEST_TARGET
        self._subscribe(PointStamped, 'target_point', self._on_target_point, latest)
        self._subscribe(PoseStamped, 'target_pose', self._on_target_pose, latest)
        self._subscribe(Path, 'target_path', self._on_target_path, 10, raw=True)
        if self._parameter('follow_rviz_tools'):
            self._subscribe(PointStamped, '/clicked_point', self._on_target_point, latest)
            self._subscribe(PoseStamped, '/goal_pose', self._on_target_pose, latest)

    def _subscribe(self, msg_type, topic: str, on_message, depth: int, *,
                   raw: bool = False) -> None:
        """Subscribe ``on_message(msg, topic)``, with the topic as resolved (after remapping).

        Log lines then name the topic the user published on, ``/goal_pose`` say, not the
        name in the code. With ``raw``, ``msg`` is the serialized message.
        """
        resolved = self.resolve_topic_name(topic)    # once: asking the subscription costs a call
        self.create_subscription(msg_type, topic, lambda msg: on_message(msg, resolved), depth,
                                 raw=raw)

    def _on_set_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        """Refuse solver options the core refuses, with its reason; apply the others."""
        if not self._arm_built:
            return SetParametersResult(successful=True)
        changes = {p.name: p.value for p in parameters if p.name in RUNTIME_SOLVER_KEYS}
        try:
            arm = with_solver_changes(self._arm, changes)
        except ValueError as error:
            return SetParametersResult(successful=False, reason=str(error))
        self._arm = arm
        return SetParametersResult(successful=True)

    # -- targets -----------------------------------------------------------------------------

    def _on_target_point(self, msg: PointStamped, topic: str) -> None:
        self._accept(lambda: target_from_point(msg, self._frames, topic=topic), topic)

    def _on_target_pose(self, msg: PoseStamped, topic: str) -> None:
        use_orientation = self._parameter('use_pose_orientation')
        self._accept(lambda: target_from_pose(msg, self._frames, topic=topic,
                                              use_orientation=use_orientation), topic)

    def _on_interactive_drag(self, feedback: InteractiveMarkerFeedback) -> None:
        self._accept(lambda: target_from_feedback(feedback, self._frames), _INTERACTIVE)

    def _accept(self, read: Callable[[], Target], source: str) -> None:
        """Solve the target ``read`` returns; a target message or solver refusal is dropped.

        A target whose transform tf does not have yet waits for it (frames.TransformWait).
        """
        try:
            target = read()
        except TargetError as error:
            if not self._tf_wait.hold(error, read, source):
                self._reject(error)
            return
        self._tf_wait.drop()
        try:
            self._jog.stop()
            self._stop_path()
            self._solve(target.position_m, target.approach, source)
        except TargetError as error:
            self._reject(error)
            return
        if self._interactive is not None and source != _INTERACTIVE:
            self._interactive.move_to(target.position_m)

    def _reject(self, error: TargetError) -> None:
        self._stats.record_rejected()
        if self._rejections.allow(cause_of(error)):
            self.get_logger().warning(f'target dropped: {error}')

    def _on_target_path(self, serialized: bytes, topic: str) -> None:
        """Hand the path to the worker; the arm holds still until it is ready."""
        start_m = _vector(self._arm.fk(self._seed() or self._arm.home)[-1])
        request = PathRequest(serialized, topic, self._frames, start_m,
                              self._parameter('path_speed_m_s'), self._arm)
        try:
            self._paths.submit(request)
        except TargetError as error:
            self._reject(error)
            return
        self._tf_wait.drop()          # the path is newer than a target waiting for tf
        self._jog.stop()
        self._follower = None
        self._path_active = True
        self._path_timer.reset()      # its ticks take the path once it is prepared

    def _take_prepared_path(self) -> Optional[PathFollower]:
        """Start following the path the worker prepared; None while there is none (yet)."""
        try:
            path = self._paths.take()
        except TargetError as error:
            self._reject(error)
            path = None
        if path is None:
            if not self._paths.pending:
                self._path_timer.cancel()
            return None
        self._follower = path.follower
        self._path_topic = path.topic
        self._path_started_s = self._now_s()
        poses = f'{path.poses} pose' + ('s' if path.poses != 1 else '')
        unused = ('a path steers the tool point only; use_pose_orientation applies to '
                  'target_pose' if self._parameter('use_pose_orientation')
                  else 'use_pose_orientation is false')
        self.get_logger().info(f'following {path.topic} ({poses}) from the tool position '
                               f'{_fmt(path.start_m)}: {path.follower.length_m:.3f} m in '
                               f"{path.follower.duration_s:.2f} s; its poses' orientations "
                               f'are not used ({unused})')
        return self._follower

    def _on_path_timer(self) -> None:
        follower = self._follower or self._take_prepared_path()
        if follower is None:
            return
        elapsed_s = self._now_s() - self._path_started_s
        done = elapsed_s >= follower.duration_s
        try:
            self._solve(follower.position_at(elapsed_s), None, self._path_topic)
        except TargetError as error:
            self._reject(error)
            done = True
        if done:
            self._stop_path()

    def _stop_path(self) -> None:
        """End the path being followed, and drop one being prepared.

        Called for every target: with no path, nothing to do (a lock and a timer call saved).
        """
        if not self._path_active:
            return
        self._path_active = False
        self._paths.cancel()
        self._follower = None
        self._path_timer.cancel()

    def _on_joint_states(self, msg: JointState) -> None:
        fallback = self._joint_states or self._last_command or tuple(self._arm.home)
        try:
            self._joint_states = positions_by_name(msg, self._names, fallback)
        except JointCommandError:
            return  # joint_states of other joints (a gripper, another arm) are no seed

    # -- solving -----------------------------------------------------------------------------

    def _seed(self) -> Optional[tuple[float, ...]]:
        """Return the pose to solve from: the last answer within a stream, else the arm's.

        The arm's redundant joints (three pitch joints for a point) can take a whole family of
        poses. Solved from the reported joint states, which lag a stream of targets (published
        at 20 Hz, servos still slewing), consecutive answers hopped between members of that
        family: the wrist jumped by up to half a radian between targets 2 ms apart. Within a
        stream the previous answer keeps them on one branch; after a pause the joint states
        say where the arm is (moved by a jog, a home, another node).
        """
        if (self._last_command is not None
                and time.monotonic() - self._last_command_s < STREAM_GAP_S):
            return self._last_command
        return self._joint_states or self._last_command

    def _solve(self, position_m, approach, source: str) -> IkResult:
        """Solve, publish the command, then keep the figures and note the markers to draw.

        The command goes out first: what follows is bookkeeping the servos need not wait for.

        :raises TargetError: if the solver refuses the target (nothing is published)
        """
        seed = self._seed()
        started = time.perf_counter()
        result = self._arm.ik(position_m, seed, approach=approach)
        solve_s = time.perf_counter() - started
        command = result.joint_angles_rad     # the floats a stream's next seed steps on from
        self._send(command)
        self._stats.record(reached=result.reached, error_m=result.residual_m, solve_s=solve_s)
        self._last_approach_error_rad = result.approach_error_rad
        if not result.reached or _approach_missed(result):
            self._warn_unreached(source, position_m, approach, result, seed)
        self._unpublished = (command, position_m, approach, result.reached)
        if self._marker_timer.is_canceled():
            self._marker_timer.reset()
        return result

    def _send(self, command: tuple[float, ...]) -> None:
        """Publish ``command``, the seed of what follows within a stream."""
        self._last_command = command
        self._last_command_s = time.monotonic()
        if self._command_sink is not None:
            self._command_sink(command)
        self._commands.publish(self._command_message(command))

    def _send_jog(self, command: tuple[float, ...], tool_m, approach, reached: bool) -> None:
        """Publish a jog's command and note its markers (the jog asked ``tool_m``)."""
        self._send(command)
        self._unpublished = (command, tool_m, approach, reached)
        if self._marker_timer.is_canceled():
            self._marker_timer.reset()

    def _warn_unreached(self, source: str, position_m, approach, result: IkResult,
                        seed: Optional[tuple[float, ...]]) -> None:
        """Say which part of the target is not met: the position, or the approach, and how far.

        For a pose target the line gives the angle between the asked approach and the tool's
        axis, and why: the part of the approach outside the arm's vertical plane (which the
        tool's axis cannot leave) and the joints held at a limit.
        """
        away = f'{1e3 * result.residual_m:.1f} mm'
        if approach is None:
            cause = 'out of reach'
            what = f'is out of reach: moving to the closest pose, {away} away'
        else:
            miss = self._arm.approach_miss(result.angles_rad, approach)
            off = (f'with the tool {math.degrees(miss.error_rad):.1f} deg from'
                   if _approach_missed(result) else 'along')
            why = self._why_missed(miss, result) if _approach_missed(result) else ''
            if result.reached or self._arm.ik(position_m, seed).reached:
                cause = 'approach out of reach'
                where = '' if result.reached else f', {away} from the target'
                what = (f'is reachable, but not along the approach {_fmt(approach)}: moving '
                        f'to a pose {off} it{where}{why}')
            else:
                cause = 'out of reach'
                what = (f'is out of reach: moving to a pose {away} away, {off} the approach '
                        f'{_fmt(approach)}{why}')
        if self._rejections.allow(cause):
            self.get_logger().warning(f'{source} {_fmt(position_m)} {what}')

    def _why_missed(self, miss: ApproachMiss, result: IkResult) -> str:
        """Return why the tool's axis misses the approach: the arm's plane, joint limits."""
        reasons = []
        if math.degrees(miss.out_of_plane_rad) > APPROACH_WARN_DEG:
            reasons.append(f'{math.degrees(miss.out_of_plane_rad):.1f} deg of it lie outside '
                           f"the arm's vertical plane, which the tool's axis cannot leave")
        for joint, angle in zip(self._arm.joints, result.angles_rad, strict=True):
            for end, word in ((joint.min_rad, 'lower'), (joint.max_rad, 'upper')):
                if abs(float(angle) - end) <= _AT_LIMIT_RAD:
                    reasons.append(f'{joint.name} at its {word} limit, '
                                   f'{math.degrees(end):.1f} deg')
        return f' ({"; ".join(reasons)})' if reasons else ''

    def _command_message(self, command: tuple[float, ...]) -> JointState:
        """Return the joint command message of ``command``, stamped now."""
        return self._command_msg.filled(self._names, command, self.get_clock().now().to_msg())

    def _on_marker_timer(self) -> None:
        """Publish the newest solution if one came since the last and anyone reads it.

        Without a solution to draw the timer rests until one comes. Without a reader the
        solution waits, and the timer looks for one every ``_READER_WAIT_S``.
        """
        if self._unpublished is None:
            self._marker_timer.cancel()
        elif self._markers.get_subscription_count() or self._reached.get_subscription_count():
            self._publish_unpublished()
            set_period(self._marker_timer, 1.0 / _MARKER_RATE_HZ)
        else:
            set_period(self._marker_timer, _READER_WAIT_S)

    def _publish_unpublished(self) -> None:
        unpublished, self._unpublished = self._unpublished, None
        if unpublished is not None:
            angles, target_m, approach, reached = unpublished
            self._publish_markers(angles, target_m, approach, reached=reached)

    def _publish_markers(self, angles, target_m, approach, *, reached: bool,
                         always: bool = False) -> None:
        """Publish the markers of a solution and whether it reached its target, each if read.

        :param always: publish both even without readers (the first, latched for later ones)
        """
        if always or self._reached.get_subscription_count():
            self._reached.publish(Bool(data=bool(reached)))
        if not (always or self._markers.get_subscription_count()):
            return
        stamp = self.get_clock().now().to_msg()
        frame = self._arm.base_frame
        approaches = (None if approach is None       # a pose's x axis: a unit vector
                      else (approach, tuple(self._arm.tool_axis(angles))))
        markers = solution_markers(self._arm.fk(angles), target_m, reached=reached,
                                   frame_id=frame, stamp=stamp, approach=approaches)
        reach_m = sum(link.length_m for link in self._arm.links)
        markers.markers.append(workspace_marker(reach_m, frame_id=frame, stamp=stamp))
        self._markers.publish(markers)

    def _publish_diagnostics(self) -> None:
        stats = self._stats
        now_s = time.monotonic()
        figures = stats.report(now_s - self._reported_s)
        self._reported_s = now_s
        approach_rad = self._last_approach_error_rad
        figures['last approach error [deg]'] = ('none asked' if approach_rad is None
                                                else math.degrees(approach_rad))
        missed = (approach_rad is not None
                  and math.degrees(approach_rad) > APPROACH_WARN_DEG)
        off = '' if approach_rad is None else (f'the tool {math.degrees(approach_rad):.1f} '
                                               f'deg from its approach')
        if stats.last_reached and not missed:
            level, message = Level.OK, f'{stats.solves} solves'
        elif stats.last_reached:
            level, message = Level.WARN, f'last target reached, but {off}'
        else:
            level = Level.WARN
            message = f'last target out of reach by {1e3 * stats.last_error_m:.1f} mm'
            if missed:
                message += f', {off}'
        status = diagnostic_status(status_name(self, 'inverse kinematics'), self._arm.base_frame,
                                   level, message, figures)
        self._diagnostics.publish(diagnostic_array(self.get_clock().now().to_msg(), status))

    def _now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    @property
    def serves_interactive_target(self) -> bool:
        """Return True when RViz can drag the 3D target (interactive_markers installed)."""
        return self._interactive is not None

    def shutdown(self) -> None:
        """Stop the path worker, the tf listener and the interactive marker."""
        self._paths.shutdown()
        self._frames.shutdown()
        if self._interactive is not None:
            self._interactive.shutdown()


def _approach_missed(result: IkResult) -> bool:
    """Return True when a pose target's tool axis ends beyond ``APPROACH_WARN_DEG`` of it."""
    error = result.approach_error_rad
    return error is not None and math.degrees(error) > APPROACH_WARN_DEG


def _vector(values: np.ndarray) -> Vector:
    """Return the 3-vector ``values`` as floats (a tool point from :meth:`Arm.fk`)."""
    x, y, z = (float(v) for v in values)
    return (x, y, z)


def _fmt(point) -> str:
    return '(' + ', '.join(f'{v:.3f}' if math.isfinite(v) else str(v) for v in point) + ')'


def main(args=None) -> None:
    """Run fabrik_ik until Ctrl-C or shutdown."""
    spin_until_shutdown(FabrikIkNode, args)
