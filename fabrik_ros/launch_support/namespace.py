"""The ``namespace:=`` launch argument: one arm's nodes, topics and services under a prefix.

Every fabrik_ros node names its topics and services relative to its namespace (joint_states,
joint_commands, target_point, ~/home) except ``/diagnostics``, which stays global: every
status is named ``<namespace>/<node>: ...``, so one diagnostics view tells the arms apart.
Under a namespace the names that are absolute for the tools' sake are taken in as well, so
that two arms launched side by side do not drive or draw each other:

- the launched RViz: every absolute topic of config/rviz/fabrik.rviz (the robot description,
  ik_markers, the interactive target of fabrik_ik), its Publish Point and 2D Goal Pose tools
  (onto target_point / target_pose, as without a namespace), and TF;
- robot_state_publisher: TF (``/tf``, ``/tf_static`` -> ``<ns>/tf``): the arms' frames have
  the same names (base_link), so each arm's transforms stay in its namespace;
- fabrik_ik's ``follow_rviz_tools`` topics (``/clicked_point``, ``/goal_pose`` ->
  ``<ns>/clicked_point``): a click in one RViz moves one arm.
"""

from collections.abc import Iterator
from pathlib import Path
import re
from typing import Any

import yaml

from fabrik_ros.launch_support.errors import LaunchArgumentError

ARGUMENT = 'namespace'
DEFAULT_LINK = '/tmp/fabrik_ros_sim_board'
# RViz's Publish Point and 2D Goal Pose tools publish here; the launched RViz sends them to
# the topics fabrik_ik follows instead (relative: into the namespace, if there is one).
RVIZ_TOOL_REMAPPINGS = (('/clicked_point', 'target_point'), ('/goal_pose', 'target_pose'))
TF_TOPICS = ('/tf', '/tf_static')
# The topics fabrik_ik follows with follow_rviz_tools (ik_node.py).
IK_RVIZ_TOPICS = ('/clicked_point', '/goal_pose')
# What an interactive marker server offers under its name (interactive_markers).
_MARKER_SERVER_NAMES = ('update', 'feedback', 'get_interactive_markers')
_TOKEN = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
_MAX_CHARS = 200

Remappings = tuple[tuple[str, str], ...]


def checked_namespace(text: str) -> str:
    """Return ``text`` as an absolute ROS namespace ('' for none): ``left`` -> ``/left``.

    >>> checked_namespace('left'), checked_namespace('/robots/left'), checked_namespace('')
    ('/left', '/robots/left', '')

    :raises LaunchArgumentError: naming the value and the rule (ROS name tokens: a letter or
        _ first, then letters, digits and _, separated by /)
    """
    if text in ('', '/'):
        return ''
    tokens = text.removeprefix('/').split('/')
    bad = next((token for token in tokens if not _TOKEN.fullmatch(token)), None)
    if bad is not None or len(text) > _MAX_CHARS:
        shown = f' ({bad!r} is not)' if bad is not None else f' (at most {_MAX_CHARS} chars)'
        raise LaunchArgumentError(
            f'{ARGUMENT}:={text} is not a ROS namespace{shown}: names separated by /, each a '
            f'letter or _ first, then letters, digits and _ (e.g. {ARGUMENT}:=left)')
    return '/' + '/'.join(tokens)


def default_link(namespace: str) -> str:
    """Return the simulated board's default symlink: one per namespace, so two launches differ.

    >>> default_link(''), default_link('/robots/left')
    ('/tmp/fabrik_ros_sim_board', '/tmp/fabrik_ros_sim_board_robots_left')
    """
    return DEFAULT_LINK + namespace.replace('/', '_')


def rviz_remappings(namespace: str, rviz_config: Path) -> Remappings:
    """Return the launched RViz's remappings: its tools, and under a namespace its topics."""
    if not namespace:
        return RVIZ_TOOL_REMAPPINGS
    tools = dict(RVIZ_TOOL_REMAPPINGS)
    names = [name for name in absolute_names(rviz_config) if name not in tools]
    return RVIZ_TOOL_REMAPPINGS + _inward((*names, *TF_TOPICS))


def state_publisher_remappings(namespace: str) -> Remappings:
    """Return robot_state_publisher's remappings: TF into the namespace, if there is one."""
    return _inward(TF_TOPICS) if namespace else ()


def ik_remappings(namespace: str) -> Remappings:
    """Return fabrik_ik's remappings: the RViz tool topics it follows, into the namespace."""
    return _inward(IK_RVIZ_TOPICS) if namespace else ()


def absolute_names(rviz_config: Path) -> tuple[str, ...]:
    """Return every absolute topic and service name the RViz config uses, in file order.

    A display's ``Topic`` / ``Description Topic`` value, a tool's ``Topic``, and the names an
    interactive markers display reaches under its ``Interactive Markers Namespace``.
    """
    try:
        document = yaml.safe_load(rviz_config.read_text(encoding='utf-8'))
    except (OSError, yaml.YAMLError) as error:
        raise LaunchArgumentError(f'{rviz_config}: not a readable RViz config: {error}') from None
    return tuple(dict.fromkeys(_names(document)))


def _names(value: Any) -> Iterator[str]:
    if isinstance(value, list):
        for item in value:
            yield from _names(item)
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        if key in ('Topic', 'Description Topic') and isinstance(item, dict):
            topic = item.get('Value')
            if isinstance(topic, str) and topic.startswith('/'):
                yield topic
        elif key == 'Interactive Markers Namespace' and isinstance(item, str) and item:
            yield from (f'{item.rstrip("/")}/{name}' for name in _MARKER_SERVER_NAMES)
        else:
            yield from _names(item)


def _inward(names: tuple[str, ...]) -> Remappings:
    """Return each absolute name remapped to the same name relative to the node's namespace."""
    return tuple((name, name.removeprefix('/')) for name in names)
