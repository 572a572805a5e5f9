"""Load an Arm from the ROS 2 parameter YAML file every node reads."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from fabrik_ros.kinematics.arm import Arm
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
    section = document.get(WILDCARD)
    if not isinstance(section, Mapping) or not isinstance(section.get(PARAMS_KEY), Mapping):
        raise ArmConfigError(f'{WILDCARD}.{PARAMS_KEY}', section,
                             f'must be a mapping in {source}')
    return section[PARAMS_KEY]


def load_arm(path: str | Path) -> Arm:
    """Read, unwrap and validate an arm parameter file.

    :raises ArmConfigError: if the file cannot be read, is not YAML, or breaks a rule
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
    return Arm.from_params(unwrap(document, source))
