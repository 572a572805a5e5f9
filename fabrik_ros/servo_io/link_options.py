"""Settings and state of the links (:class:`~fabrik_ros.servo_io.link.ServoLink`, BusLink)."""

from dataclasses import dataclass, fields
import enum
import math

# The longest move a link takes [s]: move times travel as 16-bit milliseconds (the native
# SET_PULSES, and the goal time of bus servos). Nodes cap their moves with this constant.
MOVE_MAX_S = 65.535


class LinkState(enum.Enum):
    """Where the link is in its life cycle."""

    CONNECTING = 'connecting'      # port opening, waiting for the board's handshake
    READY = 'ready'                # handshake done; commands flow
    DISCONNECTED = 'disconnected'  # port lost; waiting out the back-off before reopening
    CLOSED = 'closed'              # close() was called (or the I/O thread died)


@dataclass(frozen=True)
class LinkOptions:
    """Tuning of the link; every duration in seconds, every rate in hertz.

    :param baud: line speed: nothing is written while earlier bytes still occupy the line
        (``10 / baud`` seconds per byte), so a newer command replaces an unsent one [bit/s].
    :param max_rate_hz: most pulse commands per second, for a board that cannot take them as
        fast as its line carries them; 0 = no cap but the line's.
    :param max_in_flight: pulse commands that may await their acknowledgements at once
        (native protocol; the others acknowledge nothing).
    :param poll_hz: position read-backs per second, 0 = never.
    :param reply_timeout_s: how long to wait for one answer before re-sending.
    :param write_timeout_s: how long one write may block before the link gives up on the port.
    :param handshake_timeout_s: how long to wait for the board after opening (Arduino reset).
    :param handshake_interval_s: time between handshake requests while waiting.
    :param max_retries: re-sends of an unanswered or BAD_CRC-refused request.
    :param lost_after: requests in a row left unanswered before the link reconnects.
    :param backoff_min_s: first wait before reopening a lost port; doubles up to the max.
    :param backoff_max_s: longest wait between reopen attempts.
    :param path_check_s: how often the device path is checked for having vanished, and while
        it is gone, for having come back.
    """

    baud: int = 115200
    max_rate_hz: float = 0.0
    max_in_flight: int = 4
    poll_hz: float = 10.0
    reply_timeout_s: float = 0.1
    write_timeout_s: float = 0.5
    handshake_timeout_s: float = 3.0
    handshake_interval_s: float = 0.25
    max_retries: int = 2
    lost_after: int = 3
    backoff_min_s: float = 0.05
    backoff_max_s: float = 1.0
    path_check_s: float = 0.2

    def __post_init__(self) -> None:
        """Refuse a value of the wrong type, or non-finite, negative or zero where senseless.

        Checked here rather than where the I/O thread first uses it: a TypeError there would
        close the link long after the caller could have been told.
        """
        for field in fields(self):
            value = getattr(self, field.name)
            rule = _rule(value, integer=field.type in (int, 'int'),
                         allow_zero=field.name in _ZERO_ALLOWED)
            if rule:
                raise ValueError(f'LinkOptions.{field.name} = {value!r}, {rule}')
        if self.backoff_max_s < self.backoff_min_s:
            raise ValueError(f'LinkOptions.backoff_max_s = {self.backoff_max_s!r}, must be >= '
                             f'backoff_min_s = {self.backoff_min_s!r}')


# Fields for which 0 means something (never poll; never re-send).
_ZERO_ALLOWED = ('poll_hz', 'max_retries', 'max_rate_hz')


def _rule(value: object, *, integer: bool, allow_zero: bool) -> str:
    """Return the rule ``value`` breaks, '' if none (a bool is neither an int nor a number).

    >>> _rule(1.5, integer=True, allow_zero=True), _rule(0, integer=False, allow_zero=False)
    ('must be an int', 'must be finite and > 0')
    """
    kind = 'an int' if integer else 'a number'
    if isinstance(value, bool):
        return f'must be {kind} (not a bool)'
    if not isinstance(value, int if integer else (int, float)):
        return f'must be {kind}'
    bound = '>= 0' if allow_zero else '> 0'
    if value < 0 or (value == 0 and not allow_zero):
        return f'must be {bound}' if integer else f'must be finite and {bound}'
    if not math.isfinite(value):
        return f'must be finite and {bound}'
    return ''
