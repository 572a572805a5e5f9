"""Small builders for diagnostic_msgs, published by the nodes themselves."""

from collections.abc import Mapping
import enum

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node


class Level(enum.IntEnum):
    """The levels of diagnostic_msgs/DiagnosticStatus."""

    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3


def status_name(node: Node, component: str) -> str:
    """Return ``<namespace/node>: <component>``, e.g. ``arm2/fabrik_ik: inverse kinematics``.

    Every node publishes on the one /diagnostics topic; the namespace in the name keeps two
    arms (or two test runs sharing a DDS domain) apart.
    """
    return f'{node.get_fully_qualified_name().lstrip("/")}: {component}'


def diagnostic_array(stamp: Time, *statuses: DiagnosticStatus) -> DiagnosticArray:
    """Return a DiagnosticArray holding ``statuses``."""
    array = DiagnosticArray()
    array.header.stamp = stamp
    array.status = list(statuses)
    return array


def diagnostic_status(name: str, hardware_id: str, level: Level, message: str,
                      values: Mapping[str, object]) -> DiagnosticStatus:
    """Return one status; floats in ``values`` are written with 6 significant digits."""
    status = DiagnosticStatus()
    status.level = bytes([int(level)])
    status.name = name
    status.hardware_id = hardware_id
    status.message = message
    status.values = [KeyValue(key=key, value=_text(value)) for key, value in values.items()]
    return status


def _text(value: object) -> str:
    if isinstance(value, float):
        return f'{value:.6g}'
    return str(value)
