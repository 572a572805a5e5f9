"""`make web` in a real headless chromium: the page renders, the gizmo drives, calibration saves.

One pipeline (sim board, servo_driver, fabrik_ik, web_view as processes, in a namespace of
their own, the page on a free loopback port) and one browser serve all three tests.
"""

import os

import numpy as np
import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from sensor_msgs.msg import JointState

from fabrik_ros.kinematics import load_arm
from fabrik_ros.webview.pipeline import DEFAULT_CONFIG, Pipeline, PipelineOptions
from test.nodes.ros_harness import RosHarness
from test.webview.browser import chromium, free_port, screenshot, wait_for

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]

ARM = load_arm(DEFAULT_CONFIG)
# The gizmo's x arrow, as viser draws it (the only colour like it on the page).
ARROW_X_RGB = (249, 45, 104)
# A quicker start and jogs than the defaults (3 s home, 1.5 rad/s); the limits still apply.
FAST_DRIVER = ('home_move_time_s:=0.5', 'max_speed_rad_s:=[4.0, 4.0, 4.0, 4.0]')
ELBOW = ARM.joint_names.index('elbow')
ELBOW_CAL = ARM.servo_map.calibrations[ELBOW]


class Web:
    """The pipeline, a browser on its page, and a probe node on its joint_states."""

    def __init__(self, pipeline: Pipeline, browser, ros: RosHarness) -> None:
        self.pipeline, self.browser, self.ros = pipeline, browser, ros
        self.states: list[JointState] = []
        probe = ros.probe()
        probe.create_subscription(JointState, f'{pipeline.options.namespace}/joint_states',
                                  self.states.append, 10)

    def angles(self):
        return tuple(self.states[-1].position) if self.states else None

    def spin_until(self, condition, *, timeout_s: float, what) -> None:
        self.ros.spin_until(lambda: (self.pipeline.check_alive(), condition())[1],
                            timeout_s=timeout_s, what=what)

    def click_text(self, text: str) -> None:
        def find():
            return self.browser.find_elements(By.XPATH, f"//*[text()='{text}']")
        # The page's controls arrive over its websocket, after the page itself has loaded.
        wait_for(lambda: find() and find()[0].is_displayed(), timeout_s=10.0,
                 what=f'{text!r} to show')
        element = find()[0]
        self.browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()

    def lines_with(self, fragment: str) -> list[str]:
        """Return the lines of the page's text that hold ``fragment``."""
        text = self.browser.find_element(By.TAG_NAME, 'body').text
        return [line for line in text.splitlines() if fragment in line]

    def field(self, label: str):
        """Return the text input of the GUI label ``label``, once it can be used."""
        def find():
            return self.browser.find_element(
                By.XPATH, f"//label[text()='{label}']/ancestor::div[.//input][1]"
                          "//input[not(@type='hidden')]")
        wait_for(lambda: find().is_displayed() and find().is_enabled(), timeout_s=10.0,
                 what=f'the field {label!r} to show')
        return find()

    def type_into(self, label: str, text: str) -> None:
        field = self.field(label)
        field.send_keys(Keys.CONTROL, 'a')
        field.send_keys(text, Keys.ENTER)


@pytest.fixture(scope='module')
def web(tmp_path_factory):
    folder = tmp_path_factory.mktemp('web')
    options = PipelineOptions(port=free_port(), calibration_file=folder / 'calibrated.yaml',
                              namespace=f'/web_test_{os.getpid()}',
                              driver_parameters=FAST_DRIVER)
    ros = RosHarness()
    try:
        with Pipeline(options) as pipeline, chromium() as browser:
            web = Web(pipeline, browser, ros)
            pipeline.wait_ready(60.0)
            browser.get(pipeline.url)
            web.spin_until(lambda: web.angles() is not None, timeout_s=30.0,
                           what='joint_states from servo_driver')
            yield web
    finally:
        ros.close()


def _arrow_pixels(image: np.ndarray) -> np.ndarray:
    mask = np.all(np.abs(image - ARROW_X_RGB) < 30, axis=2)
    mask[-150:, :150] = False       # the orientation cube in the corner has red too
    ys, xs = np.nonzero(mask)
    return np.stack([xs, ys], axis=1)


def _coloured(image: np.ndarray, *, reached: bool) -> int:
    """Count the pixels of the solver's colours: green reached, red closest pose (lit too)."""
    red, green, blue = image[..., 0], image[..., 1], image[..., 2]
    if reached:
        return int(((green > 150) & (red < 110) & (blue < 110)).sum())
    return int(((red > 150) & (green < 80) & (blue < 70)).sum())


