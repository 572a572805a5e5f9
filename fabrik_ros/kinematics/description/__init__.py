"""The arm description: joints, links and servos, read from the arm file and written as URDF."""
