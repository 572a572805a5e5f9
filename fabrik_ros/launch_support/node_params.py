"""Node parameters given to a launch file: ``params_file:=`` and node sections of ``config:=``.

A file of node parameters is a ROS 2 parameter file whose sections are named after the nodes
(``fabrik_ik: ros__parameters: use_pose_orientation: true``). Launch would hand it to rcl,
which applies a section to the node of that exact name and ignores the rest without a word: a
misspelt node (``fabrik_ikk``), a parameter the node does not have, a section meant for the
root namespace while the launch runs under ``namespace:=left``. So the file is read here,
every section and parameter checked against what the nodes declare
(:mod:`fabrik_ros.node_parameters`), and each node of the launch gets its own
parameters as a dictionary, in whatever namespace it runs.
"""

from collections.abc import Mapping
import difflib
import os
from typing import Any

import yaml

from fabrik_ros.kinematics.description.arm_file import PARAMS_KEY, WILDCARD
from fabrik_ros.kinematics.description.arm_keys import closest, TOP_KEYS
from fabrik_ros.kinematics.description.flat_keys import flatten
from fabrik_ros.launch_support.errors import LaunchArgumentError
from fabrik_ros.node_parameters import node_parameters, STANDARD_PARAMETERS

ARGUMENT = 'params_file'
MAX_BYTES = 1 << 20     # far more than any file of node parameters

NodeValues = dict[str, dict[str, Any]]


def node_sections(path: str, *, argument: str, started: tuple[str, ...], namespace: str,
                  by_argument: Mapping[str, Mapping[str, str]]) -> NodeValues:
    """Return the parameters each started node gets from the file at ``path``, checked.

    :param argument: ``params_file`` (every section names a node) or ``config`` (the arm
        file: its ``/**`` section is the arm, read by load_arm; other sections name nodes)
    :param started: the fabrik_ros nodes this launch starts
    :param namespace: the launch's namespace ('' or absolute); a section may name it
    :param by_argument: per node, the parameters a launch argument sets (port -> port:=)
    :raises LaunchArgumentError: naming the argument, the file, the section or parameter and
        the rule, with the closest known name
    """
    where = f'{argument}:={path}'
    document = read_mapping(path, where)
    values: NodeValues = {}
    for key, section in document.items():
        if key == WILDCARD and argument != ARGUMENT:
            continue
        node = _node_of(str(key), where, started, namespace)
        parameters = _parameters_of(section, f'{where}: {key}')
        for name, value in parameters.items():
            _check_parameter(node, name, value, f'{where}: {key}.{PARAMS_KEY}.{name}',
                             by_argument.get(node, {}))
        values.setdefault(node, {}).update(parameters)
    return values


def read_mapping(path: str, where: str) -> Mapping[Any, Any]:
    """Return the YAML mapping in the file at ``path`` (at most :data:`MAX_BYTES`)."""
    if not os.path.isfile(path):
        raise LaunchArgumentError(f'{where}: no such file')
    try:
        with open(path, encoding='utf-8') as stream:
            text = stream.read(MAX_BYTES + 1)
        document = yaml.safe_load(text) if len(text) <= MAX_BYTES else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise LaunchArgumentError(f'{where}: not readable YAML: '
                                  f'{" ".join(str(error).split())}') from None
    if len(text) > MAX_BYTES:
        raise LaunchArgumentError(f'{where}: longer than {MAX_BYTES} bytes')
    if not isinstance(document, Mapping):
        raise LaunchArgumentError(f'{where}: must hold node sections, e.g. fabrik_ik: '
                                  f'{PARAMS_KEY}: use_pose_orientation: true')
    return document


def _node_of(key: str, where: str, started: tuple[str, ...], namespace: str) -> str:
    """Return the started node a section name means, or refuse it."""
    if key == WILDCARD:
        raise LaunchArgumentError(
            f'{where}: {WILDCARD} would give every node the same parameters; name each node '
            f'({", ".join(started)}: {PARAMS_KEY}: ...); the arm itself goes in config:=')
    *space, node = key.removeprefix('/').split('/')
    named = '/' + '/'.join(space) if space else ''
    if named and named not in ('/**', namespace):
        runs = f'namespace {namespace}' if namespace else 'the root namespace'
        raise LaunchArgumentError(
            f'{where}: section {key} names the namespace {named}, but this launch runs its '
            f'nodes in {runs}; name the node alone ({node}:)')
    if node not in started:
        known = node_parameters().nodes
        other = ' (a fabrik_ros node this launch does not start)' if node in known else ''
        close = difflib.get_close_matches(node, started, n=1, cutoff=0.0)
        raise LaunchArgumentError(
            f'{where}: section {key} names no node of this launch{other}; the closest is '
            f'{close[0] if close else started[0]} (it starts {", ".join(started)})')
    return node


def _parameters_of(section: Any, where: str) -> dict[str, Any]:
    """Return the dotted parameters of one node section, refusing what ROS cannot take."""
    if not isinstance(section, Mapping) or set(section) != {PARAMS_KEY} or not isinstance(
            section[PARAMS_KEY], Mapping):
        raise LaunchArgumentError(f'{where}: must hold one mapping, {PARAMS_KEY}: ...')
    parameters = dict(flatten(section[PARAMS_KEY]))
    for name, value in parameters.items():
        if isinstance(value, list):
            kinds = {type(item) for item in value if not isinstance(item, bool)}
            if not value or {int, float} <= kinds:
                raise LaunchArgumentError(
                    f'{where}.{PARAMS_KEY}.{name}: {value} is no ROS parameter: '
                    + ('an empty list has no type, give at least one value' if not value
                       else 'write every number of a float list with a decimal point'))
    return parameters


def _check_parameter(node: str, name: str, value: Any, where: str,
                     by_argument: Mapping[str, str]) -> None:
    table = node_parameters()
    if name in by_argument:
        raise LaunchArgumentError(f'{where} = {value!r}: the launch argument '
                                  f'{by_argument[name]}:= sets it; give it there')
    if name in table.of(node) or name in STANDARD_PARAMETERS:
        return
    if name.split('.')[0] in TOP_KEYS:
        raise LaunchArgumentError(f'{where} = {value!r}: a key of the arm file, not a node '
                                  f'parameter; it goes in the arm file (config:=), under '
                                  f'{WILDCARD}: {PARAMS_KEY}:')
    owners = [owner for owner in table.owners(name) if owner != node]
    if owners:
        raise LaunchArgumentError(f'{where} = {value!r}: {node} has no such parameter; it is '
                                  f'one of {" and ".join(owners)}: give it in that section')
    raise LaunchArgumentError(f'{where} = {value!r}: {node} has no such parameter; the closest '
                              f'parameter of {node} is '
                              f'{closest(name, (*table.of(node), *STANDARD_PARAMETERS))}')