def test_the_3d_canvas_renders_the_arm_and_its_gizmo(web):
    canvas = web.browser.find_element(By.TAG_NAME, 'canvas')
    wait_for(lambda: len(_arrow_pixels(screenshot(web.browser))) > 30, timeout_s=30.0,
             what='the target gizmo to be drawn')
    image = screenshot(web.browser)
    rect = canvas.rect
    pixels = image[int(rect['y']):int(rect['y'] + rect['height']),
                   int(rect['x']):int(rect['x'] + rect['width'])]
    assert pixels.std() > 10.0, 'the canvas is one flat colour'
    red, green, blue = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    orange = (red > 150) & (red - blue > 80) & (green < red - 30) & (green > blue)
    assert orange.sum() > 300, 'the arm (orange links) is drawn'
    wait_for(lambda: _coloured(screenshot(web.browser), reached=True) > 20, timeout_s=30.0,
             what='the reached target in green')


def test_dragging_the_gizmo_moves_the_simulated_arm(web):
    web.spin_until(lambda: np.allclose(web.angles(), ARM.home, atol=0.02), timeout_s=30.0,
                   what=lambda: f'the arm home, at {web.angles()}')
    wait_for(lambda: len(_arrow_pixels(screenshot(web.browser))) > 30, timeout_s=30.0,
             what='the target gizmo to be drawn')
    points = _arrow_pixels(screenshot(web.browser))
    centre = points.mean(axis=0)
    _, _, axes = np.linalg.svd(points - centre, full_matrices=False)
    step = -axes[0] * 12.0 * (1.0 if axes[0][0] >= 0.0 else -1.0)   # toward the screen's left
    canvas = web.browser.find_element(By.TAG_NAME, 'canvas')
    offset = centre - (canvas.rect['x'] + canvas.rect['width'] / 2,
                       canvas.rect['y'] + canvas.rect['height'] / 2)
    drag = ActionChains(web.browser, duration=50)
    drag.move_to_element_with_offset(canvas, int(offset[0]), int(offset[1])).click_and_hold()
    for _ in range(4):
        drag.move_by_offset(int(round(step[0])), int(round(step[1])))
    drag.release().perform()
    web.spin_until(lambda: not np.allclose(web.angles(), ARM.home, atol=0.1), timeout_s=30.0,
                   what=lambda: f'the arm to leave home after the drag, at {web.angles()}')
    # Sideways from the top of the reach is out of it: the closest pose shows in red.
    wait_for(lambda: _coloured(screenshot(web.browser), reached=False) > 20, timeout_s=30.0,
             what='the closest pose and the target in red')


def test_the_driver_buttons_call_its_services(web):
    web.click_text('Servos attached')
    wait_for(lambda: 'servos detached' in web.browser.page_source, timeout_s=30.0,
             what='~/enable to detach')
    web.click_text('Servos attached')
    wait_for(lambda: 'servos attaching' in web.browser.page_source, timeout_s=30.0,
             what='~/enable to attach')
    web.click_text('Home')
    wait_for(lambda: web.lines_with('servo_driver/home: '), timeout_s=30.0,
             what='~/home to answer')
    assert 'home' in web.lines_with('servo_driver/home: ')[0].partition(': ')[2]
    web.spin_until(lambda: np.allclose(web.angles(), ARM.home, atol=0.02), timeout_s=30.0,
                   what=lambda: f'the arm home, at {web.angles()}')


def test_calibrating_a_servo_in_the_page_saves_a_copy_that_loads(web):
    web.click_text('Calibration')
    web.field('Servo').click()
    web.click_text('elbow')
    wait_for(lambda: web.field('Servo').get_attribute('value') == 'elbow', timeout_s=10.0,
             what='elbow to be chosen')
    for pulse, mark in (('2300', 'This is the maximum angle'),
                        ('700', 'This is the minimum angle'),
                        ('1520', 'This is zero')):
        web.type_into('Pulse [µs]', pulse)
        angle = ELBOW_CAL.angle_rad(float(pulse))
        web.spin_until(lambda a=angle: abs(web.angles()[ELBOW] - a) < 0.02, timeout_s=30.0,
                       what=lambda p=pulse: f'the driver to jog the elbow to {p} µs, '
                                            f'at {web.angles()}')
        web.click_text(mark)
    web.click_text('Save calibrated copy')
    saved = web.pipeline.options.calibration_file
    wait_for(lambda: web.lines_with('saved'), timeout_s=30.0,
             what=lambda: f'the page to answer the save; it shows {web.lines_with("elbow")}')
    assert web.lines_with('saved') == [f'saved {saved}']
    calibration = load_arm(saved).servo_map.calibrations[ELBOW]
    assert (calibration.min_us, calibration.max_us, calibration.trim_us) == (700.0, 2300.0,
                                                                             20.0)
    assert saved.read_text().startswith(DEFAULT_CONFIG.read_text().splitlines()[0])
    web.click_text('End jog (go home)')
    web.spin_until(lambda: np.allclose(web.angles(), ARM.home, atol=0.02), timeout_s=30.0,
                   what=lambda: f'the arm home after the jog, at {web.angles()}')
