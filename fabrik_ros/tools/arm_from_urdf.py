"""``arm_from_urdf``: write an arm file from a vendor URDF (xacro already expanded).

The arm file's joint names and positions are the URDF's, its geometry is read off the URDF's
transforms exactly, and every number carries a comment saying where it came from. A URDF that
cannot be read, an unknown link or a chain outside the arm family ends the run with exit status
1 and one line on stderr saying why.
"""

import argparse
from collections.abc import Sequence
import math
from pathlib import Path
import sys

import yaml

from fabrik_ros.kinematics import Arm, ArmConfigError
from fabrik_ros.kinematics.description.arm_file import unwrap
from fabrik_ros.kinematics.description.arm_keys import KEYS
from fabrik_ros.kinematics.description.urdf_arm_file import arm_file_text, BusServos
from fabrik_ros.kinematics.description.urdf_in import arm_parameters, ArmParameters
from fabrik_ros.kinematics.description.urdf_model import (
    MAX_URDF_CHARS,
    parse_urdf,
    UrdfError,
    UrdfModel,
)

DESCRIPTION = __doc__.split('\n\n')[0] if __doc__ else ''


def build_parser() -> argparse.ArgumentParser:
    """Return the command line's parser."""
    parser = argparse.ArgumentParser(
        prog='arm_from_urdf', description=DESCRIPTION,
        epilog='The servo sections written are placeholders: calibrate them before driving.')
    parser.add_argument('urdf', type=Path, help='the URDF file (xacro already expanded)')
    parser.add_argument('--tool-link', required=True,
                        help='the link whose origin is the tool point')
    parser.add_argument('--base-link', default=None,
                        help="the link the arm file's frame is (default: the URDF's root)")
    parser.add_argument('-o', '--output', type=Path, required=True,
                        help='the arm file to write (YAML)')
    parser.add_argument('--first-channel', type=int, default=0,
                        help='servo channel (or bus id) of the first joint; the others follow '
                        'in chain order (default: 0)')
    parser.add_argument('--aux-servo', action='append', default=[], metavar='NAME',
                        help="add a servo outside the chain (a gripper) after the joints' "
                        'channels; may be repeated')
    parser.add_argument('--bus-servos', type=_counts_per_turn, default=None,
                        metavar='COUNTS_PER_TURN',
                        help='write bus servo sections in counts (id, zero_count, direction) '
                        'for encoders of this many counts per turn (4096: Feetech STS3215, '
                        'Dynamixel X) instead of pulse placeholders; an --aux-servo named '
                        "like a URDF joint takes that joint's limits")
    return parser


def _counts_per_turn(text: str) -> int:
    """Return ``--bus-servos``'s value, held to the arm file's rule on counts_per_turn."""
    rule = KEYS['servos.*.counts_per_turn'].rules[0]
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not an integer') from None
    if not rule.holds(value):
        raise argparse.ArgumentTypeError(f'{value} must be {rule.phrase}')
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool; return the exit status (0 written, 1 refused)."""
    args = build_parser().parse_args(argv)
    source = f'URDF {args.urdf.name}'
    try:
        text = read_urdf(args.urdf)
        model = parse_urdf(text)
        params = arm_parameters(model, tool_link=args.tool_link, base_link=args.base_link,
                                source=source)
        bus = None if args.bus_servos is None else BusServos(
            args.bus_servos, aux_ranges(model, args.aux_servo, source))
        text = arm_file_text(params, source=source, first_channel=args.first_channel,
                             aux_servos=args.aux_servo, bus=bus)
        check_loads(text, args.output)
        args.output.write_text(text)
    except (UrdfError, OSError) as error:
        print(f'arm_from_urdf: {args.urdf}: {error}', file=sys.stderr)
        return 1
    print(summary(params, args.output))
    return 0


def aux_ranges(model: UrdfModel, names: Sequence[str],
               source: str) -> dict[str, tuple[float, float, str]]:
    """Return the limits [deg] of the URDF joints named like auxiliary servos, with a source."""
    ranges = {}
    for joint in model.joints:
        if joint.name in names and joint.limits is not None:
            low, high = joint.limits.lower, joint.limits.upper
            ranges[joint.name] = (math.degrees(low), math.degrees(high),
                                  f'joint {joint.name} <limit lower="{low:g}" '
                                  f'upper="{high:g}"> rad, {source}')
    return ranges


def read_urdf(path: Path) -> str:
    """Return a URDF file's text, refusing one too long to be a URDF without meshes.

    :raises UrdfError: the file is too long or not UTF-8 text.
    :raises OSError: the file cannot be read.
    """
    with path.open('rb') as stream:
        data = stream.read(MAX_URDF_CHARS + 1)
    if len(data) > MAX_URDF_CHARS:
        raise UrdfError(f'more than {MAX_URDF_CHARS} bytes; a URDF is read up to that size')
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as error:
        raise UrdfError(f'not UTF-8 text ({error.reason} at byte {error.start})') from None


def check_loads(text: str, output: Path) -> None:
    """Refuse an arm file the loader would refuse (the only validator), before writing it.

    A URDF in millimetres, say, reads off lengths no hobby arm has; the loader names the key.

    :raises UrdfError: carrying the loader's one-line reason.
    """
    try:
        Arm.from_params(unwrap(yaml.safe_load(text), str(output)))
    except ArmConfigError as error:
        raise UrdfError(f'the arm file it makes would not load: {error}') from None


def summary(params: ArmParameters, output: Path) -> str:
    """Return the one line printed after writing the arm file."""
    joints = ', '.join(f'{j.kind.value} {j.name}' for j in params.joints)
    return (f'wrote {output}: {params.base_frame} -> {params.tool_link}, {len(params.joints)} '
            f'joints ({joints}); servo sections are placeholders to calibrate')


if __name__ == '__main__':
    sys.exit(main())
