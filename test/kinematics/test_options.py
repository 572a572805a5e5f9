"""Solver options: validated when built, cheap to vary at runtime without touching the Arm."""

import dataclasses
import math

import pytest

from fabrik_ros.kinematics import Arm, Bend, SolverOptions, SolverOptionsError


@pytest.mark.parametrize('field, value, rule', [
    ('tolerance_m', 0.0, 'must be a finite float > 0.0'),
    ('tolerance_m', math.nan, 'must be a finite float > 0.0'),
    ('tolerance_m', '0.1', 'must be a finite float > 0.0'),
    ('max_iterations', 0, 'must be within [1, 10000]'),
    ('max_iterations', 2.5, 'must be an int'),
    ('max_iterations', True, 'must be an int'),
    ('min_improvement_m', -1e-9, 'must be a finite float >= 0.0'),
    ('min_improvement_m', math.inf, 'must be a finite float >= 0.0'),
    ('bend', 'up', "must be one of ['any', 'up', 'down']"),
])
def test_bad_option_is_a_value_error_naming_field_value_and_rule(field, value, rule):
    with pytest.raises(ValueError) as caught:
        SolverOptions(**{field: value})
    assert isinstance(caught.value, SolverOptionsError)
    assert str(caught.value) == f'{field} = {value!r}, {rule}'


def test_with_options_returns_a_new_arm_and_keeps_the_old(arm_4dof: Arm):
    loose = arm_4dof.with_options(tolerance_m=0.01, max_iterations=5, bend=Bend.DOWN)
    assert loose.options == SolverOptions(tolerance_m=0.01, max_iterations=5,
                                          min_improvement_m=arm_4dof.options.min_improvement_m,
                                          bend=Bend.DOWN)
    assert arm_4dof.options.tolerance_m == 0.0001
    assert loose.joints == arm_4dof.joints and loose.planar is arm_4dof.planar
    result = loose.ik((0.15, 0.05, 0.1))
    assert result.reached and result.residual_m <= 0.01


def test_with_options_rejects_a_bad_value(arm_4dof: Arm):
    with pytest.raises(SolverOptionsError):
        arm_4dof.with_options(max_iterations=-3)


def test_options_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SolverOptions().tolerance_m = 1.0
