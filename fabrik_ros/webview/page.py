"""The web_view page, served by viser: the arm, a target gizmo, driver buttons, calibration.

Only this module imports viser and yourdfpy (``pip install viser yourdfpy``); it knows
nothing of ROS. What a person does on the page goes out through :class:`PageActions`; what
the arm does comes in through the ``show_*`` methods, from any thread.

The page's callbacks are ``async`` and quick (a publish, a file write): viser awaits them on
its event loop one after the other, in the order the browser sent them. Plain callbacks would
run on a thread pool, where a mark clicked right after the slider moved could read the
slider's next value.

Served on a network address, the page needs a secret token (see
:mod:`fabrik_ros.webview.token_gate`); on loopback it does not.
"""

from collections.abc import Mapping, Sequence
import functools
import io
import math
import socket
from typing import Optional, Protocol, Union

import numpy as np
import viser
from viser.extras import ViserUrdf
import yourdfpy

from fabrik_ros.kinematics import Arm, ArmConfigError
from fabrik_ros.kinematics.description.urdf_out import arm_urdf
from fabrik_ros.webview.calibration import CalibrationError
from fabrik_ros.webview.calibration_by_hand import HandCalibrationSession
from fabrik_ros.webview.calibration_session import CalibrationSession, Mark
from fabrik_ros.webview.token_gate import is_loopback, TokenGate

Point = tuple[float, float, float]
Quaternion = tuple[float, float, float, float]   # w, x, y, z

GIZMO = '/target_gizmo'
_REACHED_RGB = (25, 230, 25)
_UNREACHED_RGB = (255, 40, 25)
_GIZMO_SCALE_M = 0.08
_FOLLOW_M = 0.001    # the gizmo jumps to a solver target this far from it, unless dragged
_CAMERA_POSITION_M = (0.34, -0.30, 0.27)
_CAMERA_LOOK_AT_M = (0.07, 0.0, 0.11)
_MARK_LABELS = {Mark.MIN: 'This is the minimum angle', Mark.MAX: 'This is the maximum angle',
                Mark.ZERO: 'This is zero'}
_HAND_HELP = ('Bus servos: let go (torque off), move each joint by hand to its minimum, '
              "its maximum and its zero position (the arm file's min_deg, max_deg and 0) "
              "and mark each; the counts are the servos' own.")


class PageAddressError(ValueError):
    """The page's host and port cannot be served (taken, or not this machine's)."""


class PageActions(Protocol):
    """What the page asks of the arm; the web_view node answers over ROS."""

    def send_target(self, position_m: Point, wxyz: Quaternion) -> None:
        """Make ``position_m`` [m, base frame] (and orientation ``wxyz``) the IK target."""

    def home(self) -> None:
        """Ask the driver to go to the home pose (this also ends a calibration jog)."""

    def enable(self, attached: bool) -> None:
        """Ask the driver to attach (True) or detach (False) the servos."""

    def jog(self, joint: str, pulse_us: float) -> None:
        """Ask the driver to move ``joint``'s servo to ``pulse_us`` [µs]."""

    def end_jog(self) -> None:
        """Ask the driver to end the jog session (the arm goes home slowly)."""


