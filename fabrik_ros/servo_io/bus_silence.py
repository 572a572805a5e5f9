"""When a bus servo that does not answer is left out, and when it is named silent.

A servo that misses ``lost_after`` requests in a row is *lost*: left out of reads and writes
(each request it misses holds the line for a reply timeout) and pinged until it answers, then
admitted anew. It is named *silent* (a notice, its health) only once the requests it missed
span ``SILENT_AFTER_S`` while other servos answered, or ``BUS_QUIET_S`` while none did. A count
of requests alone would name every servo dead after any pause of the host's I/O thread or the
adapter (a stalled thread, a late USB transfer): a stall quiets every servo at once, while a
dead servo goes quiet alone. A servo that missed the handshake's pings (``max_retries`` + 1
of them) is named at once. One lost, not yet named, is pinged every ``CONFIRM_PING_S``; one
named, every ``REPING_S``.

A servo that answered a reboot restarts: it is lost at once (its RAM, the torque among it, is
back at its power-up values) and pinged, but its misses count only from ``BOOT_S`` after the
reboot, so a servo that restarts is not named silent, and one that does not come back is.
Until it answers or is named it is pinged every ``BOOT_PING_S``: a ping it misses holds the
line for a reply timeout (34 ms), and pinged as often as a lost servo it would starve the
others' feedback for a whole ``BOOT_S`` (and their answers between its pings are what tells
a servo that does not come back from a bus that stalled).
"""

import math
from typing import Optional

from fabrik_ros.servo_io.bus_reports import Notice
from fabrik_ros.servo_io.bus_requests import ServoRecord

REPING_S = 1.0                  # a servo named silent is pinged again this often
CONFIRM_PING_S = 0.02           # a servo lost, not yet named, is pinged this often
# A servo is named silent once the requests it missed in a row span this long (and number
# ``lost_after``, the last a ping of its own) while other servos answered: longer than a loaded
# host's thread stalls (tens of milliseconds), and still named within 0.2 s of its first
# missed request, so the driver's next diagnostics (1 Hz) show it.
SILENT_AFTER_S = 0.1
# When no servo answered either, the host, the adapter or the simulator stalled, or the
# servos' supply is off: named after this long instead, as a small host kept busy can stall
# past 0.1 s; a supply cut is still named within the diagnostics' second.
BUS_QUIET_S = 0.5
# How long a rebooted servo may take to answer again, at most. The e-Manual gives no figure;
# an X series servo boots in well under a second (its LED blinks once), so this is generous.
BOOT_S = 1.0
BOOT_PING_S = 0.1               # a rebooted servo is pinged this often until it answers


def missed(servo: ServoRecord, sent_s: float, now_s: float, *, lost_after: int,
           answered_s: float) -> Optional[Notice]:
    """Count a request written at ``sent_s`` that ``servo`` did not answer.

    :param lost_after: the misses in a row that make it lost
    :param answered_s: when the latest request that any servo answered was written
    :returns: the notice that names it silent, if it is named now
    """
    if servo.misses == 0:
        servo.missed_from_s = max(sent_s, servo.back_by_s)
    servo.misses += 1
    if servo.misses >= lost_after and servo.lost_since is None:
        servo.lost_since = servo.missed_from_s
        servo.admitted = False
        servo.next_ping_s = now_s
    span_s = sent_s - servo.missed_from_s
    alone = answered_s > servo.missed_from_s
    if servo.lost_since is None or servo.silent_since is not None \
            or span_s < (SILENT_AFTER_S if alone else BUS_QUIET_S):
        return None
    servo.silent_since = servo.missed_from_s
    servo.next_ping_s = now_s + REPING_S
    others = '' if alone else '; no servo on the bus answered either'
    return Notice(servo.id, f'stopped answering ({servo.misses} requests in a row over '
                            f'{span_s:.2f} s{others})')


def missed_at_connect(servo: ServoRecord, now_s: float) -> Optional[Notice]:
    """Name ``servo`` silent: it answered none of the handshake's pings.

    :returns: the notice, unless it was named before (silent since an earlier connection)
    """
    servo.next_ping_s = now_s + REPING_S
    if servo.lost_since is None:
        servo.lost_since = now_s
    if servo.silent_since is not None:
        return None
    servo.silent_since = now_s
    return Notice(servo.id, 'did not answer a ping at connect')


def rebooted(servo: ServoRecord, now_s: float) -> None:
    """Leave ``servo`` out from ``now_s``, when it restarts after a reboot, until it answers.

    Whether or not its answer came (an answer lost on the line does not mean it did not
    restart): admitted anew either way, a servo that did not restart only holds where it
    stands. Its torque and error are those of power-up until it says otherwise.
    """
    servo.admitted = False
    servo.torque = False
    servo.error = servo.hardware_error = 0
    servo.misses = 0
    servo.lost_since = now_s
    servo.back_by_s = now_s + BOOT_S
    servo.next_ping_s = now_s


def ping_interval(servo: ServoRecord) -> float:
    """Return how long until a lost servo is pinged again [s]."""
    if servo.silent_since is not None:
        return REPING_S
    return BOOT_PING_S if servo.back_by_s > -math.inf else CONFIRM_PING_S
