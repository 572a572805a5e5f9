"""``moveit_config_from_arm``: write a MoveIt 2 configuration for an arm file.

The folder holds the URDF (generated from the arm file with its gripper joint, or the
vendor's), the SRDF, kinematics.yaml, joint_limits.yaml, moveit_controllers.yaml (MoveIt's
simple controller manager on this package's arm_controller/follow_joint_trajectory and
gripper_controller/gripper_cmd servers), ompl_planning.yaml, an RViz config and
launch/moveit.launch.py, which starts move_group with them beside this package's nodes. An arm
file or URDF that cannot be used ends the run with exit status 1 and one line on stderr.
"""

import argparse
from collections.abc import Sequence
from pathlib import Path
import sys
from typing import Any

import yaml

from fabrik_ros.kinematics import Arm, ArmConfigError
from fabrik_ros.kinematics.description.arm_file import unwrap
from fabrik_ros.kinematics.description.urdf_model import MAX_URDF_CHARS
from fabrik_ros.tools.moveit_config_files import folder_files
from fabrik_ros.tools.moveit_config_robot import moveit_robot, MoveItConfigError, MoveItRobot

DESCRIPTION = __doc__.split('\n\n')[0] if __doc__ else ''
PROGRAM = 'moveit_config_from_arm'
MAX_ARM_FILE_BYTES = 1 << 20


def build_parser() -> argparse.ArgumentParser:
    """Return the command line's parser."""
    parser = argparse.ArgumentParser(
        prog=PROGRAM, description=DESCRIPTION,
        epilog='Then: ros2 launch DIR/launch/moveit.launch.py (bringup:=arm port:=... for the '
        "real arm), and plan in RViz's MotionPlanning panel.")
    parser.add_argument('arm_file', type=Path, help='the arm file (ROS 2 parameter YAML)')
    parser.add_argument('-o', '--output', type=Path, required=True,
                        help='the folder to write (created; files in it are replaced)')
    parser.add_argument('--gripper', default=None, metavar='NAME',
                        help="the auxiliary servo the gripper actions drive (default: the arm "
                        "file's only one); 'none' for no gripper group")
    parser.add_argument('--urdf', type=Path, default=None,
                        help="the vendor's URDF (xacro expanded) instead of the one generated "
                        "from the arm file; its joints must be the arm file's")
    parser.add_argument('--tool-link', default=None,
                        help="with --urdf: the link the arm group's chain ends at")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool; return the exit status (0 written, 1 refused)."""
    args = build_parser().parse_args(argv)
    try:
        arm_text = read_bounded(args.arm_file, MAX_ARM_FILE_BYTES)
        document = _document(arm_text)
        arm = Arm.from_params(unwrap(document, str(args.arm_file)))
        vendor = None if args.urdf is None else read_bounded(args.urdf, MAX_URDF_CHARS)
        if vendor is None and args.tool_link:
            raise MoveItConfigError('--tool-link goes with --urdf; the generated URDF ends at '
                                    'tool_link')
        robot = moveit_robot(arm, document, gripper=args.gripper, vendor_urdf=vendor,
                             tool_link=args.tool_link)
        source = args.arm_file.name + (f' and {args.urdf.name}' if args.urdf else '')
        write_folder(args.output, folder_files(robot, arm_text, source=source,
                                               folder=str(args.output)))
    except (ArmConfigError, MoveItConfigError, OSError) as error:
        print(f'{PROGRAM}: {args.arm_file}: {error}', file=sys.stderr)
        return 1
    print(summary(robot, args.output))
    return 0


def read_bounded(path: Path, limit: int) -> str:
    """Return a file's UTF-8 text, refusing one longer than ``limit`` bytes.

    :raises MoveItConfigError: too long, or not UTF-8
    :raises OSError: it cannot be read
    """
    with path.open('rb') as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise MoveItConfigError(f'{path}: more than {limit} bytes')
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as error:
        raise MoveItConfigError(f'{path}: not UTF-8 text ({error.reason} at byte '
                                f'{error.start})') from None


def _document(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise MoveItConfigError(f'not YAML: {" ".join(str(error).split())}') from None


def write_folder(folder: Path, files: dict[str, str]) -> None:
    """Write every file under ``folder``, creating the folders it needs."""
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding='utf-8')


def summary(robot: MoveItRobot, folder: Path) -> str:
    """Return the one line printed after writing the folder."""
    gripper = f', gripper {robot.gripper.name}' if robot.gripper else ', no gripper'
    return (f'wrote {folder}: group arm {robot.base_link} -> {robot.tool_link} '
            f'({len(robot.joints)} joints{gripper}); ros2 launch '
            f'{folder}/launch/moveit.launch.py')


if __name__ == '__main__':
    sys.exit(main())
