"""``arm_calibration_from_lerobot``: an arm file's bus servo calibration from LeRobot's.

SO-101 owners have often calibrated their arm with LeRobot already (``lerobot-calibrate``):
this reads that calibration file into a copy of the arm file, servo by servo, instead of
calibrating again (see :mod:`fabrik_ros.tools.lerobot_calibration` for what each number
becomes). The copy keeps the arm file's text and comments, is validated by the arm loader
before it is written, and a file it replaces is kept as ``.bak``. A file that cannot be read
into the arm ends the run with exit status 1 and one line on stderr saying why; nothing is
written.
"""

import argparse
from collections.abc import Sequence
from pathlib import Path
import sys

from fabrik_ros.kinematics import Arm, ArmConfigError
from fabrik_ros.kinematics.description.arm_file import read_params_file
from fabrik_ros.tools.lerobot_calibration import (
    arm_edits,
    import_servos,
    LeRobotCalibrationError,
    read_calibration_file,
    ServoImport,
)
from fabrik_ros.webview.servo_yaml import save_arm_copy

PROG = 'arm_calibration_from_lerobot'
DESCRIPTION = __doc__.split('\n\n')[0] if __doc__ else ''


def build_parser() -> argparse.ArgumentParser:
    """Return the command line's parser."""
    parser = argparse.ArgumentParser(
        prog=PROG, description=DESCRIPTION,
        epilog='LeRobot keeps it in ~/.cache/huggingface/lerobot/calibration/robots/'
        '<robot type>/<id>.json. The arm file must have bus servo sections (id, zero_count): '
        'arm_from_urdf --bus-servos 4096 writes them.')
    parser.add_argument('calibration', type=Path, help="LeRobot's calibration file (JSON)")
    parser.add_argument('arm_file', type=Path, help='the arm file (YAML) to calibrate a copy of')
    parser.add_argument('-o', '--output', type=Path, required=True,
                        help='where the calibrated copy goes (an existing file is kept as .bak)')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool; return the exit status (0 written, 1 refused)."""
    args = build_parser().parse_args(argv)
    try:
        arm = Arm.from_params(read_params_file(args.arm_file))
        motors = read_calibration_file(args.calibration)
        imports = import_servos(arm, motors, args.calibration.name)
        values, comments = arm_edits(imports, args.calibration.name)
        saved = save_arm_copy(args.arm_file, args.output, values, comments)
    except (LeRobotCalibrationError, ArmConfigError) as error:
        print(f'{PROG}: {error}', file=sys.stderr)
        return 1
    except OSError as error:
        print(f'{PROG}: {error.filename or args.calibration}: {error.strerror or error}',
              file=sys.stderr)
        return 1
    print(summary(imports, saved.path, saved.backup))
    return 0


def summary(imports: Sequence[ServoImport], output: Path, backup: Path | None) -> str:
    """Return the one line printed after writing the copy."""
    narrowed = [f'{i.name} ({", ".join(i.narrowed)})' for i in imports if i.narrowed]
    limits = f'; limits narrowed to the recorded ranges: {"; ".join(narrowed)}' if narrowed \
        else '; joint limits kept'
    kept = f'; the previous file kept as {backup}' if backup else ''
    return (f'wrote {output}: {len(imports)} bus servos from LeRobot (ids '
            f'{", ".join(str(i.motor.id) for i in imports)}){limits}{kept}')


if __name__ == '__main__':
    sys.exit(main())
