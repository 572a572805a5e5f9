"""Arm config files broken in one key at a time: every node refuses with one line naming it.

Each case is a copy of the shipped 4-DOF config with exactly one key changed, removed or
misspelt (see bad_config.py), handed to a real node as ``--params-file``. A node either
refuses to start with an error that main() prints as one line naming the key, or — for
values that are odd but usable, such as a 1e300 m link — starts with an arm that still solves
to finite angles and calibrated pulses. A refusal by any other exception type, or a message
without the key, fails.
"""

import math

import numpy as np
import pytest
from rclpy.exceptions import ParameterException
import yaml

from fabrik_ros.kinematics import load_arm
from fabrik_ros.kinematics.description.arm_keys import TOP_KEYS
from fabrik_ros.nodes.driver_node import ServoDriverNode
from fabrik_ros.nodes.ik_node import FabrikIkNode
from fabrik_ros.nodes.ros_parameters import STANDARD_PARAMETERS
from fabrik_ros.nodes.sim_arm_node import SimArmNode
from test.reliability.bad_config import bad_keys, BadKey
from test.reliability.results import record
from test.reliability.rig import SHIPPED_CONFIG

pytestmark = [pytest.mark.ros]

# What spin_until_shutdown turns into one "cannot start: ..." line and exit status 1.
REFUSALS = (ValueError, ParameterException)
IK_ARGS = ('-p', 'interactive_target:=false')
# Breakages no config may get away with; the others may be refused or give a sane arm.
MUST_REFUSE = {'nan', 'inf', '-inf', 'string', 'bool', 'string_list', 'nan_element',
               'empty_list', 'empty', 'number', 'misspelt'}
# Keys with a default (a removed one is fine).
OPTIONAL_KEYS = {'base_frame', 'geometry.tool_length_m',
                 *(f'servos.{j}.trim_us' for j in ('base_yaw', 'shoulder', 'elbow', 'wrist')),
                 *(f'solver.{k}' for k in ('tolerance_m', 'max_iterations', 'min_improvement_m',
                                           'bend'))}
# An empty YAML list has no type, and rclpy's Node.__init__ refuses it before any node code
# runs, naming no key: tested on its own below (the node names the empty keys of the file).
EMPTY_LIST = 'empty_list'
DRIVER_BAD = [('protocol', 'bogus'), ('protocol', 5.0), ('baud', -1), ('baud', 'fast'),
              ('baud', 10 ** 12), ('control_rate_hz', 0.0), ('control_rate_hz', math.nan),
              ('control_rate_hz', -5.0), ('poll_rate_hz', -1.0), ('poll_rate_hz', math.nan),
              ('board_timeout_s', -1.0), ('board_timeout_s', 1e300),
              ('board_timeout_s', math.nan), ('board_timeout_action', 'explode'),
              ('on_shutdown', 'explode'), ('max_speed_rad_s', [math.nan] * 4),
              ('max_speed_rad_s', [-1.0] * 4), ('max_speed_rad_s', [1.0] * 3),
              ('max_speed_rad_s', ['fast'] * 4), ('home_move_time_s', -1.0),
              ('home_move_time_s', math.nan), ('home_move_time_s', math.inf),
              ('state_rate_hz', 0.0), ('diagnostics_period_s', 0.0)]


@pytest.fixture(autouse=True)
def _one_participant(ros):
    """Keep one node in the context, so the cases' nodes share its DDS participant.

    Without it the context's participant is made and destroyed with every case's node: on
    Jazzy (Fast DDS 2.14) destroying one while discovery callbacks run can spin for ever in
    ``DomainParticipant::set_listener`` on a loaded machine, which pytest's timeout cannot
    stop.
    """
    ros.probe('participant_keeper')


def _shipped() -> dict:
    return yaml.safe_load(SHIPPED_CONFIG.read_text())['/**']['ros__parameters']


def _write(tmp_path, params: dict, name: str):
    path = tmp_path / f'{name}.yaml'
    path.write_text(yaml.safe_dump({'/**': {'ros__parameters': params}}))
    return path


def _outcome(kind, context, path, *extra: str):
    """Return the exception ``kind(...)`` raised on ``path``, or None after destroying the node."""
    try:
        node = kind(context=context, cli_args=['--ros-args', '--params-file', str(path), *extra])
    except Exception as error:     # classified by the caller: anything else is a finding
        return error
    if hasattr(node, 'shutdown'):
        node.shutdown()
    node.destroy_node()
    return None


def _sane(path) -> str:
    """Return '' if the arm in ``path`` solves to finite angles and calibrated pulses."""
    arm = load_arm(path)
    for point in ((0.15, 0.05, 0.12), (1e300, 0.0, 0.0)):
        result = arm.ik(point)
        if not np.all(np.isfinite(result.angles_rad)):
            return f'ik{point} gave {result.angles_rad}'
        command = arm.servo_map.to_units(result.angles_rad)
        for cal, pulse in zip(arm.servo_map.calibrations, command.units, strict=True):
            if not cal.min_us <= pulse <= cal.max_us:
                return f'ik{point} gave pulse {pulse} outside [{cal.min_us}, {cal.max_us}]'
    return ''


