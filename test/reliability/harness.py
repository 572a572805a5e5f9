"""Run real rclpy nodes in-process in a Context and a namespace of their own; wait on conditions.

The namespace keeps other runs that share the DDS domain on this machine (parallel test
sessions, a demo) from publishing into a test; only /diagnostics is global.
"""

from collections.abc import Callable
import itertools
import os
import time
from typing import Optional, TypeVar, Union

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

N = TypeVar('N', bound=Node)

_SPIN_STEP_S = 0.02
_COUNT = itertools.count()


class RosHarness:
    """One rclpy Context, one executor, one namespace and the nodes a test adds to it."""

    def __init__(self) -> None:
        self.namespace = f'/reliability_{os.getpid()}_{next(_COUNT)}'
        self.ros_args = ['-r', f'__ns:={self.namespace}']
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.nodes: list[Node] = []

    def add(self, node: N) -> N:
        """Spin ``node`` with the others and destroy it at teardown."""
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def probe(self, name: str = 'probe') -> Node:
        """Return a plain node in the namespace for the test's own topics."""
        return self.add(rclpy.create_node(name, namespace=self.namespace, context=self.context))

    def spin_until(self, condition: Callable[[], bool], *, timeout_s: float,
                   what: Union[str, Callable[[], str]],
                   during: Optional[Callable[[], None]] = None) -> None:
        """Spin until ``condition()`` holds; fail naming ``what`` (or its result) after a timeout.

        ``during`` runs before every spin step (for example to sample the board).
        """
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                text = what() if callable(what) else what
                raise AssertionError(f'timed out after {timeout_s} s waiting for {text}')
            if during is not None:
                during()
            self.executor.spin_once(timeout_sec=_SPIN_STEP_S)

    def destroy(self, node: Node) -> None:
        """Call the node's shutdown() if it has one, as main() does, and destroy it."""
        self.nodes.remove(node)
        if hasattr(node, 'shutdown'):
            node.shutdown()
        self.executor.remove_node(node)
        node.destroy_node()

    def close(self) -> None:
        """Destroy every node that is left, then the executor and the context."""
        for node in reversed(list(self.nodes)):
            self.destroy(node)
        self.executor.shutdown()
        rclpy.shutdown(context=self.context)
