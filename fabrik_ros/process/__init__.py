"""Process plumbing shared by the console scripts (no rclpy): stop signals, CPU wake-up latency."""
