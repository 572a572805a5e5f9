"""What joy_node and teleop_twist_joy's teleop_node take, recorded from their C++ sources.

Neither package is on PyPI (C++, built on a ROS install), so the names are written down here
from their sources, read, not imported; test_teleop_joy.py holds config/teleop/joy.yaml and
the launch plan to them.

teleop_twist_joy: ros2/teleop_twist_joy, src/teleop_twist_joy.cpp after 76cd6508a8c4
("Add an option to publish TwistStamped", #42, rolling; the declare_parameter calls of
TeleopTwistJoy's constructor, node name ``teleop_twist_joy_node``; CMakeLists.txt installs the
executable as ``teleop_node``; it subscribes ``joy`` and publishes ``cmd_vel``). Per distro,
from its CHANGELOGs: ``require_enable_button`` since 2.4.1; ``publish_stamped_twist`` and
``frame`` since Humble 2.4.6, Iron 2.5.1 and Jazzy 2.6.1 (Kilted and Rolling have them:
2.6.x); ``inverted_reverse`` since 2.4.6 / 2.5.1 / 2.6.0. An older teleop_twist_joy publishes
plain Twist, which jog/twist (TwistStamped) does not take.

joy: ros-drivers/joystick_drivers, branch ros2 at 881f3a5474044b79324a2117fe52a5db2106e4e0
(joy 3.3.0), joy/src/joy.cpp: node ``joy_node`` (CMakeLists.txt: EXECUTABLE joy_node), publishes
``joy``; the same parameters since 3.0 (the SDL2 port, Humble's 3.1.0 included).
"""

TELEOP_TWIST_JOY_COMMIT = '76cd6508a8c4e35d9fe3a6a8968abbe7159ffc08'
TELEOP_EXECUTABLE, TELEOP_NODE = 'teleop_node', 'teleop_twist_joy_node'
# name -> type, as declared (the axis_* and scale_* maps through declare_parameters).
TELEOP_PARAMETERS = {
    'publish_stamped_twist': bool, 'frame': str, 'require_enable_button': bool,
    'enable_button': int, 'enable_turbo_button': int, 'inverted_reverse': bool,
    **{f'axis_linear.{a}': int for a in 'xyz'},
    **{f'axis_angular.{a}': int for a in ('yaw', 'pitch', 'roll')},
    **{f'scale_linear.{a}': float for a in 'xyz'},
    **{f'scale_linear_turbo.{a}': float for a in 'xyz'},
    **{f'scale_angular.{a}': float for a in ('yaw', 'pitch', 'roll')},
    **{f'scale_angular_turbo.{a}': float for a in ('yaw', 'pitch', 'roll')},
}
TELEOP_TOPICS = {'in': 'joy', 'out': 'cmd_vel'}

JOY_COMMIT = '881f3a5474044b79324a2117fe52a5db2106e4e0'
JOY_EXECUTABLE, JOY_NODE = 'joy_node', 'joy_node'
JOY_PARAMETERS = {'device_id': int, 'device_name': str, 'deadzone': float,
                  'autorepeat_rate': float, 'sticky_buttons': bool, 'coalesce_interval_ms': int}
# joy.cpp refuses these ranges at start (a runtime_error).
JOY_RANGES = {'deadzone': (0.0, 1.0), 'autorepeat_rate': (0.0, 1000.0)}
