"""leader_arm: a limp leader arm, moved by hand, drives the follower's joint_commands."""

import time
from typing import Optional

from sensor_msgs.msg import JointState

from fabrik_ros.driver.bus_output import bus_options
from fabrik_ros.kinematics import Arm, load_arm
from fabrik_ros.leader.leader_map import follower_names, LeaderMap
from fabrik_ros.leader.leader_watch import LeaderWatch
from fabrik_ros.nodes.configured_node import ConfiguredNode
from fabrik_ros.nodes.ros_parameters import declare, declare_arm, refuse_unknown_overrides
from fabrik_ros.nodes.spin import spin_until_shutdown
from fabrik_ros.nodes.timers import create_timer
from fabrik_ros.servo_io import Protocol
from fabrik_ros.servo_io.bus_line import BUS_BAUD, DEFAULT_FEEDBACK_HZ
from fabrik_ros.servo_io.limp_bus import LimpBus

__all__ = ['LeaderArmNode', 'main']

_PROTOCOLS = [Protocol.FEETECH.value, Protocol.DYNAMIXEL.value]


class LeaderArmNode(ConfiguredNode):
    """Read a leader arm's servos (torque off) and publish them as the follower's commands.

    The node is given the follower's arm file (its joints, limits and gripper range, as every
    node is) and ``leader_config``, the leader's own arm file (its calibration). The leader's
    bus is a :class:`~fabrik_ros.servo_io.limp_bus.LimpBus`: read at ``feedback_rate_hz``,
    never driven. Each new reading goes through :class:`~fabrik_ros.leader.leader_map.LeaderMap`
    (the leader's calibration, ``leader_joints`` / ``offsets_rad`` / ``directions``, the
    follower's limits) onto ``joint_commands``, which servo_driver takes with its speed limits,
    clamping and safe start; the gripper rides in the same message, as its auxiliary servo.
    A silent or unplugged leader bus stops the stream (the follower holds; one warning), and
    readings that come back are followed again (one line); servo_driver slews to them at its
    speed limits, so the follower never jumps.
    """

    def __init__(self, **node_options) -> None:
        super().__init__('leader_arm', **node_options)
        self._arm = declare_arm(self)
        names = follower_names(self._arm)
        n = len(names)
        port = declare(self, 'port', '/dev/ttyUSB1', "Serial port of the leader arm's bus "
                       '(prefer /dev/serial/by-id/...); reopened by this name after an unplug')
        protocol = declare(self, 'protocol', 'feetech', "The leader's bus servos: feetech "
                           '(STS3215, an SO-101 leader) or dynamixel (Protocol 2.0)',
                           choices=_PROTOCOLS)
        baud = declare(self, 'baud', 0, f"The leader bus's speed [bit/s]; 0 = {BUS_BAUD}",
                       ints=(0, 4_000_000))
        leader_config = declare(self, 'leader_config', '', "The leader's arm file (its servo "
                                "calibration: ids, zero_count, direction); '' = this node's "
                                "own arm file, the follower's")
        leader_joints = declare(self, 'leader_joints', list(names), 'The leader servo driving '
                                f'each follower servo ({", ".join(names)}, in that order); '
                                "'' leaves one undriven; default: the same names")
        offsets = declare(self, 'offsets_rad', [0.0] * n, 'Added to each mapped position, '
                          'one per follower servo in leader_joints order [rad]')
        directions = declare(self, 'directions', [1] * n, '1, or -1 where the arms count a '
                             'joint the opposite ways, one per follower servo')
        feedback_hz = declare(self, 'feedback_rate_hz', DEFAULT_FEEDBACK_HZ, "How often the "
                              "leader's positions are read [Hz] (one sync read each)",
                              floats=(1.0, 200.0))
        silence_s = declare(self, 'silence_s', 0.5, 'Without a new leader reading this long '
                            'the leader is said silent (the follower holds meanwhile) [s]',
                            floats=(0.05, 10.0))
        refuse_unknown_overrides(self)
        leader = self._leader_arm(leader_config)
        self._map = LeaderMap.build(leader, self._arm, leader_names=leader_joints,
                                    offsets_rad=offsets, directions=directions)
        self._expected_offsets = _homing_offsets(leader, self._map.leader_ids)
        self._watch = LeaderWatch(silence_s)
        self._publisher = self.create_publisher(JointState, 'joint_commands', 10)
        self._bus: Optional[LimpBus] = LimpBus(
            port, protocol=Protocol(protocol), ids=self._map.leader_ids,
            options=bus_options(baud, feedback_hz))
        ids = ' '.join(str(i) for i in self._map.leader_ids)
        self.get_logger().info(
            f'leader arm: {protocol} bus on {port}, ids {ids}, read at {feedback_hz:g} Hz; '
            'torque stays off (never a goal, torque-on or torque-limit write; a servo found '
            "torqued is turned off); driving the follower's joint_commands: "
            + ', '.join(route.follower for route in self._map.routes))
        self._offsets_checked: set[int] = set()
        self._bus.start()
        create_timer(self, 0.5 / feedback_hz, self._on_look)

    def _leader_arm(self, path: str) -> Arm:
        if not path:
            return self._arm
        try:
            return load_arm(path)
        except (OSError, ValueError) as error:
            raise ValueError(f'leader_config = {path!r}: {error}') from None

    def _on_look(self) -> None:
        bus = self._bus
        if bus is None:
            return
        for notice in bus.take_notices():
            self.get_logger().warning(f'leader servo id {notice.servo_id}: {notice.text}')
        self._check_offsets(bus)
        reading = bus.positions()
        verdict = self._watch.take(None if reading is None else reading.stamp_s,
                                   now_s=time.monotonic())
        if verdict.warning:
            error = f', {bus.last_error}' if bus.last_error is not None else ''
            self.get_logger().warning(f'{verdict.warning} (leader bus {bus.path}: '
                                      f'{bus.state.value}{error})')
        if verdict.info:
            self.get_logger().info(verdict.info)
        if not verdict.publish or reading is None:
            return
        names, positions = self._map.command(reading.counts)
        if not names:
            return
        message = JointState(name=list(names), position=list(positions))
        message.header.stamp = self.get_clock().now().to_msg()
        self._publisher.publish(message)

    def _check_offsets(self, bus: LimpBus) -> None:
        """Say once per servo where its homing offset is not the one its calibration assumes."""
        held = bus.homing_offsets()
        for servo_id, wanted in self._expected_offsets.items():
            if servo_id in self._offsets_checked or servo_id not in held:
                continue
            self._offsets_checked.add(servo_id)
            if held[servo_id] != wanted:
                self.get_logger().warning(
                    f'leader servo id {servo_id} holds homing offset {held[servo_id]}, its arm '
                    f'file was calibrated with {wanted}: its positions are off by the '
                    'difference (the leader is never written to; calibrate it again or fix '
                    'the arm file)')

    def destroy_node(self) -> None:
        """Close the leader's bus (its servos stay limp), then destroy the node."""
        bus, self._bus = getattr(self, '_bus', None), None
        if bus is not None:
            bus.close()
        super().destroy_node()


def _homing_offsets(leader: Arm, ids: tuple[int, ...]) -> dict[int, int]:
    """Return the homing offsets the leader's arm file names for the servos read, by id."""
    joints, aux = leader.servo_map.count_servos()
    offsets = {c.channel: c.homing_offset for c in joints if c.homing_offset is not None}
    offsets.update({a.channel: a.homing_offset for a in aux if a.homing_offset is not None})
    return {servo_id: offset for servo_id, offset in offsets.items() if servo_id in ids}


def main(args=None) -> None:
    """Run leader_arm until Ctrl-C or shutdown."""
    spin_until_shutdown(LeaderArmNode, args)
