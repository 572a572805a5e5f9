"""A network namespace of the test's own, joined to this host by a veth pair, nothing more.

The host end gets a link-local address (169.254.N.1/30, never routed), the namespace end
169.254.N.2: a page served on the host end is on a real, non-loopback address, and a client
started in the namespace reaches it as another machine would, over TCP, while no packet
leaves this host (no bridge, no forwarding, no multicast from the test).
"""

from collections.abc import Iterator
import contextlib
from dataclasses import dataclass
import os
import subprocess

import pytest


@dataclass(frozen=True)
class Namespace:
    """The namespace's name and the two addresses of its veth pair."""

    name: str
    host_address: str        # this host's end: serve here
    inner_address: str       # the namespace's end: the client's own address

    def run(self, *command: str, timeout_s: float = 30.0) -> subprocess.CompletedProcess:
        """Run ``command`` inside the namespace; return its result (text)."""
        return subprocess.run(['ip', 'netns', 'exec', self.name, *command],
                              capture_output=True, text=True, timeout=timeout_s, check=False)


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(['ip', *args], capture_output=True, text=True, check=False)


@contextlib.contextmanager
def namespace() -> Iterator[Namespace]:
    """Yield a fresh namespace and veth pair; remove both after. Skip if this cannot be done.

    Creating one needs CAP_NET_ADMIN (root in a container); without it the test is skipped
    with the reason (the token gate's own tests on loopback still run).
    """
    tag = os.getpid() % 100_000
    name, host_end, inner_end = f'fabrik_web_{tag}', f'fw{tag}h', f'fw{tag}n'
    subnet = f'169.254.{1 + tag % 100}'
    made = _ip('netns', 'add', name)
    if made.returncode != 0:
        pytest.skip(f'cannot create a network namespace (needs CAP_NET_ADMIN): '
                    f'{made.stderr.strip()}')
    try:
        for args in (('link', 'add', host_end, 'type', 'veth', 'peer', 'name', inner_end),
                     ('link', 'set', inner_end, 'netns', name),
                     ('addr', 'add', f'{subnet}.1/30', 'dev', host_end),
                     ('link', 'set', host_end, 'up'),
                     ('-n', name, 'addr', 'add', f'{subnet}.2/30', 'dev', inner_end),
                     ('-n', name, 'link', 'set', inner_end, 'up'),
                     ('-n', name, 'link', 'set', 'lo', 'up')):
            step = _ip(*args)
            assert step.returncode == 0, f'ip {" ".join(args)}: {step.stderr}'
        yield Namespace(name, f'{subnet}.1', f'{subnet}.2')
    finally:
        _ip('link', 'del', host_end)         # removes both ends
        _ip('netns', 'del', name)
