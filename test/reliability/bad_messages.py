"""Hypothesis strategies for bad messages and the rule for which of them a node accepts."""

import math

from geometry_msgs.msg import Point, PointStamped, Pose, PoseStamped, Quaternion
from hypothesis import strategies as st
from nav_msgs.msg import Path
from sensor_msgs.msg import JointState

BASE_FRAME = 'base_link'
SPECIAL = [math.nan, math.inf, -math.inf, 1e300, -1e300, 5e-324, -0.0, 0.0]
# Text without NUL (not representable in a ROS string) for frames and joint names.
_TEXT = st.text(st.characters(blacklist_categories=('Cs',), blacklist_characters='\x00'),
                max_size=12)

numbers = st.one_of(st.sampled_from(SPECIAL), st.floats(-0.4, 0.4),
                    st.floats(allow_nan=True, allow_infinity=True))
frames = st.one_of(st.sampled_from(['', BASE_FRAME, 'world', 'map', 'base_link ',
                                    'BASE_LINK', '/base_link']), _TEXT)


def finite(*values: float) -> bool:
    """Return True if every value is finite."""
    return all(math.isfinite(v) for v in values)


def in_base_frame(frame_id: str) -> bool:
    """Return True for the frames the IK node takes as its base frame."""
    return frame_id in ('', BASE_FRAME)


@st.composite
def points(draw) -> tuple[PointStamped, bool]:
    """Return a PointStamped and whether fabrik_ik should solve it."""
    x, y, z = draw(numbers), draw(numbers), draw(numbers)
    msg = PointStamped(point=Point(x=x, y=y, z=z))
    msg.header.frame_id = draw(frames)
    return msg, in_base_frame(msg.header.frame_id) and finite(x, y, z)


@st.composite
def poses(draw) -> tuple[PoseStamped, bool]:
    """Return a PoseStamped and whether fabrik_ik should solve it.

    fabrik_ik runs with use_pose_orientation off here, so the orientation is not read: only
    the frame and the position decide (test_every_option covers the orientation in use).
    """
    values = [draw(numbers) for _ in range(7)]
    msg = PoseStamped(pose=Pose(position=Point(x=values[0], y=values[1], z=values[2]),
                                orientation=Quaternion(x=values[3], y=values[4],
                                                       z=values[5], w=values[6])))
    msg.header.frame_id = draw(frames)
    return msg, in_base_frame(msg.header.frame_id) and finite(*values[:3])


@st.composite
def bad_paths(draw) -> Path:
    """Return a Path fabrik_ik must refuse: empty, a bad pose, or a wrong frame."""
    kind = draw(st.sampled_from(['empty', 'bad_pose', 'wrong_frame']))
    msg = Path()
    msg.header.frame_id = BASE_FRAME if kind != 'wrong_frame' else draw(
        frames.filter(lambda f: not in_base_frame(f)))
    if kind == 'empty':
        return msg
    count = draw(st.integers(1, 5))
    for _ in range(count):
        pose = PoseStamped()
        pose.pose.position = Point(x=0.15, y=0.0, z=0.1)
        pose.pose.orientation.w = 1.0
        msg.poses.append(pose)
    if kind == 'bad_pose':
        victim = msg.poses[draw(st.integers(0, count - 1))].pose.position
        victim.y = draw(st.sampled_from([math.nan, math.inf, -math.inf]))
    return msg


def joint_commands(names: tuple[str, ...]):
    """Return a strategy of JointState commands that mostly go wrong somehow."""
    name_lists = st.lists(st.one_of(st.sampled_from(names), st.sampled_from(
        ['gripper', 'ELBOW', '', 'elbow ']), _TEXT), max_size=len(names) + 2)

    @st.composite
    def build(draw) -> JointState:
        chosen = draw(name_lists)
        length = draw(st.one_of(st.just(len(chosen)), st.integers(0, len(names) + 2)))
        positions = [draw(numbers) for _ in range(length)]
        return JointState(name=chosen, position=positions)

    return build()


garbage = st.one_of(
    st.binary(min_size=1, max_size=80),
    # Frame-shaped garbage: the sync pair, then a length and anything (resync under stress).
    st.builds(lambda length, body: b'\xa5\x5a' + bytes([length]) + body,
              st.integers(0, 255), st.binary(max_size=40)),
    st.builds(lambda n: b'\xa5' * n, st.integers(1, 70)))
