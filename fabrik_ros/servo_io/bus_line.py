"""How long each request of a bus link holds the line, and the link defaults chosen from that.

Line times at 1 Mbaud (8N1, 10 µs a byte), six servos (:func:`line_times`):

======================  ===========================  ===========================
request                 Feetech STS3215 (P1.0)       Dynamixel X (P2.0)
======================  ===========================  ===========================
sync write goals        50 B = 500 µs                68 B = 680 µs
sync read positions     14 + 6 x 8 B = 620 µs        20 + 6 x 15 B = 1100 µs
telemetry, one servo    8 + 12 B = 200 µs            14 + 32 B + 14 + 12 B = 720 µs
ping                    6 + 6 B = 120 µs             10 + 14 B = 240 µs
======================  ===========================  ===========================

Hence the default feedback rate, ``DEFAULT_FEEDBACK_HZ`` = 50 Hz: its reads fill 3.1 %
(Feetech) and 5.5 % (Dynamixel) of the line, leaving it to the goals (a 500 Hz stream of sync
writes fills 25 % and 34 %), and a goal that arrives during a read waits at most one read's
line time (0.6 ms, 1.1 ms). On a real USB adapter every read also costs a turnaround (1 ms
with the latency timer at 1 ms), which 50 Hz keeps near 5 % of the time; 50 Hz is also the
rate robot_state_publisher and RViz need for smooth motion. Telemetry (5 reads/s) adds 0.1 %
and 0.4 %.

Telemetry's rate, ``DEFAULT_TELEMETRY_HZ`` = 5 reads a second (round robin, one servo a read),
is set by its one reader, the driver's diagnostics at 1 Hz: on the SO-101's six Feetech servos
each servo's load, voltage and temperature are at most 1.2 s old there (2.4 s on Dynamixel X,
two reads a servo), and these change over seconds (heat over minutes). What needs to be fast
does not wait for it: every status packet, so every feedback read at 50 Hz, carries the
servo's error bits (overload, overheat, voltage). Each read costs the host as much as a
feedback read (two wake-ups of the I/O thread), which on an idle Raspberry Pi is what counts.
"""

from fabrik_ros.servo_io.link_options import LinkOptions
from fabrik_ros.servo_io.protocols.bus_codec import BusCodec
from fabrik_ros.servo_io.protocols.control_tables import ControlTable, Register, span

DEFAULT_FEEDBACK_HZ = 50.0      # see the module docstring
DEFAULT_TELEMETRY_HZ = 5.0      # readings of one servo per second, round robin (see above)
# The largest block one telemetry read asks for: above it the registers are read apart.
TELEMETRY_BLOCK_MAX = 24
BUS_BAUD = 1_000_000            # the servos' factory rate (STS3215); X series as arms use them

# How long after its request's last byte a status may still come, beyond its own line time
# (which the deadline adds): the servo answers after its Return Delay Time (the factory 250
# = 500 us on the STS3215 and the Dynamixel X, control_tables.py; LeRobot's setup writes 0,
# 2 us), and a USB adapter hands the bytes to the host when its latency timer
# runs out (16 ms as FTDI and CH340 adapters ship, 1 ms where an owner lowered it) or on the
# next 1 ms USB frame. Both makers' SDKs (dynamixel_sdk, scservo_sdk) wait two latency
# timers and 2 ms more: 34 ms. A servo that does not answer costs that much of the line per
# request, and is left out of the reads after ``lost_after`` such requests.
REPLY_TIMEOUT_S = 2 * 0.016 + 0.002

BUS_OPTIONS = LinkOptions(
    baud=BUS_BAUD, poll_hz=DEFAULT_FEEDBACK_HZ, reply_timeout_s=REPLY_TIMEOUT_S,
    handshake_timeout_s=1.0, handshake_interval_s=0.1, max_retries=2, lost_after=3)
"""A bus link's defaults: 1 Mbaud, feedback at ``DEFAULT_FEEDBACK_HZ``, short reply timeout."""


def goal_span(table: ControlTable) -> tuple[int, int]:
    """Return the address and size of the block a goal write covers (position and speed)."""
    return span(table.goal_position, table.goal_speed)


def goal_block(table: ControlTable, goal: int, speed: int) -> bytes:
    """Return the goal block: position and speed where they sit, zeros between (time 0)."""
    address, size = goal_span(table)
    block = bytearray(size)
    for register, value in ((table.goal_position, goal), (table.goal_speed, speed)):
        offset = register.address - address
        block[offset:offset + register.size] = register.encode(value)
    return bytes(block)


def telemetry_blocks(table: ControlTable) -> list[list[Register]]:
    """Return the reads that cover a servo's load, voltage, temperature and error register.

    Registers closer than ``TELEMETRY_BLOCK_MAX`` bytes share one read.
    """
    wanted = [table.present_load, table.present_voltage, table.present_temperature]
    if table.hardware_error_status is not None:
        wanted.append(table.hardware_error_status)
    blocks: list[list[Register]] = []
    for register in sorted(wanted, key=lambda r: r.address):
        if blocks and span(*blocks[-1], register)[1] <= TELEMETRY_BLOCK_MAX:
            blocks[-1].append(register)
        else:
            blocks.append([register])
    return blocks


def line_times(codec: BusCodec, table: ControlTable, servos: int,
               baud: int = BUS_BAUD) -> dict[str, tuple[int, float]]:
    """Return the bytes and line time [µs] of each request the link makes, with its answers.

    >>> from fabrik_ros.servo_io.protocols.feetech import FeetechCodec
    >>> from fabrik_ros.servo_io.protocols.control_tables import STS3215
    >>> line_times(FeetechCodec(), STS3215, 6)['sync read positions']
    (62, 620.0)
    """
    ids = list(range(1, servos + 1))
    position = table.present_position
    goal_address, goal_size = goal_span(table)
    telemetry = 0
    for block in telemetry_blocks(table):
        address, size = span(*block)
        telemetry += len(codec.read(1, address, size)) + codec.status_size(size)
    sizes = {
        'sync write goals': len(codec.sync_write(goal_address, goal_size,
                                                 {i: bytes(goal_size) for i in ids})),
        'sync read positions': len(codec.sync_read(position.address, position.size, ids))
        + servos * codec.status_size(position.size),
        'telemetry, one servo': telemetry,
        'ping': len(codec.ping(1)) + codec.status_size(3 if codec.FIELD_BYTES == 2 else 0),
    }
    return {name: (size, size * 10 * 1e6 / baud) for name, size in sizes.items()}
