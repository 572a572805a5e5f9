"""The jog core: twists and joint velocities integrated within limits and speed limits."""

import math
import subprocess
import sys

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from fabrik_ros.kinematics import load_arm
from fabrik_ros.kinematics.description.urdf_out import arm_urdf
from fabrik_ros.kinematics.jog import (
    capped,
    checked_components,
    JogError,
    JogLimits,
    joint_step,
    joint_velocities,
    tool_rotation,
    TwistJog,
)
from test.kinematics.conftest import CONFIG_DIR
from test.kinematics.description.urdf_fk import UrdfFk
from test.kinematics.test_purity import BLOCKER

ARM_4DOF = load_arm(CONFIG_DIR / 'arm_4dof.yaml')
ARM_6SERVO = load_arm(CONFIG_DIR / 'arm_6servo.yaml')
ARMS = {'arm_4dof': ARM_4DOF, 'arm_6servo': ARM_6SERVO,
        'arm_planar_3link': load_arm(CONFIG_DIR / 'arm_planar_3link.yaml')}
DT_S = 0.02
# A pose of each arm well inside its workspace, elbow bent.
MID = {'arm_4dof': (0.3, 1.2, -1.3, -0.4), 'arm_6servo': (0.3, 1.3, -1.4, -0.3, 0.2),
       'arm_planar_3link': (1.2, -1.0, -0.4)}
SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _limits(arm, speed=1.5, linear=0.2, angular=2.0):
    return JogLimits(tuple([speed] * len(arm.joints)), linear, angular)


def _poses(arm, beyond=0.0):
    return st.tuples(*(st.floats(j.min_rad - beyond, j.max_rad + beyond) for j in arm.joints))


def _vectors(bound):
    return st.tuples(*[st.floats(-bound, bound)] * 3)


@pytest.mark.parametrize('name', sorted(ARMS))
def test_the_tool_rotation_is_the_generated_urdfs_tool_link(name, tmp_path):
    arm = ARMS[name]
    path = tmp_path / 'arm.urdf'
    path.write_text(arm_urdf(arm), encoding='utf-8')
    urdf = UrdfFk(path, base_link=arm.base_frame, tool_link='tool_link')
    rng = np.random.default_rng(36)
    for _ in range(20):
        angles = [rng.uniform(j.min_rad, j.max_rad) for j in arm.joints]
        urdf.robot.update_cfg(dict(zip(arm.joint_names, angles, strict=True)))
        expected = urdf.robot.get_transform('tool_link', arm.base_frame)[:3, :3]
        assert np.allclose(tool_rotation(arm, angles), expected, atol=1e-9)


@pytest.mark.parametrize('name', sorted(ARMS))
@SLOW
@given(data=st.data(), speed=st.floats(0.2, 5.0), dt=st.floats(0.005, 0.05))
def test_every_tick_is_within_the_joint_limits_and_speed_limits(name, data, speed, dt):
    arm = ARMS[name]
    angles = data.draw(_poses(arm, beyond=0.02))     # joint states a hair out of the limits
    angles = tuple(min(max(a, j.min_rad), j.max_rad) if data.draw(st.booleans()) else a
                   for j, a in zip(arm.joints, angles, strict=True))
    jog = TwistJog(arm)
    limits = _limits(arm, speed)
    for _ in range(4):
        linear, angular = data.draw(_vectors(1.0)), data.draw(_vectors(5.0))
        step = jog.step(arm, angles, linear, angular, dt, limits)
        assert arm.within_limits(step.angles_rad)
        within = [min(max(a, j.min_rad), j.max_rad) for j, a in zip(arm.joints, angles,
                                                                      strict=True)]
        assert np.max(np.abs(np.subtract(step.angles_rad, within))) <= speed * dt + 1e-9
        assert 0.0 <= step.scale <= 1.0
        assert (step.held == 'jump') == (step.angles_rad == tuple(within) and step.scale == 0.0)
        angles = step.angles_rad


@pytest.mark.parametrize('name', sorted(ARMS))
def test_a_free_twist_moves_the_tool_its_distance_keeping_the_approach(name):
    arm = ARMS[name]
    angles = MID[name]
    start, axis = arm.fk(angles)[-1], arm.tool_axis(angles)
    velocity = np.array([0.0, 0.0, 0.03]) if arm.model.yaw is None else np.array([0.0, 0.03, 0.02])
    jog = TwistJog(arm)
    for _ in range(25):
        step = jog.step(arm, angles, velocity, (0.0, 0.0, 0.0), DT_S, _limits(arm))
        assert step.held == '' and step.scale == 1.0
        angles = step.angles_rad
    assert np.allclose(arm.fk(angles)[-1] - start, velocity * DT_S * 25,
                       atol=arm.options.tolerance_m)
    elevation = math.asin(axis[2])
    assert math.asin(arm.tool_axis(angles)[2]) == pytest.approx(elevation, abs=1e-6), (
        'the approach keeps its tilt as the plane turns with the tool')


