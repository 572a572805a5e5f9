"""Run the host-compiled firmware core's fuzzer (hardware/build/host/fsb_fuzz) for a budget."""

from dataclasses import dataclass, field
import os
import re
import subprocess
import time

from fabrik_ros.boardsim.simavr_board import BUILD_DIR

FUZZ = BUILD_DIR / 'host' / 'fsb_fuzz'
ROUNDS_PER_SEED = 5000
_STATES = ('enabled', 'moving', 'limits', 'watchdog')


@dataclass
class FuzzRun:
    """What a budgeted fuzz run covered, and the first failure (with how to replay it)."""

    seeds: int = 0
    rounds: int = 0
    seconds: float = 0.0
    reached: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_STATES, 0))
    failure: str = ''


def fuzz_for(budget_s: float, first_seed: int) -> FuzzRun:
    """Fuzz seed after seed from ``first_seed`` until ``budget_s`` is spent or a seed fails.

    Each seed runs ROUNDS_PER_SEED rounds under ASan/UBSan; the seeds are fixed, so a run is
    the same on every machine up to where the budget stops it.
    """
    run = FuzzRun()
    env = {**os.environ, 'ASAN_OPTIONS': 'detect_leaks=0'}
    started = time.monotonic()
    seed = first_seed
    while time.monotonic() - started < budget_s:
        result = subprocess.run([str(FUZZ), '--seed', str(seed), '--rounds',
                                 str(ROUNDS_PER_SEED)], capture_output=True, text=True,
                                check=False, timeout=max(60.0, budget_s), env=env)
        run.seeds += 1
        if result.returncode != 0:
            run.failure = (f'seed {seed} failed (replay: make -C hardware check FUZZ_SEED={seed}'
                           f' FUZZ_ROUNDS={ROUNDS_PER_SEED}):\n{result.stdout}{result.stderr}')
            break
        run.rounds += ROUNDS_PER_SEED
        for state, count in re.findall(r'(\w+)=(\d+)', result.stdout):
            if state in run.reached:
                run.reached[state] += int(count)
        seed += 1
    run.seconds = time.monotonic() - started
    return run
