"""The arm file on disk: a ROS 2 parameter file whose ``/**: ros__parameters:`` holds the keys.

The same file is read by every node (``--params-file``) and by ``load_arm``; this module only
finds the mapping in it. What the keys mean is arm_keys.py; their reading, key_readers.py and
arm_sections.py.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from fabrik_ros.kinematics.errors import ArmConfigError

WILDCARD = '/**'
PARAMS_KEY = 'ros__parameters'


def unwrap(document: Any, source: str) -> Mapping[str, Any]:
    """Return the mapping under ``/**: ros__parameters:`` of a parsed parameter file.

    >>> unwrap({'/**': {'ros__parameters': {'joint_names': ['a']}}}, 'arm.yaml')
    {'joint_names': ['a']}
    """
    if not isinstance(document, Mapping):
        raise ArmConfigError(source, type(document).__name__,
                             f'must hold a mapping ({WILDCARD}: {PARAMS_KEY}: ...)')
    entry = document.get(WILDCARD)
    if not isinstance(entry, Mapping) or not isinstance(entry.get(PARAMS_KEY), Mapping):
        raise ArmConfigError(f'{WILDCARD}.{PARAMS_KEY}', entry,
                             f'must be a mapping in {source}')
    params: Mapping[str, Any] = entry[PARAMS_KEY]
    return params


def read_params_file(path: str | Path) -> Mapping[str, Any]:
    """Return the ``ros__parameters`` mapping of an arm file, unvalidated.

    :raises ArmConfigError: if the file cannot be read, is not YAML or has no such mapping
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding='utf-8')
    except OSError as error:
        raise ArmConfigError(source, str(path), f'cannot be read: {error.strerror}') from error
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ArmConfigError(source, str(path), f'is not valid YAML: {error}') from error
    return unwrap(document, source)
