"""Write calibrated values into a copy of an arm file, line by line.

The arm file is hand-written and commented, so it is edited as text, not dumped again: each
``<section>.<entry>.<key>: value`` line (``servos.elbow.min_us``; a bus calibration also sets
``aux_servos`` and ``joints`` limits) gets its new value and keeps its comment unless a new
one is given; a key the entry lacks is added below the entry's last key. The result is
validated by the arm loader (``Arm.from_params``) before anything is written, and a file that
would be replaced is kept as a backup first.
"""

from collections.abc import Mapping
from dataclasses import dataclass
import os
from pathlib import Path
import re
import shutil
import tempfile
from typing import Optional, Union

import yaml

from fabrik_ros.kinematics import Arm, ArmConfigError
from fabrik_ros.kinematics.description.arm_file import unwrap

Value = Union[float, int]
ServoValues = Mapping[str, Mapping[str, Value]]
# section ('servos', 'aux_servos', 'joints') -> entry -> key -> value
ArmValues = Mapping[str, ServoValues]
# section -> entry -> key -> the comment written after the new value
ArmComments = Mapping[str, Mapping[str, Mapping[str, str]]]

_KEY_LINE = re.compile(r'^(?P<indent> *)(?P<key>[A-Za-z0-9_]+):(?P<rest>.*)$')


@dataclass(frozen=True)
class SavedCalibration:
    """Where the calibrated copy went, and the backup of the file it replaced (if any)."""

    path: Path
    backup: Optional[Path]
    arm: Arm


def with_servo_values(text: str, values: ServoValues) -> str:
    r"""Return the arm file ``text`` with ``servos.<joint>.<key>`` set to ``values``.

    >>> text = 'servos:\n  elbow:\n    min_us: 500.0  # stop\n'
    >>> print(with_servo_values(text, {'elbow': {'min_us': 620.0, 'trim_us': -4.0}}), end='')
    servos:
      elbow:
        min_us: 620.0  # stop
        trim_us: -4.0

    :raises ArmConfigError: if the text has no block-style ``servos:`` section or no entry
        for a joint in ``values``
    """
    return with_arm_values(text, {'servos': values})


def with_arm_values(text: str, values: ArmValues, comments: Optional[ArmComments] = None) -> str:
    r"""Return the arm file ``text`` with ``<section>.<entry>.<key>`` set to ``values``.

    :param comments: a new comment for some of the keys set (the others keep theirs)

    >>> text = 'joints:\n  elbow:\n    max_deg: 90.0  # URDF\n'
    >>> print(with_arm_values(text, {'joints': {'elbow': {'max_deg': 80.5}}},
    ...                       {'joints': {'elbow': {'max_deg': 'measured'}}}), end='')
    joints:
      elbow:
        max_deg: 80.5  # measured

    :raises ArmConfigError: if the text has no block-style section or entry named in ``values``
    """
    lines = text.splitlines(keepends=True)
    for section, entries in values.items():
        start, end = _block(lines, 0, len(lines), section, None)
        for entry, fields in entries.items():
            entry_start, entry_end = _block(lines, start + 1, end, entry, section)
            notes = (comments or {}).get(section, {}).get(entry, {})
            for key, value in fields.items():
                inserted = _set_key(lines, entry_start, entry_end, key, _yaml_value(value),
                                    notes.get(key))
                entry_end += inserted
                end += inserted
    return ''.join(lines)


def save_calibrated_copy(source: Path, target: Path, values: ServoValues) -> SavedCalibration:
    """Write ``source`` with the calibrated ``servos`` values to ``target``, validated first.

    See :func:`save_arm_copy`.
    """
    return save_arm_copy(source, target, {'servos': values})


def save_arm_copy(source: Path, target: Path, values: ArmValues,
                  comments: Optional[ArmComments] = None) -> SavedCalibration:
    """Write ``source`` with ``values`` (by section) to ``target``, validated first.

    If ``target`` exists (``source`` itself included) it is copied to ``<target>.bak`` (or
    ``.bak1``, ``.bak2``, ...) before being replaced; the new file is written whole (a
    temporary file renamed over it), so a crash never leaves half a file.

    :param comments: new comments for some of the keys set
    :raises ArmConfigError: if the result does not load as an arm, or the loaded values are
        not the ones asked for
    """
    text = Path(source).read_text(encoding='utf-8')
    new_text = with_arm_values(text, values, comments)
    arm = _validated(new_text, values, str(target))
    target = Path(target)
    backup = _backup(target) if target.exists() else None
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f'.{target.name}.')
    with os.fdopen(handle, 'w', encoding='utf-8') as stream:
        stream.write(new_text)
    os.replace(temporary, target)
    return SavedCalibration(target, backup, arm)


