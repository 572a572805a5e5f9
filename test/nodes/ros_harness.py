"""Run real rclpy nodes in-process, each test in its own Context, and wait on conditions."""

from collections.abc import Callable
import itertools
import os
import time
from typing import Optional, TypeVar, Union

import rclpy
from rclpy.node import Node

from fabrik_ros.nodes.executor import ExecutorKind, make_executor

N = TypeVar('N', bound=Node)

_SPIN_STEP_S = 0.02
_DRAIN_S = 0.05


class RosHarness:
    """One rclpy Context, one executor and the nodes a test adds to it.

    The nodes live in a namespace of their own (pass :attr:`ros_args` to each), so that other
    runs that share the DDS domain on this machine cannot publish into the test; only
    /diagnostics is global, and its statuses carry the namespace in their names.
    """

    _count = itertools.count()

    def __init__(self, kind: Optional[ExecutorKind] = None) -> None:
        """:param kind: the executor; by default the one the executables pick"""
        self.namespace = f'/test_{os.getpid()}_{next(self._count)}'
        self.ros_args = ['-r', f'__ns:={self.namespace}']
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.executor = make_executor(self.context, kind)
        self.nodes: list[Node] = []

    def add(self, node: N) -> N:
        """Spin ``node`` with the others and destroy it at teardown."""
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def probe(self, name: str = 'probe') -> Node:
        """Return a plain node for the test's own publishers and subscriptions."""
        return self.add(rclpy.create_node(name, namespace=self.namespace, context=self.context))

    def spin_until(self, condition: Callable[[], bool], *, timeout_s: float,
                   what: Union[str, Callable[[], str]],
                   during: Optional[Callable[[], None]] = None) -> None:
        """Spin until ``condition()`` holds; fail naming ``what`` (or its result) after a timeout.

        ``during`` runs before every spin step (for example to re-publish until heard).
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
        """Take the node off the executor, call its shutdown() as main() does, destroy it.

        rclpy's EventsExecutor still runs the callbacks it queued for a node before its
        removal: they run here, while the node is whole, not on a destroyed node later.
        """
        self.nodes.remove(node)
        self.executor.remove_node(node)
        end = time.monotonic() + _DRAIN_S
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=_SPIN_STEP_S)
        if hasattr(node, 'shutdown'):
            node.shutdown()
        node.destroy_node()

    def ours(self, status) -> bool:
        """Return True for a DiagnosticStatus published by one of this test's nodes."""
        return status.name.startswith(self.namespace.lstrip('/') + '/')

    def close(self) -> None:
        """Destroy every node that is left, then the executor and the context."""
        for node in reversed(list(self.nodes)):
            self.destroy(node)
        self.executor.shutdown()
        rclpy.shutdown(context=self.context)
