"""Where the page may save a calibrated copy: the configured file, or a name beside the arm file.

The "Save to" field comes from whoever reaches the page, so it names a file, never a path:
anything else could move any file the process can write to ``.bak`` and replace it.
"""

from pathlib import Path
import re
from typing import Optional

from fabrik_ros.webview.calibration import CalibrationError

MAX_NAME_CHARS = 100
_NAME = re.compile(r'[A-Za-z0-9][A-Za-z0-9._-]*\.yaml')
_NAME_RULE = (f"must be the configured calibration file or a file name ending in .yaml "
              f"(letters, digits, '.', '_', '-'; no '..'; at most {MAX_NAME_CHARS} characters)")


class SavePathError(CalibrationError):
    """The page asked to save somewhere it may not; the message names the text and the rule."""


def allowed_save_path(text: str, *, configured: Optional[Path],
                      folder: Optional[Path]) -> Path:
    """Return where the page's "Save to" ``text`` may be saved, or refuse it.

    ``text`` is either the configured calibration file exactly as shown, or a file name saved
    inside ``folder`` (the arm file's folder). A name that is a symbolic link, or is not a
    regular file, is refused, so no save can reach outside the folder.

    >>> str(allowed_save_path('arm.cal.yaml', configured=None, folder=Path('/robot')))
    '/robot/arm.cal.yaml'
    >>> allowed_save_path('../etc/x.yaml', configured=None, folder=Path('/robot'))
    Traceback (most recent call last):
    ...
    fabrik_ros.webview.save_path.SavePathError: Save to = '../etc/x.yaml', must be ...

    :raises SavePathError: for anything else, naming the text and the rule
    """
    text = text.strip()
    if configured is not None and text == str(configured):
        return configured
    shown = text if len(text) <= MAX_NAME_CHARS else f'{text[:MAX_NAME_CHARS]}...'
    if (len(text) > MAX_NAME_CHARS or '..' in text or _NAME.fullmatch(text) is None):
        raise SavePathError(f'Save to = {shown!r}, {_NAME_RULE}')
    if folder is None:
        raise SavePathError(f'Save to = {shown!r}, needs arm_file to be set: a name is saved '
                            'beside the arm file')
    target = folder / text
    if target.is_symlink():
        raise SavePathError(f'Save to = {shown!r} is a symbolic link in {folder}, must be a '
                            'plain file (a link could lead out of the folder)')
    if target.exists() and not target.is_file():
        raise SavePathError(f'Save to = {shown!r} in {folder} is not a regular file')
    if target.resolve().parent != folder.resolve():
        raise SavePathError(f'Save to = {shown!r} leads out of {folder}')
    return target
