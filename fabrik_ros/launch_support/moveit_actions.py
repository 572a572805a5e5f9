"""The MoveIt launch's adapter: a checked :class:`~.moveit_plan.MoveItPlan` becomes actions.

Imported only by the ``launch/moveit.launch.py`` that ``moveit_config_from_arm`` writes (it
needs ROS 2's ``launch`` and ``launch_ros``). The arm's launch file is included in a scope of
its own that sees only the arguments meant for it, so its check of the names it is given
(:func:`~.arguments.check_given_names`) does not meet this launch's own.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Optional

from launch.actions import (
    DeclareLaunchArgument,
    GroupAction,
    IncludeLaunchDescription,
    OpaqueFunction,
)
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch_ros.actions import Node

from fabrik_ros.launch_support.actions import installed, share
from fabrik_ros.launch_support.moveit_plan import (
    ARGUMENTS,
    MOVE_GROUP_PACKAGE,
    MoveItPlan,
    plan_moveit,
    rviz_parameters,
)


def describe_moveit(folder: Path, *, share_dir: Optional[Path] = None,
                    is_installed: Optional[Callable[[str], bool]] = None) -> list:
    """Return the launch entities: the declared arguments, then one OpaqueFunction that plans.

    :param folder: the configuration folder moveit_config_from_arm wrote
    :param share_dir: this package's share folder (default: the installed one)
    :param is_installed: whether a ROS package is installed (default: the ament index says)
    """
    def start(context) -> list:
        given = {str(name): str(value)
                 for name, value in context.launch_configurations.items()}
        plan = plan_moveit(folder, given, share=share_dir or share(),
                           installed=is_installed or installed)
        return moveit_actions(plan)

    return [*(DeclareLaunchArgument(a.name, default_value=a.default, description=a.description,
                                    choices=list(a.choices)) for a in ARGUMENTS),
            OpaqueFunction(function=start)]


def moveit_actions(plan: MoveItPlan) -> list:
    """Return the arm's launch (scoped), move_group and, if asked, RViz."""
    include = IncludeLaunchDescription(PythonLaunchDescriptionSource(str(plan.launch_file)),
                                       launch_arguments=list(plan.launch_arguments.items()))
    actions = [GroupAction([include], scoped=True, forwarding=False),
               Node(package=MOVE_GROUP_PACKAGE, executable='move_group', output='screen',
                    parameters=[plan.move_group])]
    if plan.rviz:
        actions.append(Node(package='rviz2', executable='rviz2', output='log',
                            arguments=['-d', str(plan.rviz_config)],
                            parameters=[rviz_parameters(plan.move_group)]))
    return actions