@pytest.mark.timeout(170)
def test_each_bad_key_of_the_arm_config_is_refused_by_name_or_harmless(ros, tmp_path):
    # A misspelt key at the top level is no parameter of the node: refused as such.
    cases = [case for case in bad_keys(_shipped()) if case.variant != EMPTY_LIST]
    findings, refused, accepted = [], 0, 0
    for index, case in enumerate(cases):
        path = _write(tmp_path, case.apply(_shipped()), f'case{index}')
        error = _outcome(FabrikIkNode, ros.context, path, *IK_ARGS)
        finding = _judge(case, error, path)
        if finding:
            findings.append(f'{case.key} {case.variant}: {finding}')
        refused += error is not None
        accepted += error is None
    record('bad_input.arm_config_keys', {'cases': len(cases), 'refused': refused,
                                         'accepted_and_sane': accepted - len(findings),
                                         'findings': findings})
    assert len(cases) > 200
    assert findings == []


def _judge(case: BadKey, error, path) -> str:
    if error is None:
        if case.variant in MUST_REFUSE or (case.removed and case.key not in OPTIONAL_KEYS):
            return 'accepted'
        return _sane(path)
    text = str(error)
    if not isinstance(error, REFUSALS):
        return f'refused by {type(error).__name__} (main() would print a traceback): {text}'
    if '\n' in text.strip():
        return f'refusal is not one line: {text!r}'
    parent, _, leaf = case.key.rpartition('.')
    # A rule between two keys (min_deg < max_deg) may be reported at its partner, naming both.
    if case.key in text or (parent in text and leaf in text):
        return ''
    # One joint name fewer: reported at the joints entry that lost its name.
    if case.key == 'joint_names' and 'joints.' in text:
        return ''
    return f'refusal does not name the key: {text}'


@pytest.mark.timeout(60)
@pytest.mark.parametrize('key', ['joint_names', 'geometry.link_lengths_m'])
def test_an_empty_list_is_refused_by_name(ros, tmp_path, key):
    case = next(c for c in bad_keys(_shipped()) if c.key == key and c.variant == EMPTY_LIST)
    path = _write(tmp_path, case.apply(_shipped()), 'empty')
    error = _outcome(FabrikIkNode, ros.context, path, *IK_ARGS)
    assert _judge(case, error, path) == ''


@pytest.mark.timeout(60)
def test_each_bad_driver_parameter_is_refused_by_name(ros, tmp_path):
    findings = []
    for index, (key, value) in enumerate(DRIVER_BAD):
        params = _shipped()
        params.update({key: value, 'port': str(tmp_path / 'ttyNONE')})
        path = _write(tmp_path, params, f'driver{index}')
        error = _outcome(ServoDriverNode, ros.context, path)
        if error is None:
            findings.append(f'{key} = {value!r}: accepted')
        elif not isinstance(error, REFUSALS):
            findings.append(f'{key} = {value!r}: refused by {type(error).__name__}: {error}')
        elif key not in str(error) or '\n' in str(error).strip():
            findings.append(f'{key} = {value!r}: refusal does not name it in one line: '
                            f'{error!r}')
    record('bad_input.driver_parameters', {'cases': len(DRIVER_BAD), 'findings': findings})
    assert findings == []


def _misspellings(name: str) -> list[str]:
    """Return ``name`` with one letter dropped, one doubled and two swapped (up to 3 typos)."""
    middle = len(name) // 2
    typos = [name[:middle] + name[middle + 1:], name[:middle] + name[middle] + name[middle:],
             name[:middle - 1] + name[middle] + name[middle - 1] + name[middle + 1:]]
    return [typo for typo in dict.fromkeys(typos) if typo != name]


@pytest.mark.timeout(120)
def test_each_misspelt_node_parameter_stops_the_node_naming_it_and_the_closest(ros, tmp_path):
    # Issue 12.2: `-p on_shutdwn:=detach` started the driver with the default hold.
    kinds = {FabrikIkNode: IK_ARGS, ServoDriverNode: ('-p', f'port:={tmp_path / "ttyNONE"}'),
             SimArmNode: ()}
    findings, cases = [], 0
    for kind, extra in kinds.items():
        node = kind(context=ros.context, cli_args=['--ros-args', '--params-file',
                                                   str(SHIPPED_CONFIG), *extra])
        own = [name for name in node.get_parameters_by_prefix('')
               if name.split('.')[0] not in TOP_KEYS and name not in STANDARD_PARAMETERS]
        value = {name: node.get_parameter(name).value for name in own}
        if hasattr(node, 'shutdown'):
            node.shutdown()
        node.destroy_node()
        for name in own:
            for typo in _misspellings(name):
                cases += 1
                override = f'{typo}:={_yaml_value(value[name])}'
                error = _outcome(kind, ros.context, SHIPPED_CONFIG, *extra, '-p', override)
                text = str(error)
                if not isinstance(error, REFUSALS) or not text.startswith(f'{typo} = '):
                    findings.append(f'{kind.__name__} -p {override}: {error!r}')
                elif f'the closest known name is {name}' not in text or '\n' in text:
                    findings.append(f'{kind.__name__} -p {override}: {text}')
    record('bad_input.misspelt_node_parameters', {'cases': cases, 'findings': findings})
    assert cases >= 50
    assert findings == []


def _yaml_value(value) -> str:
    """Return a ``-p`` value that rcl reads back as ``value``."""
    if isinstance(value, bool):
        return str(value).lower()
    if value == '':
        return "''"             # rcl cannot parse `name:=` with nothing after it
    return str(list(value)) if isinstance(value, (list, tuple)) or hasattr(value, 'tolist') \
        else str(value)
