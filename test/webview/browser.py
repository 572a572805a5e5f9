"""Debian's chromium, headless, driven by selenium: never a downloaded browser or driver."""

from collections.abc import Iterator
import contextlib
import io
from pathlib import Path
import shutil
import socket
import tempfile
import time
from typing import Optional

import numpy as np
from PIL import Image
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service

CHROMIUM = Path('/usr/bin/chromium')
CHROMEDRIVER = Path('/usr/bin/chromedriver')
WINDOW = (1024, 768)
# Software rendering (no GPU here or in CI), and nothing that phones home.
FLAGS = ('--headless=new', '--no-sandbox', '--use-angle=swiftshader',
         '--enable-unsafe-swiftshader', '--disable-gpu-sandbox', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         f'--window-size={WINDOW[0]},{WINDOW[1]}')
_POLL_S = 0.2


@contextlib.contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    """Yield a headless chromium with a fresh profile; quit it and remove the profile after.

    :raises AssertionError: if Debian's chromium or chromium-driver is not installed
        (``make setup`` installs both)
    """
    for path, package in ((CHROMIUM, 'chromium'), (CHROMEDRIVER, 'chromium-driver')):
        assert path.exists(), f'{path} missing: apt-get install {package} (make setup does)'
    profile = tempfile.mkdtemp(prefix='fabrik_chromium_')
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f'--user-data-dir={profile}'):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        with contextlib.suppress(WebDriverException):
            driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def screenshot(driver: webdriver.Chrome) -> np.ndarray:
    """Return the visible page as an (height, width, 3) int array of RGB values."""
    image = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert('RGB')
    return np.asarray(image).astype(int)


def wait_for(condition, *, timeout_s: float, what, fail: bool = False) -> None:
    """Poll ``condition()`` until it is true, saying once what it waits for after ``timeout_s``.

    A test waits as long as it takes (a busy machine only makes it slower; the test's pytest
    timeout ends one that hangs, and the line said shows what it waited for). ``fail``: raise
    AssertionError naming ``what`` after ``timeout_s`` instead (for tools: screenshot.py).
    """
    deadline: Optional[float] = time.monotonic() + timeout_s
    while not condition():
        if deadline is not None and time.monotonic() > deadline:
            text = what() if callable(what) else what
            if fail:
                raise AssertionError(f'timed out after {timeout_s} s waiting for {text}')
            print(f'still waiting after {timeout_s} s for {text}', flush=True)
            deadline = None
        time.sleep(_POLL_S)