@pytest.mark.parametrize('name', sorted(ARMS))
def test_the_angular_part_about_the_plane_normal_tilts_the_approach_the_rest_cannot(name):
    arm = ARMS[name]
    angles = MID[name]
    rotation = tool_rotation(arm, angles)
    axis = rotation[:, 0]
    yaw = arm.joints[0].geometric(angles[0]) if arm.model.yaw is not None else 0.0
    normal = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
    across = np.cross(axis, normal)
    rate = 0.5
    tilted = TwistJog(arm).step(arm, angles, (0.0, 0.0, 0.0), normal * rate, DT_S, _limits(arm))
    turned = arm.tool_axis(tilted.angles_rad)
    # about +normal (the pitch axes' direction): the axis turns toward -z
    assert math.asin(turned[2]) == pytest.approx(math.asin(axis[2]) - rate * DT_S, abs=1e-6)
    swung = TwistJog(arm).step(arm, angles, (0.0, 0.0, 0.0), across * rate, DT_S, _limits(arm))
    assert np.allclose(arm.tool_axis(swung.angles_rad), axis, atol=1e-6), 'dropped'
    assert np.allclose(arm.fk(swung.angles_rad)[-1], arm.fk(angles)[-1], atol=1e-4)


def test_the_angular_part_about_the_approach_turns_the_roll_joint_and_nothing_else():
    arm = ARM_6SERVO
    angles = MID['arm_6servo']
    axis = arm.tool_axis(angles)
    step = TwistJog(arm).step(arm, angles, (0.0, 0.0, 0.0), axis * 0.8, DT_S, _limits(arm))
    assert step.angles_rad[4] == pytest.approx(angles[4] + 0.8 * DT_S)
    assert np.allclose(step.angles_rad[:4], angles[:4], atol=1e-6)
    on_4dof = TwistJog(ARM_4DOF).step(ARM_4DOF, MID['arm_4dof'], (0.0, 0.0, 0.0),
                                      ARM_4DOF.tool_axis(MID['arm_4dof']), DT_S,
                                      _limits(ARM_4DOF))
    assert np.allclose(on_4dof.angles_rad, MID['arm_4dof'], atol=1e-6), 'no roll: dropped'


def test_a_joint_too_fast_scales_the_whole_twist_down_uniformly():
    arm = ARM_6SERVO
    angles = MID['arm_6servo']
    velocity = np.array([0.0, 0.2, 0.0])
    free = TwistJog(arm).step(arm, angles, velocity, (0.0, 0.0, 0.0), DT_S, _limits(arm, 50.0))
    fastest = np.max(np.abs(np.subtract(free.angles_rad, angles))) / DT_S
    limited = TwistJog(arm).step(arm, angles, velocity, (0.0, 0.0, 0.0), DT_S,
                                 _limits(arm, fastest / 2))
    assert limited.scale == pytest.approx(0.5, rel=0.05)
    moved = arm.fk(limited.angles_rad)[-1] - arm.fk(angles)[-1]
    assert np.allclose(moved, velocity * DT_S * limited.scale, atol=1e-4), 'same direction'


def test_pushing_past_the_edge_slides_and_the_goal_stays_at_the_tool():
    arm = ARM_4DOF
    angles = MID['arm_4dof']
    jog = TwistJog(arm)
    held = []
    for _ in range(150):
        step = jog.step(arm, angles, (0.2, 0.0, 0.05), (0.0, 0.0, 0.0), DT_S, _limits(arm))
        tool = arm.fk(step.angles_rad)[-1]
        assert np.linalg.norm(np.subtract(step.goal_m, tool)) < 0.2 * DT_S * 2 + 1e-3
        held.append(step.held)
        angles = step.angles_rad
    assert 'edge' in held
    back = jog.step(arm, angles, (-0.2, 0.0, 0.0), (0.0, 0.0, 0.0), DT_S, _limits(arm))
    assert arm.fk(back.angles_rad)[-1][0] < arm.fk(angles)[-1][0], 'back in at once'


def test_the_speed_caps_bound_the_twist():
    arm = ARM_6SERVO
    angles = MID['arm_6servo']
    step = TwistJog(arm).step(arm, angles, (0.0, 0.0, 900.0), (0.0, 0.0, 0.0), DT_S,
                              _limits(arm, 100.0, linear=0.05))
    moved = arm.fk(step.angles_rad)[-1] - arm.fk(angles)[-1]
    assert np.linalg.norm(moved) == pytest.approx(0.05 * DT_S, abs=1e-4)
    assert capped(np.array([0.0, 0.0, 2.0]), 1.0).tolist() == [0.0, 0.0, 1.0]


def test_garbage_components_are_refused_naming_the_rule():
    with pytest.raises(JogError, match='is not finite'):
        checked_components('jog/twist linear', [math.nan, 0.0, 0.0])
    with pytest.raises(JogError, match='exceeds 1000'):
        checked_components('jog/twist angular', [0.0, -1e6, 0.0])


