"""Give the benchmark's own timing threads real-time priority, where the OS allows it.

The simulated board and the target publisher are the measuring instrument: if another process
delays them, the board stamps a frame late and the delay is charged to the nodes under test,
which real hardware would not do. SCHED_FIFO keeps the instrument on time on a busy machine;
the nodes keep normal priority. Without the privilege (no root, no CAP_SYS_NICE) the threads
run as before and the result says so.
"""

import os

PRIORITY = 50


def boost_current_thread() -> bool:
    """Switch the calling thread to SCHED_FIFO; return False if the OS refuses."""
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
    """Return the calling thread to normal scheduling."""
    try:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (PermissionError, OSError, AttributeError):
        pass
