"""Python behind the launch files, so that they stay thin and their logic is tested."""
