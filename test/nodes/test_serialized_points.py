"""SerializedPoints: the point of a PointStamped in a known frame, read from its bytes."""

import math

from geometry_msgs.msg import PointStamped
import pytest
from rclpy.serialization import serialize_message

from fabrik_ros.nodes.serialized_points import SerializedPoints
from fabrik_ros.nodes.wire_bytes import canonical

FRAMES = ('', 'base_link')


def _msg(xyz, frame_id='base_link', stamp=(0, 0)) -> PointStamped:
    msg = PointStamped()
    msg.header.frame_id = frame_id
    msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
    msg.point.x, msg.point.y, msg.point.z = xyz
    return msg


def _wire(msg: PointStamped) -> bytes:
    return canonical(bytes(serialize_message(msg)), msg)


@pytest.mark.parametrize('frame_id', FRAMES)
def test_a_point_in_a_known_frame_is_read_whatever_its_stamp(frame_id):
    points = SerializedPoints(FRAMES)
    assert points.frames_read == 2
    assert points.point_of(_wire(_msg((0.1, -0.2, 0.3), frame_id, (1_795_000_000, 123)))) == (
        0.1, -0.2, 0.3)


def test_non_finite_coordinates_are_read_as_they_are_for_the_caller_to_refuse():
    x, y, z = SerializedPoints(FRAMES).point_of(_wire(_msg((math.inf, 0.0, 0.0))))
    assert (x, y, z) == (math.inf, 0.0, 0.0)


@pytest.mark.parametrize('frame_id', ['map', 'base_lin', 'base_link_2', 'world'])
def test_a_point_in_any_other_frame_is_left_to_full_deserialization(frame_id):
    assert SerializedPoints(FRAMES).point_of(_wire(_msg((0.1, 0.2, 0.3), frame_id))) is None


def test_bytes_cut_short_or_added_are_not_read():
    data = _wire(_msg((0.1, 0.2, 0.3)))
    points = SerializedPoints(FRAMES)
    for bad in (data[:-1], data + b'\x00', b'', data[:4]):
        assert points.point_of(bad) is None


@pytest.mark.ros
def test_a_published_point_arrives_as_bytes_that_are_read(ros):
    wire = ros.wire_bytes(_msg((0.15, 0.05, 0.12), stamp=(1_795_000_000, 987_654_321)))
    assert SerializedPoints(FRAMES).point_of(wire) == (0.15, 0.05, 0.12)


def test_a_serialization_whose_markers_cannot_be_found_reads_nothing():
    points = SerializedPoints(FRAMES, serialize=lambda msg: bytes(reversed(
        serialize_message(msg))))
    assert points.frames_read == 0
    assert points.point_of(_wire(_msg((0.1, 0.2, 0.3)))) is None
