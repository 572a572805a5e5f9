"""SerializedJointStates: a publisher's bytes from a patched template, and read back."""

import math

from builtin_interfaces.msg import Time
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState

from fabrik_ros.nodes.joint_states import joint_state_msg
from fabrik_ros.nodes.serialized_joint_states import SerializedJointStates
from fabrik_ros.nodes.wire_bytes import canonical

NAMES = ('base_yaw', 'shoulder', 'elbow', 'wrist')


def _wire(msg: JointState) -> bytes:
    """Return ``msg`` serialized as a publisher puts it on the wire (see the wire test)."""
    return canonical(bytes(serialize_message(msg)), msg)


def _message(names, positions, stamp_ns) -> JointState:
    sec, nanosec = divmod(stamp_ns, 1_000_000_000)
    return joint_state_msg(names, positions, Time(sec=sec, nanosec=nanosec))


def test_the_middleware_template_is_patched_not_serialized_per_message():
    assert SerializedJointStates(NAMES).patched


@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1,
                              max_size=12), min_size=1, max_size=7, unique=True),
       data=st.data())
def test_each_message_deserializes_to_its_own_stamp_and_positions(names, data):
    frames = SerializedJointStates(names)
    assert frames.patched
    finite = st.floats(allow_nan=False, allow_infinity=False)
    for _ in range(3):      # one after another: nothing of the previous message is left
        positions = data.draw(st.lists(finite, min_size=len(names), max_size=len(names)))
        stamp_ns = data.draw(st.integers(0, (2**31 - 1) * 1_000_000_000 + 999_999_999))
        serialized = frames.serialize(positions, stamp_ns)
        assert deserialize_message(serialized, JointState) == _message(names, positions,
                                                                       stamp_ns)
        assert frames.positions_of(serialized) == tuple(positions)


@pytest.mark.ros
def test_the_bytes_are_those_a_publisher_puts_on_the_wire_for_the_same_message(ros):
    """Padding zeroed, nothing after the end: a typed message from anyone reads directly."""
    positions, stamp_ns = [0.3, 1.2, -0.8, 0.4], 1_795_000_000_123_456_789
    wire = ros.wire_bytes(_message(NAMES, positions, stamp_ns))
    assert wire == SerializedJointStates(NAMES).serialize(positions, stamp_ns)


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
    assert calls[-1] == _message(NAMES, [0.5, -0.5, 0.25, math.pi], 3_000_000_001)
    assert data == bytes(reversed(serialize_message(calls[-1])))
    assert len(calls) == 2      # the template, then this message
    assert frames.positions_of(data) is None


@pytest.mark.parametrize('serialize', [serialize_message, lambda msg: b'opaque'],
                         ids=['patched', 'in full'])
def test_a_wrong_count_of_positions_is_refused_with_the_names(serialize):
    with pytest.raises(ValueError, match='must hold 4 values .one per name: base_yaw, '):
        SerializedJointStates(NAMES, serialize=serialize).serialize([0.1, 0.2, 0.3], 0)


def test_positions_are_read_back_from_the_bytes_of_any_message_of_the_template_layout():
    frames = SerializedJointStates(NAMES)
    read = frames.positions_of(frames.serialize([0.5, float('nan'), -math.inf, 2.0], 9))
    assert read is not None and read[0] == 0.5 and math.isnan(read[1])
    assert read[2:] == (-math.inf, 2.0)
    typed = JointState(name=list(NAMES), position=[0.1, 0.2, -3.0, 1e300])
    typed.header.stamp = Time(sec=12, nanosec=34)
    assert frames.positions_of(_wire(typed)) == (0.1, 0.2, -3.0, 1e300)


@pytest.mark.parametrize('other', [
    JointState(name=list(reversed(NAMES)), position=[0.1, 0.2, 0.3, 0.4]),
    JointState(name=['base_yaw', 'shoulder', 'elbow', 'wrisT'], position=[0.1, 0.2, 0.3, 0.4]),
    JointState(name=list(NAMES[:3]), position=[0.1, 0.2, 0.3]),
    JointState(name=list(NAMES), position=[0.1, 0.2, 0.3, 0.4], velocity=[0.0] * 4),
    JointState(name=list(NAMES), position=[0.1, 0.2, 0.3, 0.4], effort=[1.0] * 4),
    JointState(name=list(NAMES), position=[0.1, 0.2, 0.3]),
], ids=['order', 'a name', 'fewer', 'velocity', 'effort', 'lengths'])
def test_any_other_message_is_left_to_full_deserialization(other):
    frames = SerializedJointStates(NAMES)
    assert frames.positions_of(_wire(other)) is None
    assert frames.positions_of(frames.serialize([0.1, 0.2, 0.3, 0.4], 0)) is not None


def test_a_frame_id_or_bytes_cut_short_or_added_are_not_read():
    frames = SerializedJointStates(NAMES)
    framed = JointState(name=list(NAMES), position=[0.1, 0.2, 0.3, 0.4])
    framed.header.frame_id = 'x'
    data = frames.serialize([0.1, 0.2, 0.3, 0.4], 0)
    says_one_velocity = data[:-8] + (1).to_bytes(4, 'little') + bytes(4)   # and has none
    for bad in (_wire(framed), data[:-1], data + b'\x00', b'', says_one_velocity):
        assert frames.positions_of(bad) is None


def test_padding_left_as_the_buffer_held_it_and_bytes_after_the_end_are_made_canonical():
    """Both are what serialize_message leaves; the template must carry neither."""
    msg = JointState(name=list(NAMES), position=[0.1, 0.2, 0.3, 0.4])
    expected = SerializedJointStates(NAMES).serialize([0.1, 0.2, 0.3, 0.4], 0)
    dirty = (expected.replace(b'base_yaw\x00\x00\x00\x00', b'base_yaw\x00\xab\xcd\xef')
             .replace(b'elbow\x00\x00\x00', b'elbow\x00\x12\x34') + b'\x13\x04' + bytes(6))
    assert dirty != expected and deserialize_message(dirty, JointState) == msg
    assert canonical(dirty, msg) == expected
