"""Read the console lines rclpy loggers wrote to stderr (captured by pytest's capfd)."""

from dataclasses import dataclass
import re

_LINE = re.compile(r'^\[(DEBUG|INFO|WARN|ERROR|FATAL)\] \[[\d.]+\] \[([^\]]+)\]: (.*)$')


@dataclass(frozen=True)
class LogLine:
    """One console log line: severity, logger name (``ns.node``) and message."""

    severity: str
    logger: str
    message: str


def log_lines(stderr: str, node: str) -> list[LogLine]:
    """Return the lines logged by node ``node`` (any namespace) in ``stderr``."""
    lines = []
    for text in stderr.splitlines():
        match = _LINE.match(text)
        if match and match.group(2).rsplit('.', 1)[-1] == node:
            lines.append(LogLine(*match.groups()))
    return lines


def by_cause(lines: list[LogLine], causes: dict[str, str]) -> dict[str, list[LogLine]]:
    """Group WARN lines by the first cause whose phrase they contain ('?' = none)."""
    groups: dict[str, list[LogLine]] = {}
    for line in lines:
        if line.severity != 'WARN':
            continue
        cause = next((name for name, phrase in causes.items() if phrase in line.message), '?')
        groups.setdefault(cause, []).append(line)
    return groups
