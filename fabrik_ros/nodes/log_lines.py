"""Print the lines the pure core hands back (LogLine) on a node's logger."""

from rclpy.impl.rcutils_logger import RcutilsLogger

from fabrik_ros.driver.arm_state_machine import LogLevel, LogLine


def log_line(logger: RcutilsLogger, line: LogLine) -> None:
    """Log ``line`` at its level."""
    # rclpy ties a severity to each call site: one call per level.
    if line.level is LogLevel.WARN:
        logger.warning(line.text)
    elif line.level is LogLevel.ERROR:
        logger.error(line.text)
    else:
        logger.info(line.text)
