"""Real-time priority for the measuring instrument (simulated board, target source), if allowed.

A real servo board is a microcontroller of its own that host load never delays; the simulated
one shares the host's CPUs. SCHED_FIFO keeps it (and the 1 kHz target source) on time on a busy
machine, so a late reply is charged to the nodes under test only when they are late. The nodes
keep normal priority. Without the privilege the instrument runs as before and the soak says so.
"""

import os

PRIORITY = 40


def boost_current_thread() -> bool:
    """Switch the calling thread (and threads it starts later) to SCHED_FIFO; False if refused."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK,
                              os.sched_param(PRIORITY))
    except (PermissionError, OSError, AttributeError):
        return False
    return True
