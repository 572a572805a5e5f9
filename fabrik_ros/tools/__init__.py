"""Command-line tools that prepare files for the nodes (no ROS needed to run them)."""
