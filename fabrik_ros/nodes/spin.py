"""Run the nodes of one executable until Ctrl-C, SIGTERM or an external shutdown.

Every console script that runs nodes goes through :func:`run_nodes`, so they all behave alike:

- ``-h``/``--help`` prints the usage and exits 0; an argument that is neither that nor a ROS
  argument (after ``--ros-args``) is refused with the usage (status 2).
- A params file that is missing or that rcl cannot parse stops the process with one line
  naming the file and the problem (status 1), not with rcl's traceback; so does a bad arm
  config or a refused parameter value.
- The first SIGINT or SIGTERM asks to stop (see :mod:`fabrik_ros.process.stop`): the executor
  loop ends, each node with a ``shutdown()`` method leaves its hardware in its final state,
  the nodes are destroyed and the process exits 0. Signals that arrive meanwhile (launch
  forwards a second SIGINT to the group's) are ignored, so cleanup is never interrupted.
"""

from collections.abc import Callable, Sequence
import gc
import os
import re
import sys
import tempfile
from typing import Optional

import rclpy
from rclpy.context import Context
from rclpy.exceptions import ParameterException
from rclpy.executors import Executor, ExternalShutdownException
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
import rclpy.logging
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
import rclpy.utilities

from fabrik_ros.nodes.executor import executor_kind, ExecutorKind, make_executor
from fabrik_ros.process.stop import StopRequest

# A bad arm config (ArmConfigError is a ValueError) or a refused parameter value: the node
# cannot start, and a one-line reason serves the user better than a traceback.
_STARTUP_ERRORS = (ValueError, ParameterException)
# Longest the executor waits before it looks at the stop request again [s]. Python runs a
# signal handler only between bytecodes, never inside rcl's wait.
_STOP_POLL_S = 0.1
# rcl's words for a params file it cannot read, and the detail after them.
_PARAMS_ERROR = re.compile(r"Couldn't parse params file: '--params-file (?P<file>.*?)'\. "
                           r'Error: (?P<problem>.*?)(?:, at [^,]*)*$', re.DOTALL)
_MIXED_LIST_HINT = ('a list holds one type only: write every number of a float list with a '
                    'decimal point (-1.0, not -1)')


class StartupError(Exception):
    """The process cannot start; the message is the one line to print."""


def run_nodes(make_nodes: Callable[[list[Node]], None], args: Optional[Sequence[str]] = None,
              *, prog: str, description: str) -> None:
    """Initialise rclpy, build the nodes, spin them until asked to stop, and clean up.

    :param make_nodes: appends each node to the list it is given as soon as it exists, so
        that the ones built before a failing one are cleaned up too.
    :param args: the command line (``sys.argv`` when None), ROS arguments after --ros-args.
    :param prog: the executable's name, for the usage and the error lines.
    :param description: one line saying what the executable does, for ``--help``.
    :raises SystemExit: 0 after --help, 2 on an unknown argument, 1 if a node cannot start
        (the reason printed in one line).
    """
    argv = list(sys.argv if args is None else args)
    _check_command_line(argv, prog, description)
    stop = StopRequest()
    stop.install()
    try:
        _run(make_nodes, argv, prog, stop)
    finally:
        stop.release()


