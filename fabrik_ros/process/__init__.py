"""Process plumbing shared by the console scripts (no rclpy): stop signals."""
