"""A bus scheduler's working records: a request on the line, a servo task, a servo's state.

A *task* is one servo's sequence of unicast requests, each answered before the next (its
admission, a torque change): a generator that yields a :class:`Request` and is sent the status
that answered it (None: none came, within the retries).
"""

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
import math
from typing import Optional

from fabrik_ros.servo_io.protocols.bus_codec import StatusPacket
from fabrik_ros.servo_io.protocols.control_tables import ControlTable

Task = Generator['Request', Optional[StatusPacket], None]


@dataclass(eq=False)
class Request:
    """Bytes for the line and the statuses (by id, in order) that answer them.

    ``params`` is the length of the parameters each answer carries (None: no answer is
    expected); a status of another length answers another request (a late one: status
    packets carry no sequence number) and is dropped.
    """

    name: str
    data: bytes
    expect: tuple[int, ...] = ()
    answer_bytes: int = 0
    params: Optional[int] = None
    statuses: dict[int, StatusPacket] = field(default_factory=dict)
    sent_s: float = 0.0
    deadline_s: float = 0.0
    done: Optional[Callable[[dict[int, StatusPacket], float], None]] = None


@dataclass(eq=False)
class ServoRecord:
    """What the scheduler knows of one servo on this connection."""

    id: int
    table: ControlTable
    model: str = ''
    admitted: bool = False          # present position read on this connection
    busy: bool = False              # a task of its own is queued or running
    rewish: bool = False            # torque wished while busy (its task read an older wish)
    lost_since: Optional[float] = None     # stopped answering: out of reads and writes, pinged
    silent_since: Optional[float] = None   # ... for long enough to be named silent
    misses: int = 0                 # requests missed in a row
    missed_from_s: float = 0.0      # when the first of them was written
    next_ping_s: float = 0.0
    back_by_s: float = -math.inf    # rebooted: its misses count from then (it restarts)
    limits: Optional[tuple[int, int]] = None
    voltage_limits_v: Optional[tuple[float, float]] = None    # its limit registers, as read
    homing_offset: Optional[int] = None
    torque: Optional[bool] = None   # as last read or written (acknowledged)
    torque_limit: Optional[int] = None     # torque-limit register as last written (acknowledged)
    limit_tried: Optional[int] = None      # the value last tried on this admission
    present: Optional[int] = None
    goal: Optional[int] = None      # the goal last written
    speed: int = 0                  # the speed last written [register units]
    temperature_c: Optional[float] = None
    voltage_v: Optional[float] = None
    load_percent: Optional[float] = None
    error: int = 0                  # the latest status error byte
    hardware_error: int = 0
    readings_s: Optional[float] = None
