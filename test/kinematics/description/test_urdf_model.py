"""parse_urdf reads a URDF into links, joints and a root, and refuses what is not a URDF tree."""

import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from fabrik_ros.kinematics.description.urdf_in import arm_parameters
from fabrik_ros.kinematics.description.urdf_model import (
    MAX_URDF_CHARS,
    parse_urdf,
    UrdfError,
    UrdfJointType,
)

TWO_JOINTS = """<?xml version="1.0"?>
<robot name="two">
  <link name="base"/>
  <link name="upper"/>
  <link name="tip"/>
  <link name="tool"/>
  <joint name="pan" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0.1 0 0.05" rpy="0 0 3.14159"/>
    <axis xyz="0 0 2"/>
    <limit lower="-1.5" upper="2.0" effort="1" velocity="1"/>
  </joint>
  <joint name="spin" type="continuous">
    <parent link="upper"/><child link="tip"/>
  </joint>
  <joint name="tool_joint" type="fixed">
    <parent link="tip"/><child link="tool"/>
    <origin xyz="0 0 0.02"/>
  </joint>
</robot>
"""


def test_joints_come_in_document_order_with_origin_axis_and_limits():
    model = parse_urdf(TWO_JOINTS)
    assert model.name == 'two'
    assert model.root == 'base'
    assert model.links == ('base', 'upper', 'tip', 'tool')
    assert [j.name for j in model.joints] == ['pan', 'spin', 'tool_joint']
    assert model.movable_joint_names == ('pan', 'spin')
    pan, spin, tool = model.joints
    assert pan.type is UrdfJointType.REVOLUTE
    assert (pan.parent, pan.child) == ('base', 'upper')
    assert pan.origin.xyz == (0.1, 0.0, 0.05)
    assert pan.origin.rpy == (0.0, 0.0, 3.14159)
    assert pan.axis == (0.0, 0.0, 1.0)
    assert (pan.limits.lower, pan.limits.upper) == (-1.5, 2.0)
    assert spin.axis == (1.0, 0.0, 0.0)  # the URDF default
    assert spin.limits is None and spin.origin.xyz == (0.0, 0.0, 0.0)
    assert tool.type is UrdfJointType.FIXED and tool.limits is None
    assert model.joint_to('tool') is tool
    assert model.joint_to('base') is None


def test_continuous_joint_keeps_limits_when_given():
    text = TWO_JOINTS.replace('<child link="tip"/>',
                              '<child link="tip"/><limit lower="-6" upper="6" effort="1" '
                              'velocity="1"/>')
    spin = parse_urdf(text).joints[1]
    assert (spin.limits.lower, spin.limits.upper) == (-6.0, 6.0)


@pytest.mark.parametrize(('old', 'new', 'fragment'), [
    ('<robot name="two">', '<robt name="two">', 'not well-formed'),
    ('type="revolute"', 'type="hinge"', "joint 'pan': type 'hinge'"),
    ('<child link="upper"/>', '<child link="nowhere"/>', "joint 'pan': child link 'nowhere'"),
    ('<parent link="base"/>', '', "joint 'pan': <parent"),
    ('xyz="0.1 0 0.05"', 'xyz="0.1 0"', "joint 'pan': <origin xyz=\"0.1 0\">"),
    ('xyz="0.1 0 0.05"', 'xyz="0.1 nan 0"', "joint 'pan': <origin xyz"),
    ('<axis xyz="0 0 2"/>', '<axis xyz="0 0 0"/>', "joint 'pan': <axis"),
    ('lower="-1.5" upper="2.0"', 'lower="2.5" upper="2.0"', "joint 'pan': <limit"),
    ('lower="-1.5"', 'lower="inf"', "joint 'pan': <limit lower=\"inf\">"),
    ('<limit lower="-1.5" upper="2.0" effort="1" velocity="1"/>', '',
     "joint 'pan': a revolute joint needs a <limit>"),
    ('<link name="tool"/>', '<link name="tip"/>', "link 'tip': defined twice"),
    ('name="spin"', 'name="pan"', "joint 'pan': defined twice"),
    ('<parent link="tip"/><child link="tool"/>', '<parent link="tip"/><child link="upper"/>',
     "link 'upper' already has parent joint 'pan'"),
    ('<link name="tool"/>', '<link name="tool"/><link name="stray"/>', 'exactly one root'),
])
def test_a_broken_document_is_refused_naming_the_element(old, new, fragment):
    assert old in TWO_JOINTS
    with pytest.raises(UrdfError) as caught:
        parse_urdf(TWO_JOINTS.replace(old, new, 1))
    assert fragment in str(caught.value)


def test_a_loop_detached_from_the_root_is_refused():
    text = TWO_JOINTS.replace('</robot>', """
      <link name="a"/><link name="b"/>
      <joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>
      <joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint>
    </robot>""")
    with pytest.raises(UrdfError) as caught:
        parse_urdf(text)
    assert "links ['a', 'b'] are not reachable from the root 'base'" in str(caught.value)


def test_entities_and_oversized_text_are_refused_before_parsing():
    bomb = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><robot name="&a;"/>'
    with pytest.raises(UrdfError) as caught:
        parse_urdf(bomb)
    assert 'DOCTYPE' in str(caught.value)
    with pytest.raises(UrdfError) as caught:
        parse_urdf(TWO_JOINTS + ' ' * MAX_URDF_CHARS)
    assert 'at most' in str(caught.value)


def test_urdf_error_is_a_value_error():
    assert issubclass(UrdfError, ValueError)
    assert math.isclose(parse_urdf(TWO_JOINTS).joints[0].axis[2], 1.0)


SO101 = (Path(__file__).parent / 'urdf' / 'so101.urdf').read_text()


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_mangled_urdf_raises_urdf_error_or_reads(data):
    text = SO101
    for _ in range(data.draw(st.integers(1, 4))):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, min(len(text), start + 40)))
        text = text[:start] + data.draw(st.text(max_size=12)) + text[end:]
    try:
        model = parse_urdf(text)
        arm_parameters(model, tool_link='gripper_frame_link')
    except UrdfError:
        pass
