"""Take the README's picture of `make web`: the page in headless chromium, the arm on a target.

    .venv/bin/python -m test.webview.screenshot docs/web_view.png

Runs the same pipeline as `make web` (on a free loopback port, in a namespace of its own),
sends one target_point as RViz or a script would (the gizmo follows it), and saves the page
once the arm is there and the diagnostics are in.
"""

import argparse
import os
from pathlib import Path

from geometry_msgs.msg import PointStamped
import numpy as np
from selenium.webdriver.common.by import By
from sensor_msgs.msg import JointState

from fabrik_ros.kinematics import load_arm
from fabrik_ros.webview.pipeline import (
    DEFAULT_CONFIG,
    loopback_environment,
    Pipeline,
    PipelineOptions,
)
from test.nodes.ros_harness import RosHarness
from test.webview.browser import chromium, free_port, wait_for

TARGET_M = (0.15, 0.07, 0.1)
WINDOW = (1100, 760)


def main() -> None:
    """Save the screenshot to the path given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('output', type=Path)
    output = parser.parse_args().output
    os.environ.update(loopback_environment())    # this process and the pipeline: one domain
    arm = load_arm(DEFAULT_CONFIG)
    namespace = f'/web_shot_{os.getpid()}'
    ros = RosHarness()
    states = []
    probe = ros.probe()
    probe.create_subscription(JointState, f'{namespace}/joint_states', states.append, 10)
    targets = probe.create_publisher(PointStamped, f'{namespace}/target_point', 1)
    point = PointStamped()
    point.header.frame_id = arm.base_frame
    point.point.x, point.point.y, point.point.z = TARGET_M
    try:
        with Pipeline(PipelineOptions(port=free_port(), namespace=namespace)) as pipeline, \
                chromium() as browser:
            pipeline.wait_ready(60.0)
            browser.set_window_size(*WINDOW)
            browser.get(pipeline.url)
            ros.spin_until(lambda: states and np.allclose(arm.fk(states[-1].position)[-1],
                                                          TARGET_M, atol=0.005),
                           timeout_s=60.0, what='the arm on the target',
                           during=lambda: targets.publish(point))
            wait_for(lambda: 'servo board' in browser.page_source, timeout_s=30.0, fail=True,
                     what='the diagnostics on the page')
            for close in browser.find_elements(By.CSS_SELECTOR, 'button[class*="CloseButton"]'):
                close.click()     # the "software WebGL" notice: true here, not for a user
            wait_for(lambda: not browser.find_elements(By.CSS_SELECTOR,
                                                       'button[class*="CloseButton"]'),
                     timeout_s=10.0, fail=True, what='the notice to close')
            browser.save_screenshot(str(output))
    finally:
        ros.close()
    print(f'saved {output}')


if __name__ == '__main__':
    main()
