"""Arms with offsets, joint zeros and directions, and ranges anywhere on the circle.

Random arms of the family (a yaw joint or none, two or three pitch joints, a roll joint or
none; every offset, zero, direction and range drawn at random) are checked against an
independent forward kinematics: yourdfpy walking the URDF the arm writes of itself. Then IK is
checked through that FK: reached targets are reached within limits, unreachable ones are
answered with the closest pose a dense sample of joint space finds.
"""

import io
import math

import numpy as np
import pytest
import yourdfpy

from fabrik_ros.kinematics import Arm, Joint, JointKind, Link, ServoMap
from fabrik_ros.kinematics.description.offsets import Offsets
from fabrik_ros.kinematics.description.urdf_out import arm_urdf
from test.kinematics.reference import tool_points

SEEDS = range(12)


def random_joint(rng: np.random.Generator, name: str, kind: JointKind) -> Joint:
    """Return a joint whose range lies anywhere within +-360 deg, at most a turn wide."""
    span = rng.uniform(math.radians(60.0), math.radians(300.0))
    low = rng.uniform(-2.0 * math.pi, 2.0 * math.pi - span)
    return Joint(name, kind, low, low + span, low + 0.5 * span,
                 zero_rad=rng.uniform(-math.pi, math.pi), direction=int(rng.choice([-1, 1])))


def random_arm(seed: int) -> Arm:
    """Return an arm of the family with every offset, zero, direction and range drawn."""
    rng = np.random.default_rng(seed)
    kinds = ([JointKind.YAW] if seed % 4 != 3 else []) + [JointKind.PITCH] * (2 + seed % 2)
    if seed % 3 != 2:
        kinds.append(JointKind.ROLL)
    joints = tuple(random_joint(rng, f'j{i}', kind) for i, kind in enumerate(kinds))
    pitch = [j.name for j in joints if j.kind is JointKind.PITCH]
    links = tuple(Link(name, float(rng.uniform(0.04, 0.15))) for name in pitch)
    has_roll = kinds[-1] is JointKind.ROLL
    offsets = Offsets(tuple(float(v) for v in rng.uniform(-0.2, 0.2, 3)),
                      float(rng.uniform(-0.05, 0.05)), float(rng.uniform(-0.04, 0.04)),
                      float(rng.uniform(-0.01, 0.01)),
                      float(rng.uniform(0.0, 0.02)) if has_roll else 0.0)
    return Arm('base_link', joints, float(rng.uniform(-0.05, 0.1)), links,
               ServoMap(joints, (), ()), offsets=offsets)


def random_positions(arm: Arm, rng: np.random.Generator, count: int) -> np.ndarray:
    """Return (count, n_joints) joint positions within the limits."""
    low = np.array([j.min_rad for j in arm.joints])
    high = np.array([j.max_rad for j in arm.joints])
    return rng.uniform(low, high, size=(count, len(arm.joints)))


def urdf_of(arm: Arm) -> yourdfpy.URDF:
    """Return the arm's own URDF, loaded by yourdfpy (an FK that shares nothing with ours)."""
    return yourdfpy.URDF.load(io.BytesIO(arm_urdf(arm).encode()),
                              build_collision_scene_graph=False, load_meshes=False)


def urdf_tool(urdf: yourdfpy.URDF, arm: Arm, positions: np.ndarray) -> np.ndarray:
    """Return the tool point the URDF puts at joint positions [m]."""
    urdf.update_cfg(dict(zip(arm.joint_names, positions, strict=True)))
    return urdf.get_transform('tool_link', arm.base_frame)[:3, 3]


@pytest.mark.parametrize('seed', SEEDS)
def test_fk_of_offset_arms_matches_their_urdf_in_yourdfpy(seed: int):
    arm = random_arm(seed)
    urdf = urdf_of(arm)
    rng = np.random.default_rng(100 + seed)
    for positions in random_positions(arm, rng, 40):
        points = arm.fk(positions)
        assert np.allclose(points[-1], urdf_tool(urdf, arm, positions), atol=1e-9)
        for index, name in enumerate(arm.joint_names):
            frame = urdf.get_transform(f'{name}_link', arm.base_frame)[:3, 3]
            assert np.allclose(points[index], frame, atol=1e-9), name


