"""Serial bridge to servo boards and servo buses: the links the driver holds, ports, errors.

Pure Python on pyserial; nothing here imports rclpy. The codecs live in :mod:`.protocols`
(bytes only, no I/O); the simulated boards that tests and demos use live in
:mod:`fabrik_ros.boardsim`, which the driver never imports.

The names below load on first use, so that importing one codec (say
``fabrik_ros.servo_io.protocols.native``) does not also load the link, pyserial and threads.
"""

import importlib
from typing import Any

_SOURCES = {
    'Deadline': 'deadline',
    'Capabilities': 'protocols.dialect', 'Positions': 'protocols.dialect',
    'Protocol': 'protocols.dialect', 'PWM_PROTOCOLS': 'protocols.dialect',
    'BUS_PROTOCOLS': 'protocols.dialect', 'OFFERED_PROTOCOLS': 'protocols.dialect',
    'BoardRefused': 'errors', 'LinkError': 'errors', 'LinkLost': 'errors',
    'LinkTimeout': 'errors', 'NotABoard': 'errors',
    'ServoLink': 'link', 'BusLink': 'bus_link',
    'BusPositions': 'bus_reports', 'ServoCondition': 'bus_reports', 'Notice': 'bus_reports',
    'BUS_OPTIONS': 'bus_line',
    'LinkOptions': 'link_options', 'LinkState': 'link_options', 'LinkStats': 'link_stats',
    'MOVE_MAX_S': 'link_options',
    'BoardInfo': 'protocols.native', 'Command': 'protocols.native', 'Frame': 'protocols.native',
    'FrameDecoder': 'protocols.native', 'NackError': 'protocols.native',
    'Reply': 'protocols.native', 'WatchdogAction': 'protocols.native',
    'open_serial': 'serial_port',
}

__all__ = sorted(_SOURCES)


def __getattr__(name: str) -> Any:
    """Import the module that defines ``name`` the first time it is asked for."""
    if name not in _SOURCES:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    return getattr(importlib.import_module(f'{__name__}.{_SOURCES[name]}'), name)
