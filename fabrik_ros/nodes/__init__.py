"""Thin rclpy nodes over the pure cores: fabrik_ik, servo_driver and sim_arm."""