@pytest.mark.parametrize('seed', SEEDS)
def test_reachable_targets_are_reached_within_limits_by_the_urdf_fk(seed: int):
    """Targets of random poses, solved from the home pose holding the pose's roll."""
    arm = random_arm(seed)
    urdf = urdf_of(arm)
    rng = np.random.default_rng(200 + seed)
    roll = [i for i, j in enumerate(arm.joints) if j.kind is JointKind.ROLL]
    for positions in random_positions(arm, rng, 30):
        target = urdf_tool(urdf, arm, positions)
        seed_pose = arm.home.copy()
        seed_pose[roll] = positions[roll]
        result = arm.ik(target, seed=seed_pose)
        assert result.reached, (positions, result)
        assert arm.within_limits(result.angles_rad)
        assert np.allclose(result.angles_rad[roll], positions[roll])
        reached = urdf_tool(urdf, arm, result.angles_rad)
        assert np.linalg.norm(reached - target) <= arm.options.tolerance_m + 1e-9
        assert np.allclose(reached, result.position_m, atol=1e-9)


@pytest.mark.parametrize('seed', SEEDS)
def test_cold_solves_answer_in_the_urdf_convention(seed: int):
    arm = random_arm(seed)
    urdf = urdf_of(arm)
    rng = np.random.default_rng(300 + seed)
    reached = 0
    for positions in random_positions(arm, rng, 30):
        if any(j.kind is JointKind.ROLL for j in arm.joints):
            positions[-1] = arm.home[-1]
        target = urdf_tool(urdf, arm, positions)
        result = arm.ik(target)
        assert arm.within_limits(result.angles_rad)
        assert np.linalg.norm(urdf_tool(urdf, arm, result.angles_rad) - target) == pytest.approx(
            result.residual_m, abs=1e-9)
        reached += result.reached
    assert reached == 30


@pytest.mark.parametrize('seed', SEEDS)
def test_far_targets_get_the_closest_pose_a_dense_sample_finds(seed: int):
    """Out of every roll's reach the roll stays where it is: closest at the home roll."""
    arm = random_arm(seed)
    rng = np.random.default_rng(400 + seed)
    sample = random_positions(arm, rng, 20_000)
    rolls = [i for i, j in enumerate(arm.joints) if j.kind is JointKind.ROLL]
    sample[:, rolls] = arm.home[rolls]
    tools = tool_points(arm, sample)
    base = np.array(arm.offsets.base_xyz_m)
    for _ in range(5):
        direction = rng.normal(size=3)
        target = base + 0.6 * direction / np.linalg.norm(direction)
        result = arm.ik(target)
        assert not result.reached
        assert arm.within_limits(result.angles_rad)
        best = float(np.min(np.linalg.norm(tools - target, axis=1)))
        assert result.residual_m <= best + 1e-4


@pytest.mark.parametrize('seed', SEEDS)
def test_batch_answers_as_the_single_solver_does(seed: int):
    arm = random_arm(seed)
    rng = np.random.default_rng(500 + seed)
    positions = random_positions(arm, rng, 40)
    if any(j.kind is JointKind.ROLL for j in arm.joints):
        positions[:, -1] = arm.home[-1]
    targets = np.array([arm.fk(p)[-1] for p in positions])
    batch = arm.ik_batch(targets)
    assert batch.reached.all()
    for target, angles, position in zip(targets, batch.angles_rad, batch.positions_m,
                                        strict=True):
        assert arm.within_limits(angles)
        assert np.allclose(arm.fk(angles)[-1], position, atol=1e-9)
        assert np.linalg.norm(position - target) <= arm.options.tolerance_m


