"""The opening every fabrik_ros node shares: a node that takes whatever the arm file gives."""

from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter

from fabrik_ros.nodes.ros_parameters import naming_empty_lists, refuse_undeclared


class ConfiguredNode(Node):
    """A node configured by the arm file and its own parameters (see ros_parameters).

    The arm file's keys depend on the arm, so every parameter given is declared as it comes
    (``automatically_declare_parameters_from_overrides``), with an empty list named by its
    key rather than failing in rclpy without one. A subclass then describes each with
    ``declare`` / ``declare_arm`` and ends with ``refuse_unknown_overrides``.

    :raises ParameterConfigError: naming a key given as an empty list
    """

    def __init__(self, node_name: str, **node_options: Any) -> None:
        with naming_empty_lists(node_options):
            super().__init__(node_name, automatically_declare_parameters_from_overrides=True,
                             **node_options)

    def set_parameters_atomically(self, parameter_list: list[Parameter]) -> SetParametersResult:
        """Set as rclpy does, but refuse an unknown name by name and the closest known one.

        The parameter service (``ros2 param set``, ``ros2 param load``) calls this method.

        :raises UndeclaredParameterError: (a ParameterNotDeclaredException) for a parameter
            the node does not have
        """
        refuse_undeclared(self, parameter_list)
        return super().set_parameters_atomically(parameter_list)

    def _parameter(self, name: str) -> Any:
        """Return the value of the declared parameter ``name``."""
        return self.get_parameter(name).value
