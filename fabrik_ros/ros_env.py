"""The DDS environment of every test, demo and benchmark run: loopback only, a domain of its own.

One place decides it, because the middleware reads these variables once, when rclpy loads it,
and a process started without them talks to the whole network. Used by the Makefile (through
``python -m fabrik_ros.ros_env --make``), test/conftest.py, bench/ and the demo.

Loopback is asked for in the way the distro understands: ``ROS_AUTOMATIC_DISCOVERY_RANGE`` from
Iron on, ``ROS_LOCALHOST_ONLY`` before it (Humble and older). Jazzy's rcl warns at start-up
whenever ``ROS_LOCALHOST_ONLY`` is set, so it is set only where it is the sole way to stay on
loopback. Pure: no rclpy import, only the standard library, so the system Python can run it
before any venv exists.
"""

import argparse
from collections.abc import Mapping, MutableMapping
from importlib import metadata
import os
from pathlib import Path
import random
import sys

RMW = 'rmw_fastrtps_cpp'
#: Distros released before ROS_AUTOMATIC_DISCOVERY_RANGE existed (it came with Iron).
LOCALHOST_ONLY_DISTROS = frozenset({
    'ardent', 'bouncy', 'crystal', 'dashing', 'eloquent', 'foxy', 'galactic', 'humble'})
#: rclpy's major version in each released distro; a major between them is a rolling build.
_RCLPY_MAJOR_DISTRO = {4: 'iron', 7: 'jazzy', 9: 'kilted'}


def detect_distro(environ: Mapping[str, str] | None = None) -> str | None:
    """Return the ROS 2 distro in use, lower case, or None when no rclpy is installed.

    ``ROS_DISTRO`` (set by a sourced ROS install and by the Makefile) wins; else the version of
    the installed rclpy distribution tells (PyPI wheels set no ROS_DISTRO). A version newer than
    any known one is taken as ``rolling``; 3.x and older as ``humble`` (none of them has the
    discovery range).
    """
    environ = os.environ if environ is None else environ
    named = environ.get('ROS_DISTRO', '').strip().lower()
    if named:
        return named
    for distribution in ('ros-rclpy', 'rclpy'):
        try:
            version = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
        major = int(version.split('.')[0])
        return 'humble' if major <= 3 else _RCLPY_MAJOR_DISTRO.get(major, 'rolling')
    return None


def loopback_variables(distro: str | None) -> dict[str, str | None]:
    """Return the variables that keep DDS on loopback in ``distro``; None means unset it.

    An unknown distro (None: no rclpy to ask) gets both, the safe choice: nothing can start a
    ROS process there to print the warning.
    """
    if distro is None:
        return {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST', 'ROS_LOCALHOST_ONLY': '1'}
    if distro in LOCALHOST_ONLY_DISTROS:
        return {'ROS_AUTOMATIC_DISCOVERY_RANGE': None, 'ROS_LOCALHOST_ONLY': '1'}
    return {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST', 'ROS_LOCALHOST_ONLY': None}


def isolate_ros(environ: MutableMapping[str, str] | None = None, *, ros_home: Path | None = None,
                distro: str | None = None, force: bool = True) -> dict[str, str | None]:
    """Keep DDS on loopback, in a random domain of its own, with ROS files under ``ros_home``.

    :param environ: the environment to change (default ``os.environ``; children inherit it).
    :param ros_home: where ROS_HOME and ROS_LOG_DIR point (the log folder is created);
        None leaves both as they are.
    :param distro: the ROS 2 distro; None asks :func:`detect_distro`.
    :param force: True (tests, benchmarks) replaces a caller's RMW and loopback variables, so
        a run can never leave loopback; False (the demo a person runs) keeps what the caller set
        and fills in only what is missing. A caller's ROS_DOMAIN_ID, ROS_HOME and ROS_LOG_DIR
        are kept either way, so a parent run and its children share one domain.
    :return: what was set (a value) or removed (None).
    """
    environ = os.environ if environ is None else environ
    distro = detect_distro(environ) if distro is None else distro
    loopback = loopback_variables(distro)
    changes: dict[str, str | None] = {'RMW_IMPLEMENTATION': RMW, **loopback}
    if not force:
        caller_chose = any(environ.get(name) for name in loopback)
        changes = {name: value for name, value in changes.items()
                   if not environ.get(name) and not (caller_chose and name in loopback)}
    defaults = {'ROS_DOMAIN_ID': str(random.SystemRandom().randint(1, 100))}
    if ros_home is not None:
        defaults.update(ROS_HOME=str(ros_home), ROS_LOG_DIR=str(ros_home / 'log'))
    changes.update({name: value for name, value in defaults.items() if not environ.get(name)})
    for name, value in changes.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    if ros_home is not None:
        Path(environ['ROS_LOG_DIR']).mkdir(parents=True, exist_ok=True)
    return changes


def make_lines(distro: str) -> list[str]:
    """Return the loopback settings of ``distro`` as GNU make ``export``/``unexport`` lines."""
    wanted: dict[str, str | None] = {'RMW_IMPLEMENTATION': RMW, **loopback_variables(distro)}
    return [f'unexport {name}' if value is None else f'export {name} := {value}'
            for name, value in wanted.items()]


def main(argv: list[str] | None = None) -> int:
    """Print the loopback settings of a distro for the Makefile to include."""
    parser = argparse.ArgumentParser(prog='python -m fabrik_ros.ros_env',
                                     description=__doc__.splitlines()[0])
    parser.add_argument('--distro', help='ROS 2 distro (default: detected, see detect_distro)')
    parser.add_argument('--make', action='store_true', required=True,
                        help='print GNU make export/unexport lines')
    options = parser.parse_args(argv)
    distro = options.distro or detect_distro()
    if distro is None:
        parser.error('--distro not given and no ROS_DISTRO or rclpy to detect it from')
    print('\n'.join(make_lines(distro.lower())))
    return 0


if __name__ == '__main__':
    sys.exit(main())
