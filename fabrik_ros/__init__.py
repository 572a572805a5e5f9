"""FABRIK inverse kinematics for hobby-servo robot arms, with ROS 2 nodes at the edges."""
