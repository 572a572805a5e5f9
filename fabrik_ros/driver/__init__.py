"""The pure part of servo_driver: where servos sit on the board and how fast commands move.

No rclpy here: the node in :mod:`fabrik_ros.nodes.driver_node` wires these to topics,
services and the link.
"""
