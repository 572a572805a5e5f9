"""What the nodes report about themselves: running solve figures and per-cause log throttling.

Pure Python, so the figures and the throttling are tested without ROS.
"""
