"""The page saves only to the configured file or to a checked .yaml name beside the arm file."""

from pathlib import Path

import pytest

from fabrik_ros.kinematics import load_arm
from fabrik_ros.webview import CalibrationSession, Mark, SavePathError

CONFIG = Path(__file__).resolve().parents[2] / 'config' / 'arm_4dof.yaml'
ARM = load_arm(CONFIG)


@pytest.fixture
def folder(tmp_path):
    """Return an arm folder (the arm file copied in) beside a folder the page must not reach."""
    arm_folder = tmp_path / 'arm'
    arm_folder.mkdir()
    (arm_folder / 'arm.yaml').write_text(CONFIG.read_text())
    (tmp_path / 'outside').mkdir()
    (tmp_path / 'outside' / 'precious.yaml').write_text('not an arm\n')
    return arm_folder


def _session(folder: Path, configured: Path) -> CalibrationSession:
    session = CalibrationSession(ARM, folder / 'arm.yaml', configured)
    session.mark('elbow', Mark.MIN, 700.0)
    session.mark('elbow', Mark.MAX, 2300.0)
    return session


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob('*'))
            if p.is_file()}


@pytest.mark.parametrize('text, fragment', [
    ('../outside/precious.yaml', 'must be the configured calibration file or a file name'),
    ('{outside}/precious.yaml', 'must be the configured calibration file or a file name'),
    ('~/.bashrc', 'must be the configured calibration file or a file name'),
    ('sub/x.yaml', 'must be the configured calibration file or a file name'),
    ('..\\outside.yaml', 'must be the configured calibration file or a file name'),
    ('a..yaml', "no '..'"),
    ('notes.txt', 'ending in .yaml'),
    ('.hidden.yaml', 'must be the configured calibration file or a file name'),
    ('', 'must be the configured calibration file or a file name'),
    ('x' * 200 + '.yaml', 'at most 100 characters'),
    ('escape.yaml', 'is a symbolic link'),
    ('folder.yaml', 'is not a regular file'),
])
def test_a_save_the_page_may_not_make_is_refused_naming_why_and_writes_nothing(
        folder, text, fragment):
    outside = folder.parent / 'outside'
    (folder / 'escape.yaml').symlink_to(outside / 'precious.yaml')
    (folder / 'folder.yaml').mkdir()
    before = _files(folder.parent)
    with pytest.raises(SavePathError) as refused:
        _session(folder, folder.parent / 'configured.yaml').save(text.format(outside=outside))
    assert fragment in str(refused.value)
    assert 'Save to = ' in str(refused.value)
    assert _files(folder.parent) == before


def test_a_long_name_is_shown_cut_short_in_the_refusal(folder):
    with pytest.raises(SavePathError) as refused:
        _session(folder, folder / 'c.yaml').save('y' * 5000)
    assert len(str(refused.value)) < 400


def test_the_configured_file_is_saved_as_shown_and_an_existing_one_kept_as_bak(folder, tmp_path):
    configured = tmp_path / 'elsewhere' / 'calibrated.yaml'
    configured.parent.mkdir()
    configured.write_text('previous\n')
    saved = _session(folder, configured).save(f'  {configured}  ')
    assert (saved.path, saved.backup) == (configured, configured.with_name('calibrated.yaml.bak'))
    assert saved.backup.read_text() == 'previous\n'
    assert load_arm(configured).servo_map.calibrations[2].min_us == 700.0


def test_a_checked_name_is_saved_beside_the_arm_file_even_the_arm_file_itself(folder):
    saved = _session(folder, None).save('arm.calibrated-2.yaml')
    assert saved.path == folder / 'arm.calibrated-2.yaml' and saved.backup is None
    assert load_arm(saved.path).servo_map.calibrations[2].max_us == 2300.0
    again = _session(folder, None).save('arm.yaml')
    assert again.backup == folder / 'arm.yaml.bak'
    assert again.backup.read_text() == CONFIG.read_text()


def test_without_a_save_to_text_the_configured_file_is_used(folder):
    assert _session(folder, folder / 'c.yaml').save().path == folder / 'c.yaml'
