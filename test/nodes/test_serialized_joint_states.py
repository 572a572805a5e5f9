"""SerializedJointStates: the bytes rclpy would have serialized, from a patched template."""

import math

from builtin_interfaces.msg import Time
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState

from fabrik_ros.nodes.joint_states import joint_state_msg
from fabrik_ros.nodes.serialized_joint_states import SerializedJointStates

NAMES = ('base_yaw', 'shoulder', 'elbow', 'wrist')


def _full(names, positions, stamp_ns) -> bytes:
    sec, nanosec = divmod(stamp_ns, 1_000_000_000)
    return bytes(serialize_message(joint_state_msg(names, positions,
                                                   Time(sec=sec, nanosec=nanosec))))


def test_the_middleware_template_is_patched_not_serialized_per_message():
    assert SerializedJointStates(NAMES).patched


@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1,
                              max_size=12), min_size=1, max_size=7, unique=True),
       data=st.data())
def test_each_message_is_byte_for_byte_the_full_serialization(names, data):
    frames = SerializedJointStates(names)
    finite = st.floats(allow_nan=False, allow_infinity=False)
    for _ in range(3):      # one after another: nothing of the previous message is left
        positions = data.draw(st.lists(finite, min_size=len(names), max_size=len(names)))
        stamp_ns = data.draw(st.integers(0, (2**31 - 1) * 1_000_000_000 + 999_999_999))
        assert frames.serialize(positions, stamp_ns) == _full(names, positions, stamp_ns)


def test_a_message_reads_back_with_its_own_stamp_and_positions_not_the_previous_ones():
    frames = SerializedJointStates(NAMES)
    frames.serialize([0.1, 0.2, 0.3, 0.4], 5_000_000_123)
    msg = deserialize_message(frames.serialize([-1.0, 1.5, -0.25, 3.0], 7_250_000_000),
                              JointState)
    assert list(msg.name) == list(NAMES)
    assert list(msg.position) == [-1.0, 1.5, -0.25, 3.0]
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (7, 250_000_000)
    assert msg.header.frame_id == '' and not msg.velocity and not msg.effort


def test_a_serialization_whose_markers_cannot_be_found_is_done_in_full_each_time():
    calls = []

    def opaque(msg):      # a middleware that scrambles what it writes
        calls.append(msg)
        return bytes(reversed(serialize_message(msg)))

    frames = SerializedJointStates(NAMES, serialize=opaque)
    assert not frames.patched
    data = frames.serialize([0.5, -0.5, 0.25, math.pi], 3_000_000_001)
    assert data == bytes(reversed(_full(NAMES, [0.5, -0.5, 0.25, math.pi], 3_000_000_001)))
    assert len(calls) == 2      # the template, then this message


@pytest.mark.parametrize('serialize', [serialize_message, lambda msg: b'opaque'],
                         ids=['patched', 'in full'])
def test_a_wrong_count_of_positions_is_refused_with_the_names(serialize):
    with pytest.raises(ValueError, match='must hold 4 values .one per name: base_yaw, '):
        SerializedJointStates(NAMES, serialize=serialize).serialize([0.1, 0.2, 0.3], 0)
