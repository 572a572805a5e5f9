"""The launch files' adapter: a checked :class:`~.arguments.Plan` becomes launch actions.

Imported only by launch/*.launch.py (it needs ROS 2's ``launch`` and ``launch_ros``); the
decisions live in :mod:`.arguments`, which is tested without them. Everything is started from
one OpaqueFunction, after every argument was checked, so a refused argument starts nothing.
"""

from collections.abc import Callable
import os
from pathlib import Path
import sys

from ament_index_python.packages import (
    get_package_prefix,
    get_package_share_directory,
    PackageNotFoundError,
)
from launch.actions import (
    DeclareLaunchArgument,
    ExecuteProcess,
    LogInfo,
    OpaqueFunction,
    Shutdown,
)
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from fabrik_ros.launch_support.arguments import (
    check_given_names,
    LAUNCH_FILES,
    launched_directly,
    PACKAGE,
    Plan,
    Process,
)

Planner = Callable[..., Plan]


def share() -> Path:
    """Return the installed share/fabrik_ros folder."""
    return Path(get_package_share_directory(PACKAGE))


def installed(package: str) -> bool:
    """Return whether the ament index knows the ROS package named ``package``."""
    try:
        get_package_share_directory(package)
    except PackageNotFoundError:
        return False
    return True


def describe(launch_file: str, planner: Planner) -> list:
    """Return the launch entities: the declared arguments, then one OpaqueFunction that plans.

    :param launch_file: its name, a key of :data:`.arguments.LAUNCH_FILES`.
    :param planner: plan_arm or plan_sim; it raises LaunchArgumentError before any process
        action exists, so launch stops with that message and nothing started.
    """
    arguments = LAUNCH_FILES[launch_file](share())
    names = [argument.name for argument in arguments]

    top_level = launched_directly(sys.argv, launch_file, share() / 'launch' / launch_file)

    def start(context) -> list:
        check_given_names(context.launch_configurations, launch_file, share(),
                          top_level=top_level)
        values = {name: LaunchConfiguration(name).perform(context) for name in names}
        return actions(planner(values, share=share(), installed=installed))

    return [*(DeclareLaunchArgument(a.name, default_value=a.default, description=a.description,
                                    **({'choices': list(a.choices)} if a.choices else {}))
              for a in arguments),
            OpaqueFunction(function=start)]


def actions(plan: Plan) -> list:
    """Return a LogInfo per note, then the process actions of ``plan``."""
    return [*(LogInfo(msg=note) for note in plan.notes),
            *(_action(process, plan.namespace) for process in plan.processes)]


def _end_launch(reason: str) -> Callable:
    """Return the on_exit of a required process: end the launch, unless it is ending already.

    At Ctrl-C every process exits, the required one too; a Shutdown then would log
    "process[...] was required: shutting down launched system" as if it had caused the stop.
    """
    def on_exit(event, context):
        return None if context.is_shutdown else [Shutdown(reason=reason)]
    return on_exit


def _action(process: Process, namespace: str):
    on_exit = _end_launch(f'{process.executable} ended') if process.required else None
    if not process.node:
        executable = os.path.join(get_package_prefix(process.package), 'lib', process.package,
                                  process.executable)
        return ExecuteProcess(cmd=[executable, *process.arguments], name=process.executable,
                              output='screen', on_exit=on_exit)
    return Node(package=process.package, executable=process.executable, output='screen',
                namespace=namespace or None, parameters=list(process.parameters),
                arguments=list(process.arguments), remappings=list(process.remappings),
                on_exit=on_exit)

