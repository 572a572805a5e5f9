"""Leader-follower teleoperation, pure: a limp leader arm's counts -> the follower's commands.

No rclpy here: :mod:`.leader_map` maps the leader's readings through both arms' calibrations
and a per-joint mapping into follower joint positions; :mod:`.leader_watch` decides when a
reading is published and what is said when the leader falls silent or comes back. The node
(fabrik_ros.nodes.leader_node) wires them to a LimpBus and to ``joint_commands``.
"""