def test_joint_velocities_name_the_unknown_joints_and_the_closest():
    names = ARM_6SERVO.joint_names
    assert joint_velocities(names, ['elbow', 'base_yaw'], [0.1, -0.2], topic='t') == {
        2: 0.1, 0: -0.2}
    with pytest.raises(JogError, match=r"'elbo': did you mean 'elbow'\?"):
        joint_velocities(names, ['elbo'], [0.1], topic='jog/joints')
    with pytest.raises(JogError, match='2 joint_names but 1 velocities'):
        joint_velocities(names, ['elbow', 'shoulder'], [0.1], topic='jog/joints')
    with pytest.raises(JogError, match='6 joint_names, more than the arm has'):
        joint_velocities(names, ['x'] * 6, [0.1] * 6, topic='jog/joints')
    with pytest.raises(JogError, match='twice'):
        joint_velocities(names, ['elbow', 'elbow'], [0.1, 0.1], topic='jog/joints')


@SLOW
@given(data=st.data(), speed=st.floats(0.1, 5.0))
def test_joint_steps_stay_within_limits_and_scale_uniformly(data, speed):
    arm = ARM_6SERVO
    angles = data.draw(_poses(arm))
    velocities = {i: data.draw(st.floats(-50.0, 50.0)) for i in
                  data.draw(st.sets(st.integers(0, 4), min_size=1))}
    moved, held = joint_step(arm, angles, velocities, DT_S, [speed] * 5)
    assert arm.within_limits(moved)
    steps = np.abs(np.subtract(moved, angles))
    assert steps.max() <= speed * DT_S + 1e-12
    ratio = max(abs(v) / speed for v in velocities.values())
    scale = 1.0 / ratio if ratio > 1.0 else 1.0
    for index, velocity in velocities.items():
        joint = arm.joints[index]
        wanted = angles[index] + velocity * scale * DT_S
        assert moved[index] == pytest.approx(min(max(wanted, joint.min_rad), joint.max_rad))
        assert (joint.name in held) == (velocity != 0.0 and moved[index] != wanted)
    untouched = [i for i in range(5) if i not in velocities]
    assert np.allclose(np.take(moved, untouched), np.take(angles, untouched))


@pytest.mark.timeout(60)
def test_the_jog_core_imports_with_rclpy_blocked():
    code = BLOCKER.replace('import fabrik_ros.kinematics, fabrik_ros.kinematics.description'
                           '.urdf_out', 'import fabrik_ros.kinematics.jog')
    assert 'kinematics.jog' in code
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[]'


def test_a_jog_keeps_the_elbow_on_its_side_whatever_solver_bend_prefers():
    arm = ARM_6SERVO            # solver.bend: up; this pose has the elbow the other way
    angles = (0.0, 0.5, 1.2, -1.0, 0.0)
    elbow = arm.joint_names.index('elbow')
    jog = TwistJog(arm)
    for _ in range(30):
        step = jog.step(arm, angles, (0.02, 0.01, 0.03), (0.0, 0.3, 0.0), DT_S, _limits(arm))
        assert step.held == '' and step.angles_rad[elbow] > 0.5
        angles = step.angles_rad


def _jogged(arm, twist, ticks=50):
    """Return the tool's motion and what held it over ``ticks`` of ``twist`` from home."""
    jog, angles, held = TwistJog(arm), tuple(arm.home), []
    start = arm.fk(angles)[-1]
    for _ in range(ticks):
        step = jog.step(arm, angles, np.array(twist), np.zeros(3), DT_S, _limits(arm))
        assert np.all(np.abs(np.subtract(step.angles_rad, angles)) <= 1.5 * DT_S + 1e-9)
        angles = step.angles_rad
        held.append(step.held)
    return arm.fk(angles)[-1] - start, held


def test_where_only_another_pose_keeps_the_approach_it_gives_way_and_the_point_moves_on():
    # The AL5D's home is folded back over its base, pointing -y: toward the base, the tool
    # keeps its approach only with the yaw turned half round. The approach gives way instead.
    moved, held = _jogged(load_arm(CONFIG_DIR / 'al5d.yaml'), (0.0, 0.05, 0.0))
    assert moved[1] > 0.5 * 0.05 * DT_S * 50, moved
    assert 'limit' in held and 'jump' not in held


def test_near_a_singular_pose_a_tick_that_makes_little_of_the_twist_says_so():
    # The PhantomX Pincher's home stands straight up, the tool over the yaw axis: sideways
    # the base only turns.
    moved, held = _jogged(load_arm(CONFIG_DIR / 'phantomx_pincher.yaml'), (0.0, 0.05, 0.0))
    assert abs(moved[1]) < 0.05 * DT_S * 50 / 2
    assert held.count('slow') > len(held) / 2
