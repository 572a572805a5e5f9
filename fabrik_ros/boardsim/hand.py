"""A simulated hand that moves limp bus servos slowly back and forth: a leader arm in use.

``sim_device --protocol feetech --hand 3:300:6`` moves servo 3 by up to 300 counts either side
of where it stood when the hand began, one round trip every 6 s (a sine), as a person moving a
leader arm would; a servo with torque on drives back to its goal (see
:meth:`~fabrik_ros.boardsim.bus_servo.BusServo.move_by_hand`). teleop.launch.py's simulated
leader runs with such hands, so the follower has something to follow.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math
import threading
import time

from fabrik_ros.boardsim.bus_firmware import BusFirmware

HAND_STEP_S = 0.01          # how often the hand moves the shafts [s]: smooth at 100 Hz


@dataclass(frozen=True)
class HandSweep:
    """One servo moved back and forth: ``amplitude_counts`` either side, every ``period_s``.

    >>> sweep = HandSweep(3, 300.0, 4.0)
    >>> sweep.count(2048.0, 0.0), sweep.count(2048.0, 1.0), sweep.count(2048.0, 3.0)
    (2048.0, 2348.0, 1748.0)
    """

    servo_id: int
    amplitude_counts: float
    period_s: float

    def count(self, centre: float, elapsed_s: float) -> float:
        """Return where the hand holds the shaft ``elapsed_s`` after it began [counts]."""
        return centre + self.amplitude_counts * math.sin(2.0 * math.pi * elapsed_s
                                                         / self.period_s)


def parse_sweep(text: str) -> HandSweep:
    """Return the sweep of ``ID:AMPLITUDE_COUNTS:PERIOD_S``.

    :raises ValueError: naming the text and the form it must have
    """
    parts = text.split(':')
    try:
        servo_id, amplitude, period = int(parts[0]), float(parts[1]), float(parts[2])
    except (IndexError, ValueError):
        raise ValueError(f'{text!r}: must be ID:AMPLITUDE_COUNTS:PERIOD_S, e.g. 3:300:6') \
            from None
    if len(parts) != 3 or not (0.0 <= amplitude <= 2048.0 and 0.5 <= period <= 3600.0):
        raise ValueError(f'{text!r}: must be ID:AMPLITUDE_COUNTS:PERIOD_S with the amplitude '
                         'within [0, 2048] counts and the period within [0.5, 3600] s')
    return HandSweep(servo_id, amplitude, period)


class Hand:
    """Move the servos of ``sweeps`` on ``firmware`` from a thread until :meth:`stop`."""

    def __init__(self, firmware: BusFirmware, sweeps: Sequence[HandSweep], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._firmware = firmware
        self._sweeps = tuple(sweeps)
        self._clock = clock
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name='sim hand', daemon=True)

    def start(self) -> 'Hand':
        """Start moving the servos, each about where it stands now."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop moving them (they stay where the hand left them)."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(1.0)

    def _run(self) -> None:
        began = self._clock()
        centres = {s.servo_id: self._firmware.servo(s.servo_id).present(began)
                   for s in self._sweeps}
        while not self._stopping.wait(HAND_STEP_S):
            now = self._clock()
            for sweep in self._sweeps:
                self._firmware.move_by_hand(
                    sweep.servo_id, sweep.count(centres[sweep.servo_id], now - began), now)