def _validated(text: str, values: ArmValues, source: str) -> Arm:
    """Load ``text`` as the nodes would, and check it holds ``values``."""
    try:
        params = unwrap(yaml.safe_load(text), source)
    except yaml.YAMLError as error:
        raise ArmConfigError(source, '<edited text>', f'is not valid YAML: {error}') from error
    arm = Arm.from_params(params)
    for section, entries in values.items():
        for entry, fields in entries.items():
            for key, value in fields.items():
                written = params[section][entry].get(key)
                if written != value:
                    raise ArmConfigError(f'{section}.{entry}.{key}', written,
                                         f'must read back as {value!r} after the edit')
    return arm


def _backup(target: Path) -> Path:
    """Copy ``target`` to the first free ``<target>.bak[N]`` and return that path."""
    candidates = [target.with_name(f'{target.name}.bak')]
    candidates += [target.with_name(f'{target.name}.bak{n}') for n in range(1, 1000)]
    # A dangling link does not exist, but copying onto it would write where it points.
    backup = next(path for path in candidates if not path.exists() and not path.is_symlink())
    shutil.copy2(target, backup)
    return backup


def _block(lines: list[str], start: int, end: int, key: str,
           parent: Optional[str]) -> tuple[int, int]:
    """Return (key line, end of its nested block) of the first ``key:`` block in the range."""
    for index in range(start, end):
        match = _KEY_LINE.match(lines[index])
        if match and match['key'] == key and _is_block_start(match['rest']):
            indent = len(match['indent'])
            stop = index + 1
            while stop < end and (_blank(lines[stop]) or _indent(lines[stop]) > indent):
                stop += 1
            while stop > index + 1 and _blank(lines[stop - 1]):
                stop -= 1
            return index, stop
    where = f'{parent}.{key}' if parent else key
    raise ArmConfigError(where, None, 'must be a block mapping (key: on a line of its own) '
                         'in the arm file for its calibration to be written')


def _set_key(lines: list[str], start: int, end: int, key: str, value: str,
             comment: Optional[str] = None) -> int:
    """Set ``key`` in the entry ``lines[start:end]``; return how many lines were inserted.

    :param comment: the comment after the value (None: keep the line's own)
    """
    note = '' if comment is None else f'  # {_one_line(comment)}'
    child_indent = None
    last = start
    for index in range(start + 1, end):
        match = _KEY_LINE.match(lines[index])
        if _blank(lines[index]) or match is None:
            continue
        if child_indent is None:
            child_indent = len(match['indent'])
        if len(match['indent']) != child_indent:
            continue
        last = index
        if match['key'] == key:
            space, tail = _around_value(match['rest'].rstrip('\n'))
            newline = '\n' if lines[index].endswith('\n') else ''
            tail = tail if comment is None else note
            lines[index] = f"{match['indent']}{key}:{space or ' '}{value}{tail}{newline}"
            return 0
    indent = ' ' * (child_indent if child_indent is not None else _indent(lines[start]) + 2)
    if not lines[last].endswith('\n'):
        lines[last] += '\n'
    lines.insert(last + 1, f'{indent}{key}: {value}{note}\n')
    return 1


def _is_block_start(rest: str) -> bool:
    return rest.split('#', 1)[0].strip() == ''


def _around_value(rest: str) -> tuple[str, str]:
    """Return what surrounds the value in ``rest`` (a line after its ``key:``), to keep it.

    That is the whitespace before the value, and after it the whitespace and comment.

    >>> _around_value(' 1500.0   # measured')
    (' ', '   # measured')
    >>> _around_value('  # none yet'), _around_value('')
    (('  ', '# none yet'), ('', ''))
    """
    after_space = rest.lstrip()
    value = after_space.partition('#')[0].rstrip()
    return rest[:len(rest) - len(after_space)], after_space[len(value):]


def _blank(line: str) -> bool:
    return line.strip() == '' or line.lstrip().startswith('#')


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(' '))


def _one_line(comment: str) -> str:
    """Return a comment as one line (a newline would end it and start YAML)."""
    return ' '.join(comment.split())


def _yaml_value(value: Value) -> str:
    """Return an int as YAML reads an int, anything else as it reads a float."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _yaml_float(value)


def _yaml_float(value: float) -> str:
    """Return ``value`` as YAML always reads back as a float (with a decimal point)."""
    text = repr(float(value))
    return text if any(c in text for c in '.en') else f'{text}.0'
