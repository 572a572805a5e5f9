"""The pure part of servo_driver: everything it decides, without ROS.

:mod:`.servo_driver` (:class:`~fabrik_ros.driver.servo_driver.ServoDriver`) takes each event
(a command, a tick, a service call, the link's changes, the exit) and decides through the
command intake, the state machine and the motion planner; it reaches the servos through the
:mod:`.servo_output` seam (:mod:`.pulse_output` for PWM boards, :mod:`.bus_output` for bus
servos). No rclpy here: the node in :mod:`fabrik_ros.nodes.driver_node` wires these to
topics, services and timers.
"""
