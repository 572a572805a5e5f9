"""Which joint angles servo_driver publishes: the board's report, or the command it confirms.

An SSC-32U answers a position query (QP) in 10 µs steps, about 0.9 degrees on a 180 degree
servo and about 2 mm at the tool of the 4-DOF arm: published as they are, joint_states would
be off by up to that much while the arm stands exactly where it was sent. Where every
reported pulse is the commanded one as far as the report can tell, the commanded angles are
the better estimate; while the servos move (or stopped elsewhere) the report is published.
"""

from collections.abc import Sequence

from fabrik_ros.kinematics.aliases import FloatVector


def report_confirms(reported_us: Sequence[float], commanded_us: FloatVector,
                    resolution_us: float) -> bool:
    """Return True if each reported pulse is its commanded one, within the report's resolution.

    The board was sent whole microseconds (up to 0.5 µs from the commanded value) and
    reports them rounded to ``resolution_us``: up to half a step away.

    >>> report_confirms([1500, 1230], [1502.4, 1226.0], 10.0)
    True
    >>> report_confirms([1500, 1240], [1502.4, 1226.0], 10.0)
    False

    :param reported_us: the joints' pulses the board reports [µs]
    :param commanded_us: the joints' pulses last sent [µs], in the same order (a sequence,
        or the array of a :class:`~fabrik_ros.kinematics.ServoCommand`)
    :param resolution_us: the step of the board's reports [µs]
    """
    tolerance_us = resolution_us / 2.0 + 0.5
    return len(reported_us) == len(commanded_us) and all(
        abs(float(r) - float(c)) <= tolerance_us
        for r, c in zip(reported_us, commanded_us, strict=True))