def test_a_stream_of_targets_moves_every_joint_a_little():
    """Seeded from the last answer, 1 mm steps never make a joint jump (no branch hopping)."""
    arm = random_arm(1)
    start = arm.fk(arm.home)[-1]
    answer = arm.ik(start, seed=arm.home)
    for step in range(1, 60):
        target = start + 0.001 * step * np.array([0.3, -0.5, 0.4])
        previous = answer.angles_rad
        answer = arm.ik(target, seed=previous)
        if not answer.reached:
            break
        assert np.max(np.abs(answer.angles_rad - previous)) < 0.15, step
    assert step > 10


def test_another_roll_is_taken_only_when_it_alone_reaches():
    """Without a yaw joint, a target beside the plane is reached only by rolling the tool."""
    joints = (Joint('lift', JointKind.PITCH, -2.0, 2.0, 0.0),
              Joint('bend', JointKind.PITCH, -2.0, 2.0, 0.0),
              Joint('roll', JointKind.ROLL, -math.pi, math.pi, 0.0))
    arm = Arm('base_link', joints, 0.05, (Link('lift', 0.1), Link('bend', 0.08)),
              ServoMap(joints, (), ()), offsets=Offsets(tool_offset_m=0.02))
    beside = arm.fk([0.3, -0.4, math.pi / 2])[-1]
    assert beside[1] == pytest.approx(-0.02)
    rolled = arm.ik(beside)
    assert rolled.reached and rolled.angles_rad[2] == pytest.approx(math.pi / 2)
    in_plane = arm.fk([0.3, -0.4, 0.0])[-1]
    nearest = arm.ik(in_plane, seed=[0.0, 0.0, 0.5])
    assert nearest.reached and nearest.angles_rad[2] == pytest.approx(0.0, abs=1e-9)
    stays = arm.ik(arm.fk([0.2, -0.1, 0.5])[-1], seed=[0.0, 0.0, 0.5])
    assert stays.reached and stays.angles_rad[2] == pytest.approx(0.5)


@pytest.mark.parametrize('seed', [s for s in SEEDS if s % 3 != 2])
def test_turning_the_roll_moves_the_tool_by_at_most_twice_its_offset(seed: int):
    """The bound that lets a target beyond it skip the search over rolls."""
    arm = random_arm(seed)
    rng = np.random.default_rng(600 + seed)
    roll = len(arm.joints) - 1
    low, high = arm.joints[roll].min_rad, arm.joints[roll].max_rad
    for positions in random_positions(arm, rng, 50):
        turned = positions.copy()
        turned[roll] = rng.uniform(low, high)
        moved = np.linalg.norm(arm.fk(turned)[-1] - arm.fk(positions)[-1])
        assert moved <= 2.0 * arm.offsets.tool_offset_m + 1e-12


def test_a_target_beyond_every_roll_keeps_the_roll_and_is_answered_at_once():
    arm = random_arm(0)
    seed = arm.home.copy()
    seed[-1] = arm.joints[-1].min_rad + 0.3
    far = np.array(arm.offsets.base_xyz_m) + np.array([2.0, 1.0, 0.5])
    result = arm.ik(far, seed=seed)
    assert not result.reached and result.angles_rad[-1] == pytest.approx(seed[-1])
    assert result.iterations < 100


def test_a_batch_seeded_with_many_rolls_answers_as_single_solves():
    """Each roll has a chain of its own: many rolls are solved row by row, as ik does."""
    arm = random_arm(4)
    rng = np.random.default_rng(9)
    positions = random_positions(arm, rng, 30)
    targets = np.array([arm.fk(p)[-1] for p in positions])
    batch = arm.ik_batch(targets, positions)
    for row, (target, seed) in enumerate(zip(targets, positions, strict=True)):
        single = arm.ik(target, seed)
        assert np.allclose(batch.angles_rad[row], single.angles_rad, atol=1e-12)
        assert batch.reached[row] == single.reached
    assert batch.reached.all()
