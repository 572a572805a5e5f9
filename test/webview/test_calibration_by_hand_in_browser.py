"""Calibrating a bus servo by hand in a real headless chromium: let go, marks, save.

The page is served in this process with the SO-101's arm file; the servo's counts come as
servo_driver's ``~/servo_positions`` would bring them (the page's ``show_servo_positions``),
from a wrist roll moved by hand across its encoder's seam.
"""

import math

import pytest
from selenium.webdriver.common.by import By

from fabrik_ros.kinematics import load_arm
from fabrik_ros.webview.calibration_by_hand import HandCalibrationSession
from test.webview.browser import chromium, wait_for
from test.webview.test_calibration_by_hand import arm_with_homing_offset, HandHeldServo

pytestmark = pytest.mark.timeout(300)


class Actions:
    """What the page asked of the arm, with the arguments, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __getattr__(self, name: str):
        return lambda *args: self.calls.append((name, *args))


class Browser:
    def __init__(self, driver) -> None:
        self.driver = driver

    def click_text(self, text: str) -> None:
        def find():
            return self.driver.find_elements(By.XPATH, f"//*[text()='{text}']")
        wait_for(lambda: find() and find()[0].is_displayed(), timeout_s=10.0,
                 what=f'{text!r} to show')
        element = find()[0]
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()

    def lines_with(self, fragment: str) -> list[str]:
        text = self.driver.find_element(By.TAG_NAME, 'body').text
        return [line for line in text.splitlines() if fragment in line]

    def choose(self, label: str, option: str) -> None:
        field = self.driver.find_element(
            By.XPATH, f"//label[text()='{label}']/ancestor::div[.//input][1]"
                      "//input[not(@type='hidden')]")
        field.click()
        self.click_text(option)
        wait_for(lambda: field.get_attribute('value') == option, timeout_s=10.0,
                 what=f'{option} to be chosen')


@pytest.fixture
def page(tmp_path):
    from fabrik_ros.webview.page import WebPage
    arm_path = arm_with_homing_offset(tmp_path, 0)
    arm = load_arm(arm_path)
    session = HandCalibrationSession(arm, arm_path, tmp_path / 'so101.calibrated.yaml')
    session.set_protocol('feetech')
    actions = Actions()
    page = WebPage(arm, host='127.0.0.1', port=0, actions=actions, calibration=session,
                   jog_range_us=(500.0, 2500.0), orientation=False)
    try:
        with chromium() as driver:
            driver.get(f'http://127.0.0.1:{page.port}')
            yield page, actions, Browser(driver), session
    finally:
        page.stop()


def test_a_wrist_roll_moved_by_hand_across_the_seam_is_marked_and_saved(page):
    page, actions, browser, session = page
    browser.click_text('Calibration')
    browser.click_text('Let go (torque off)')
    wait_for(lambda: ('enable', False) in actions.calls, timeout_s=10.0,
             what=lambda: f'the page to ask for torque off; it asked {actions.calls}')
    browser.choose('Servo', 'wrist_roll')
    roll = load_arm(session.source).joints[4]
    hand = HandHeldServo(300.0, 1, 'feetech', 0)      # its seam at -26 deg: inside the range
    position = 0.0
    for target, mark, word in ((roll.min_rad, 'This is the minimum angle', 'min'),
                               (roll.max_rad, 'This is the maximum angle', 'max'),
                               (0.0, 'This is zero', 'zero')):
        steps = int(abs(target - position) / math.radians(2.0)) + 1
        for index in range(1, steps + 1):
            page.show_servo_positions(
                {'wrist_roll': hand.report(position + (target - position) * index / steps)})
        position = target
        shown = f'wrist_roll: count {hand.report(target)}'
        wait_for(lambda s=shown: any(line.startswith(s) for line in
                                     browser.lines_with('wrist_roll: count')),
                 timeout_s=10.0, what=lambda: f'the page to show the count: '
                                              f'{browser.lines_with("wrist_roll")}')
        if target == roll.min_rad:     # the hand went below the seam: counting on, not a jump
            assert browser.lines_with('counted across the seam')
        browser.click_text(mark)
        # The click reaches the page's server on its own time: the hand waits for the mark.
        marked = f'{word} {session.count("wrist_roll"):.0f}'
        wait_for(lambda m=marked: any(m in line for line in browser.lines_with('wrist_roll: min')),
                 timeout_s=10.0, what=lambda: f'the mark; {browser.lines_with("wrist_roll")}')
    browser.click_text('Save calibrated copy')
    wait_for(lambda: browser.lines_with('saved'), timeout_s=10.0,
             what=lambda: f'the save to answer; the page shows {browser.lines_with("wrist")}')
    assert browser.lines_with('saved') == [f'saved {session.target}'], browser.lines_with('')
    saved = load_arm(session.target).servo_map.calibrations[4]
    assert 0 <= saved.low_units and saved.high_units <= 4095
    hand.homing_offset = saved.homing_offset
    assert saved.units(0.0) == pytest.approx(hand.report(0.0), abs=1.0)
    assert saved.units(roll.max_rad) == pytest.approx(hand.report(roll.max_rad), abs=1.5)
