"""Count the reference cycles a block of code leaves behind: what only the collector frees.

A node allocates per target; an object in a reference cycle outlives its last use until the
collector runs, and a collection started in the middle of a command delays it (each one took
0.1-0.2 ms in servo_driver, every second or so under a 20 Hz stream). The paths a command takes
must leave no cycles.
"""

from collections.abc import Iterator
import contextlib
import gc


@contextlib.contextmanager
def cyclic_garbage() -> Iterator[list[int]]:
    """Hold the collector off while the block runs, then yield how many objects it found.

    ``with cyclic_garbage() as found: ...`` then ``found[0]`` is that count.
    """
    found = [0]
    gc.collect()
    gc.disable()
    try:
        yield found
        found[0] = gc.collect()
    finally:
        gc.enable()
