"""Run the doctests of every kinematics module (the small pure functions document themselves)."""

import doctest
import importlib
import pkgutil

import pytest

import fabrik_ros.kinematics as package

MODULES = sorted(info.name for info in pkgutil.iter_modules(package.__path__))


@pytest.mark.parametrize('name', MODULES)
def test_module_doctests_pass(name):
    module = importlib.import_module(f'{package.__name__}.{name}')
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0
