"""What idling costs a process here: the same Python work, a sleep and a hop, after each gap.

At 20-50 Hz the nodes sleep 20-50 ms between targets; at 500 Hz, 2 ms. This measures, after a
sleep of each gap, (1) the CPU time of a fixed piece of work (three ``arm.ik`` calls, about
what fabrik_ik does per target), (2) how late ``time.sleep`` wakes (timer slack and wake-up),
(3) the round trip of one byte through pipes to another process and back (a wake-up on each
side, as each DDS hop has). It also prints the timer slack and what the kernel says of CPU
frequency and idle states. docs/performance.md ("At the rates users stream") quotes it.

    .venv/bin/python bench/idle_cost.py [--gaps-ms 0.5 2 20 50]
"""

import argparse
import os
from pathlib import Path
import time

from fabrik_ros.kinematics import load_arm

CONFIG = Path(__file__).resolve().parent.parent / 'config' / 'arm_4dof.yaml'
PR_GET_TIMERSLACK = 30


def machine() -> str:
    """Return the timer slack and the CPU frequency / idle drivers, as the kernel shows them."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    slack_ns = libc.prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)
    cpu = Path('/sys/devices/system/cpu')
    governor = cpu / 'cpu0' / 'cpufreq' / 'scaling_governor'
    frequency = governor.read_text().strip() if governor.exists() else 'no cpufreq driver'
    idle = cpu / 'cpuidle' / 'current_driver'
    states = sorted(cpu.glob('cpu0/cpuidle/state*/name'))
    idle_text = (f'{idle.read_text().strip()} ({", ".join(s.read_text().strip() for s in states)})'
                 if idle.exists() else 'no cpuidle driver')
    halt_poll = Path('/sys/module/haltpoll/parameters/guest_halt_poll_ns')
    if halt_poll.exists():
        idle_text += f', guest_halt_poll_ns {halt_poll.read_text().strip()}'
    return (f'timer slack {slack_ns / 1e3:.0f} µs; CPU frequency: {frequency}; idle: {idle_text}; '
            f'load average {os.getloadavg()[0]:.1f}')


def main() -> None:
    """Measure after each gap and print one line per gap."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--gaps-ms', nargs='+', type=float, default=[0.5, 2.0, 20.0, 50.0])
    parser.add_argument('--samples', type=int, default=100)
    args = parser.parse_args()
    arm = load_arm(CONFIG)
    target, seed = arm.fk(arm.home)[-1], tuple(arm.home)
    from_parent, to_child = os.pipe()
    from_child, to_parent = os.pipe()
    child = os.fork()
    if child == 0:
        while (byte := os.read(from_parent, 1)) not in (b'', b'q'):
            os.write(to_parent, byte)
        os._exit(0)
    print(machine())
    print(f'{"gap ms":>7} {"work CPU µs p50/p90":>20} {"sleep late µs p50/p90":>22} '
          f'{"pipe round trip µs p50/p90":>27}')
    try:
        for gap_ms in args.gaps_ms:
            gap = gap_ms / 1e3
            work, late, trip = [], [], []
            for _ in range(args.samples):
                started = time.monotonic()
                time.sleep(gap)
                late.append(time.monotonic() - started - gap)
                cpu = time.thread_time()
                for _ in range(3):
                    arm.ik(target, seed)
                work.append(time.thread_time() - cpu)
                time.sleep(gap)
                started = time.monotonic()
                os.write(to_child, b'p')
                os.read(from_child, 1)
                trip.append(time.monotonic() - started)
            print(f'{gap_ms:7.1f} {_pair(work):>20} {_pair(late):>22} {_pair(trip):>27}')
    finally:
        os.write(to_child, b'q')
        os.waitpid(child, 0)
    print(f'load average after: {os.getloadavg()[0]:.1f}')


def _pair(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    return (f'{1e6 * ordered[len(ordered) // 2]:.0f} / '
            f'{1e6 * ordered[int(0.9 * (len(ordered) - 1))]:.0f}')


if __name__ == '__main__':
    main()