def _run(make_nodes: Callable[[list[Node]], None], argv: list[str], prog: str,
         stop: StopRequest) -> None:
    try:
        _check_params_files(argv)
        kind = _executor_kind()
        context = _init(argv)
    except StartupError as error:
        print(f'{prog}: cannot start: {error}', file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    nodes: list[Node] = []
    executor = make_executor(context, kind)
    try:
        make_nodes(nodes)
    except _STARTUP_ERRORS as error:
        rclpy.logging.get_logger(prog).fatal(f'cannot start: {error}')
        _clean_up(executor, nodes, context)
        raise SystemExit(1) from None
    # Everything built so far lives as long as the process; frozen, a full garbage collection
    # no longer walks it, which paused the executor for milliseconds under a target stream.
    gc.freeze()
    try:
        for node in nodes:
            executor.add_node(node)
        while not stop.requested and context.ok():
            executor.spin_once(timeout_sec=_STOP_POLL_S)
    except ExternalShutdownException:
        pass
    finally:
        _clean_up(executor, nodes, context)
        gc.unfreeze()


def _executor_kind() -> ExecutorKind:
    """Return the executor to spin the nodes with; a refused FABRIK_ROS_EXECUTOR stops here."""
    try:
        return executor_kind()
    except ValueError as error:
        raise StartupError(str(error)) from None


def spin_until_shutdown(make_node: Callable[[], Node],
                        args: Optional[Sequence[str]] = None) -> None:
    """Run the one node ``make_node`` builds, as :func:`run_nodes` says.

    The usage names the executable after ``args[0]`` and describes it with the first line of
    the node module's docstring.
    """
    argv = list(sys.argv if args is None else args)
    module = sys.modules.get(make_node.__module__)
    doc = (module.__doc__ if module is not None else None) or make_node.__doc__ or ''
    run_nodes(lambda nodes: nodes.append(make_node()), argv,
              prog=os.path.basename(argv[0]) if argv else make_node.__name__,
              description=doc.strip().splitlines()[0] if doc.strip() else '')


def usage(prog: str, description: str) -> str:
    """Return the ``--help`` text of a node executable."""
    return (f'usage: {prog} [-h] [--ros-args --params-file ARM_FILE [-p NAME:=VALUE ...] '
            f'[-r FROM:=TO ...]]\n\n'
            f'{description}\n\n'
            f'options:\n'
            f'  -h, --help  show this help and exit\n'
            f'  --ros-args  ROS arguments follow: --params-file names the arm file (e.g. '
            f'{_shipped_config()}),\n'
            f'              -p sets one parameter, -r remaps a topic or the node name\n\n'
            f'Stop with Ctrl-C or SIGTERM. Parameters and topics: docs/nodes.md (linked from the '
            f'README), or `ros2 param list` while it runs.')


def _check_command_line(argv: list[str], prog: str, description: str) -> None:
    """Print the usage for -h/--help (exit 0); refuse any other non-ROS argument (exit 2)."""
    extra = _non_ros_args(argv)[1:]
    if '-h' in extra or '--help' in extra:
        try:
            print(usage(prog, description), flush=True)
        except BrokenPipeError:         # `--help | head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(0)
    if extra:
        print(f'{usage(prog, description)}\n\n{prog}: error: unrecognised arguments: '
              f'{" ".join(extra)} (ROS arguments go after --ros-args)', file=sys.stderr,
              flush=True)
        raise SystemExit(2)


def _non_ros_args(argv: list[str]) -> list[str]:
    """Return the arguments outside every ``--ros-args ... [--]`` section.

    rclpy's remove_ros_args would also parse the params files, failing before the usage.
    """
    outside, in_ros = [], False
    for arg in argv:
        if arg == '--ros-args':
            in_ros = True
        elif in_ros and arg == '--':
            in_ros = False
        elif not in_ros:
            outside.append(arg)
    return outside


def _check_params_files(argv: list[str]) -> None:
    """Refuse a --params-file that does not exist before rcl tries (and logs) it."""
    for flag, value in zip(argv[:-1], argv[1:], strict=True):
        if flag == '--params-file' and not os.path.isfile(value):
            raise StartupError(f'params file {value}: no such file')


def _init(argv: list[str]) -> Context:
    """Initialise rclpy without its signal handlers; turn rcl's refusal into one line.

    rcl logs its own ``Failed to parse global arguments`` to stderr before it raises; that
    line is held back and printed only if initialisation succeeds (it then means something
    else), since the one-line reason says it all.
    """
    with tempfile.TemporaryFile() as held, _StderrTo(held):
        try:
            rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
            error = None
        except _rclpy.RCLError as caught:
            error = caught
        held.seek(0)
        text = held.read()
    if error is not None:
        raise StartupError(_rcl_error_line(str(error))) from None
    sys.stderr.buffer.write(text)
    sys.stderr.flush()
    return rclpy.get_default_context()


class _StderrTo:
    """Point file descriptor 2 at ``target`` for a while (rcl writes there from C)."""

    def __init__(self, target) -> None:
        self._target = target
        self._saved = -1

    def __enter__(self) -> None:
        sys.stderr.flush()
        self._saved = os.dup(2)
        os.dup2(self._target.fileno(), 2)

    def __exit__(self, *exc_info: object) -> None:
        os.dup2(self._saved, 2)
        os.close(self._saved)


def _rcl_error_line(message: str) -> str:
    """Return rcl's initialisation error as one line naming the file and the problem."""
    match = _PARAMS_ERROR.search(message)
    if match is None:
        return ' '.join(message.split())
    problem = ' '.join(match['problem'].split())
    if 'Sequence should be of same type' in problem:
        problem = f'{problem} ({_MIXED_LIST_HINT})'
    return f"params file {match['file']}: {problem}"


def _shipped_config() -> str:
    """Return the path of the shipped arm_4dof.yaml, installed or in this checkout."""
    try:
        from ament_index_python.packages import get_package_share_directory
        share = get_package_share_directory('fabrik_ros')
    except (ImportError, LookupError, ValueError, OSError):
        share = os.path.join(os.path.dirname(__file__), '..', '..')
    return os.path.normpath(os.path.join(share, 'config', 'arm_4dof.yaml'))


def _clean_up(executor: Executor, nodes: list[Node], context: Context) -> None:
    """Leave each node's hardware in its final state, destroy the nodes, shut rclpy down."""
    for node in reversed(nodes):
        shutdown = getattr(node, 'shutdown', None)
        if shutdown is not None:
            shutdown()
    for node in reversed(nodes):
        executor.remove_node(node)
        node.destroy_node()
    executor.shutdown()
    # Not rclpy.try_shutdown(): for the default context it also "uninstalls" rclpy's signal
    # handlers, which resets SIGINT to the default action, so a late signal would kill us.
    # rclpy.utilities.try_shutdown() shuts the default context down and replaces it.
    if context is rclpy.get_default_context():
        rclpy.utilities.try_shutdown()
    else:
        context.try_shutdown()
