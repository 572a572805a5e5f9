"""Give the measuring instrument's threads real-time priority, where the OS allows it.

The instrument is the simulated board and the target source (the benchmarks' publisher, the
soak's 1 kHz stream). A real servo board is a microcontroller of its own that host load never
delays; the simulated one shares the host's CPUs, so if another process delays it, it stamps a
frame late and the delay is charged to the nodes under test. SCHED_FIFO keeps the instrument
on time on a busy machine; the nodes keep normal priority. Without the privilege (no root, no
CAP_SYS_NICE) the threads run as before and the caller reports that they did.

The one helper for bench/ (imported as ``priority``) and test/ (as ``bench.priority``).
"""

import os

PRIORITY = 50


def boost_current_thread() -> bool:
    """Switch the calling thread (and threads it starts later) to SCHED_FIFO; False if refused.

    SCHED_RESET_ON_FORK keeps child processes (the nodes under test) at normal priority.
    """
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK,
                              os.sched_param(PRIORITY))
    except (PermissionError, OSError, AttributeError):
        return False
    return True


def boost_process(pid: int) -> bool:
    """Switch every thread of process ``pid`` to SCHED_FIFO; return False if the OS refuses."""
    try:
        for task in os.listdir(f'/proc/{pid}/task'):
            os.sched_setscheduler(int(task), os.SCHED_FIFO | os.SCHED_RESET_ON_FORK,
                                  os.sched_param(PRIORITY))
    except (PermissionError, OSError, AttributeError):
        return False
    return True


def restore_current_thread() -> None:
    """Return the calling thread to normal scheduling (a no-op where it was never boosted)."""
    try:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (PermissionError, OSError, AttributeError):
        pass