class WebPage:
    """Serve the page on ``host:port`` until :meth:`stop`.

    :param arm: the arm to draw (and calibrate)
    :param actions: where the page's requests go
    :param calibration: the marks and the file they are saved into: jogged pulse widths for a
        PWM board, counts of servos moved by hand for bus servos
    :param jog_range_us: the calibration slider's range [µs] (PWM boards)
    :param orientation: whether the gizmo also turns (a target pose) or only moves
    :raises PageAddressError: if ``host:port`` cannot be served exactly as asked
    """

    def __init__(self, arm: Arm, *, host: str, port: int, actions: PageActions,
                 calibration: Union[CalibrationSession, HandCalibrationSession],
                 jog_range_us: tuple[float, float], orientation: bool) -> None:
        self._arm, self._actions, self._session = arm, actions, calibration
        self._host = host
        self._gate: Optional[TokenGate] = None
        if is_loopback(host):
            self._server = _UnsharedViserServer(host=host, port=port, verbose=False)
            if port and self._server.get_port() != port:
                # viser moves on to the next free port: the address printed, and the one a
                # launcher waits on, would be another program's.
                self._server.stop()
                raise PageAddressError(f'{host}:{port} is in use by another program: '
                                       'choose another port (port:=)')
        else:   # viser has no authentication: serve it on loopback, behind the token gate
            self._server = _UnsharedViserServer(host='127.0.0.1', port=0, verbose=False)
            try:
                self._gate = TokenGate(host, port, upstream_port=self._server.get_port())
            except OSError as error:
                self._server.stop()
                why = error.strerror or str(error)
                raise PageAddressError(f'{host}:{port} cannot be served ({why}): choose '
                                       'another host or port') from error
        self._server.scene.set_up_direction('+z')
        self._server.gui.configure_theme(show_share_button=False)
        self._server.on_client_connect(_frame_the_arm)
        self._angles = {name: float(a) for name, a in zip(arm.joint_names, arm.home,
                                                            strict=True)}
        self._draw_scene(orientation)
        self._build_controls(jog_range_us)

    @property
    def port(self) -> int:
        """Return the port the page is served on (the one asked for, or a free one if 0)."""
        return self._gate.port if self._gate is not None else self._server.get_port()

    @property
    def token(self) -> Optional[str]:
        """Return the secret a client needs (None when served on loopback only)."""
        return self._gate.token if self._gate is not None else None

    def url(self) -> str:
        """Return the address to open, with the token when the page needs one."""
        host = socket.gethostname() if self._host in ('0.0.0.0', '::', '') else self._host
        if self._gate is not None:
            return self._gate.url(host)
        return f'http://{host}:{self.port}'

    # -- scene -------------------------------------------------------------------------------

    def _draw_scene(self, orientation: bool) -> None:
        scene = self._server.scene
        reach_m = sum(link.length_m for link in self._arm.links) + self._arm.shoulder_height_m
        scene.add_grid('/grid', width=2.0 * reach_m, height=2.0 * reach_m, cell_size=0.05,
                       section_size=0.1)
        urdf = yourdfpy.URDF.load(io.BytesIO(arm_urdf(self._arm).encode()))
        self._urdf = ViserUrdf(self._server, urdf, root_node_name='/arm',
                               mesh_color_override=(0.85, 0.55, 0.15))
        self._urdf.update_cfg(np.asarray(self._arm.home, dtype=float))
        tool_m = _point(self._arm.fk(self._arm.home)[-1])
        self._dragging = False
        self._gizmo = scene.add_transform_controls(
            GIZMO, scale=_GIZMO_SCALE_M, position=tool_m, disable_rotations=not orientation,
            depth_test=False)
        self._gizmo.on_update(self._on_gizmo)
        self._target = scene.add_icosphere('/solution/target', radius=0.012,
                                           color=_REACHED_RGB, position=tool_m)
        self._chain = scene.add_line_segments('/solution/chain', np.zeros((1, 2, 3)),
                                              _REACHED_RGB, thickness=0.004, visible=False)
        self._reached = True

    async def _on_gizmo(self, event: viser.TransformControlsEvent) -> None:
        self._dragging = event.phase != 'end'
        if event.phase == 'start':
            return
        w, x, y, z = (float(v) for v in event.target.wxyz)
        self._actions.send_target(_point(event.target.position), (w, x, y, z))

    def show_joint_states(self, angles_by_name: Mapping[str, float]) -> None:
        """Pose the drawn arm [rad by joint name]; joints not given keep their angle."""
        for name, angle in angles_by_name.items():
            if name in self._angles and math.isfinite(angle):
                self._angles[name] = float(angle)
        order = self._urdf.get_actuated_joint_names()
        self._urdf.update_cfg(np.array([self._angles[name] for name in order]))

    def show_solution(self, chain_m: Sequence[Point], target_m: Point) -> None:
        """Show the solver's target and pose, coloured as :meth:`show_reached` last said.

        A target that came from elsewhere (RViz, a script) takes the gizmo along, unless it is
        being dragged.
        """
        self._target.position = target_m
        if not self._dragging and math.dist(self._gizmo.position, target_m) > _FOLLOW_M:
            self._gizmo.position = target_m     # a target from elsewhere (RViz, a script)
        points = np.asarray(chain_m, dtype=float)
        if len(points) >= 2:
            self._chain.points = np.stack([points[:-1], points[1:]], axis=1)
            self._colour_solution()
            self._chain.visible = True

    def show_reached(self, reached: bool) -> None:
        """Colour the target and pose: green when the solver reached it, red (closest) if not."""
        self._reached = reached
        self._colour_solution()

    @property
    def reached(self) -> bool:
        """Return whether the solution is shown as reached."""
        return self._reached

    def _colour_solution(self) -> None:
        colour = _REACHED_RGB if self._reached else _UNREACHED_RGB
        self._target.color = colour
        segments = len(self._chain.points)
        self._chain.colors = np.tile(np.asarray(colour, dtype=np.uint8), (segments, 2, 1))

    def show_status(self, markdown: str) -> None:
        """Show the latest diagnostics (link state, reached ratio, residual)."""
        self._status.content = markdown

    @property
    def attached(self) -> bool:
        """Return whether the attach box is ticked."""
        return self._attached.value

    def show_attached(self, attached: bool) -> None:
        """Tick (or clear) the attach box as the driver reports its servos."""
        # viser's documented way to set an input; mypy sees the property as read-only because
        # viser defines its setter apart from its getter (viser 1.1).
        self._attached.value = attached  # type: ignore[misc]

    def show_reply(self, text: str) -> None:
        """Show the answer to the last button (a service reply, a refusal, a saved file)."""
        self._reply.content = text

    # -- controls ----------------------------------------------------------------------------

    def _build_controls(self, jog_range_us: tuple[float, float]) -> None:
        gui = self._server.gui
        with gui.add_folder('Arm'):
            gui.add_button('Home').on_click(self._on_home)
            self._attached = gui.add_checkbox('Servos attached', True)
            self._attached.on_update(self._on_attached)
            self._reply = gui.add_markdown('')
        with gui.add_folder('Diagnostics'):
            self._status = gui.add_markdown('waiting for /diagnostics')
        with gui.add_folder('Calibration', expand_by_default=False):
            if isinstance(self._session, HandCalibrationSession):
                self._build_hand_calibration(gui, self._session)
            else:
                self._build_calibration(gui, self._session, jog_range_us)
            self._build_save(gui)

    async def _on_home(self, event: viser.GuiEvent) -> None:
        self._actions.home()

    async def _on_attached(self, event: viser.GuiEvent) -> None:
        if event.client is not None:      # the user ticked it, not the page itself
            self._actions.enable(self._attached.value)

    def _build_calibration(self, gui: viser.GuiApi, session: CalibrationSession,
                           jog_range_us: tuple[float, float]) -> None:
        self._pwm = session
        low, high = (int(round(v)) for v in jog_range_us)
        self._servo = gui.add_dropdown('Servo', list(self._arm.joint_names))
        self._pulse = gui.add_slider('Pulse [µs]', min=low, max=high, step=1,
                                     initial_value=self._current_pulse())
        self._servo.on_update(self._on_servo_chosen)
        self._pulse.on_update(self._on_pulse)
        for which, label in _MARK_LABELS.items():
            gui.add_button(label).on_click(functools.partial(self._on_mark, which))
        self._marks = gui.add_markdown(self._marks_text())
        gui.add_button('End jog (go home)').on_click(self._on_end_jog)

    def _build_save(self, gui: viser.GuiApi) -> None:
        target, source = self._session.target, self._session.source
        self._save_to = gui.add_text('Save to', str(target) if target else '')
        if source is not None:
            gui.add_markdown(f'or a file name ending in .yaml, to write it beside the arm file '
                             f'(in {source.parent})')
        gui.add_button('Save calibrated copy').on_click(self._on_save)

    def _current_pulse(self) -> int:
        index = self._arm.joint_names.index(self._servo.value)
        calibration = self._arm.servo_map.calibrations[index]
        return int(round(calibration.units(self._angles[self._servo.value])))

    async def _on_servo_chosen(self, event: viser.GuiEvent) -> None:
        # The bounds are the whole microseconds the slider was built with (viser types them
        # float): the clamped pulse stays an int.
        pulse_us = round(min(max(self._current_pulse(), self._pulse.min), self._pulse.max))
        # viser's documented way to set an input; mypy sees the property as read-only because
        # viser defines its setter apart from its getter (viser 1.1).
        self._pulse.value = pulse_us  # type: ignore[misc]
        self._marks.content = self._marks_text()

    async def _on_pulse(self, event: viser.GuiEvent) -> None:
        if event.client is not None:      # the user moved it, not the page itself
            self._actions.jog(self._servo.value, float(self._pulse.value))

    async def _on_end_jog(self, event: viser.GuiEvent) -> None:
        self._actions.end_jog()

    async def _on_mark(self, which: Mark, event: viser.GuiEvent) -> None:
        self._pwm.mark(self._servo.value, which, float(self._pulse.value))
        self._marks.content = self._marks_text()

    # -- calibration by hand (bus servos) ------------------------------------------------

    def _build_hand_calibration(self, gui: viser.GuiApi,
                                session: HandCalibrationSession) -> None:
        self._hand = session
        gui.add_markdown(_HAND_HELP)
        gui.add_button('Let go (torque off)').on_click(self._on_let_go)
        gui.add_button('Hold (torque on)').on_click(self._on_hold)
        self._servo = gui.add_dropdown('Servo', list(session.servo_names))
        self._count = gui.add_markdown(self._count_text())
        self._servo.on_update(self._on_hand_servo_chosen)
        for which, label in _MARK_LABELS.items():
            gui.add_button(label).on_click(functools.partial(self._on_hand_mark, which))
        self._marks = gui.add_markdown(self._hand_marks_text())

    def show_servo_positions(self, counts: Mapping[str, float]) -> None:
        """Take the servos' reported counts by name (bus servos; ignored for a PWM board)."""
        if not isinstance(self._session, HandCalibrationSession):
            return
        self._hand.observe(counts)
        self._count.content = self._count_text()

    async def _on_let_go(self, event: viser.GuiEvent) -> None:
        self._actions.enable(False)

    async def _on_hold(self, event: viser.GuiEvent) -> None:
        self._actions.enable(True)

    async def _on_hand_servo_chosen(self, event: viser.GuiEvent) -> None:
        self._count.content = self._count_text()
        self._marks.content = self._hand_marks_text()

    async def _on_hand_mark(self, which: Mark, event: viser.GuiEvent) -> None:
        try:
            self._hand.mark(self._servo.value, which)
        except CalibrationError as error:
            self._marks.content = f'{self._hand_marks_text()}  \n{error}'
            return
        self._marks.content = self._hand_marks_text()

    def _count_text(self) -> str:
        servo = self._servo.value
        raw, count = self._hand.raw(servo), self._hand.count(servo)
        if raw is None or count is None:
            return f'{servo}: no count reported yet (servo_driver/servo_positions)'
        unwrapped = '' if count == raw else f' ({count:.0f} counted across the seam)'
        return f'{servo}: count {raw:.0f}{unwrapped}'

    def _hand_marks_text(self) -> str:
        servo = self._servo.value
        marks = self._hand.marks(servo)
        shown = ', '.join(f'{label} {_us(value)}' for label, value in (
            ('min', marks.min_count), ('max', marks.max_count), ('zero', marks.zero_count)))
        try:
            fields = self._hand.fields()
        except CalibrationError as error:
            return f'{servo}: {shown}  \n{error}'
        new = next((entries[servo] for entries in fields.values() if servo in entries), None)
        if new is None:
            return f'{servo}: {shown}'
        return f'{servo}: {shown}  \nnew: ' + ', '.join(f'{k} {v:g}' for k, v in new.items())

    def _marks_text(self) -> str:
        joint = self._servo.value
        marks = self._pwm.marks(joint)
        shown = ', '.join(f'{m.value} {_us(getattr(marks, m.value))}' for m in Mark)
        try:
            fields = self._pwm.fields().get(joint)
        except CalibrationError as error:
            return f'{joint}: {shown}  \n{error}'
        if fields is None:
            return f'{joint}: {shown}'
        return f'{joint}: {shown}  \nnew: ' + ', '.join(f'{k} {v:g}' for k, v in fields.items())

    async def _on_save(self, event: viser.GuiEvent) -> None:
        try:
            saved = self._session.save(self._save_to.value)
        except (CalibrationError, ArmConfigError, OSError) as error:
            self.show_reply(f'not saved: {error}')
            return
        backup = f' (the previous file kept as {saved.backup})' if saved.backup else ''
        self.show_reply(f'saved {saved.path}{backup}')

    def stop(self) -> None:
        """Stop serving the page."""
        if self._gate is not None:
            self._gate.stop()
        self._server.stop()


class _UnsharedViserServer(viser.ViserServer):
    """viser without its share link: one would open the page to the internet.

    viser's page has a Share button, and any client can ask for a share link: viser then
    tunnels its own port through viser's share service, past loopback and past the token
    gate. The button is hidden; a request sent anyway gets no link.
    """

    def request_share_url(self, verbose: bool = True) -> None:
        """Refuse: the arm's page is never shared through the internet."""
        return None


def _frame_the_arm(client: viser.ClientHandle) -> None:
    """Point a new browser's camera at the arm from the front right, above."""
    client.camera.position = _CAMERA_POSITION_M
    client.camera.look_at = _CAMERA_LOOK_AT_M


def _point(values: Sequence[float] | np.ndarray) -> Point:
    """Return the 3-vector ``values`` (a tool point, a gizmo position) as floats."""
    x, y, z = (float(v) for v in values)
    return (x, y, z)


def _us(value: Optional[float]) -> str:
    return '—' if value is None else f'{value:.0f}'
