"""make web's children and arm file are found where a colcon install puts them (defect D8)."""

import os
import sys

from fabrik_ros.webview import pipeline
from fabrik_ros.webview.pipeline import Pipeline, PipelineOptions


def _installed_prefix(root, names):
    """Lay out a colcon (ament_python) install of fabrik_ros with console scripts ``names``."""
    prefix = root / 'install' / 'fabrik_ros'
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    (index / 'fabrik_ros').write_text('')
    scripts = prefix / 'lib' / 'fabrik_ros'
    scripts.mkdir(parents=True)
    for name in names:
        (scripts / name).write_text('#!/bin/sh\n')
    return scripts


def test_every_child_is_started_from_the_install_lib_folder_not_from_path(tmp_path, monkeypatch):
    names = ('sim_device', 'servo_driver', 'fabrik_ik', 'web_view')
    scripts = _installed_prefix(tmp_path, names)
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(scripts.parents[1]))
    monkeypatch.setenv('PATH', os.defpath)
    monkeypatch.setattr(sys, 'executable', str(tmp_path / 'venv' / 'bin' / 'python3'))
    started = []

    class Popen:
        def __init__(self, command, **_options):
            started.append(command[0])

    monkeypatch.setattr(pipeline.subprocess, 'Popen', Popen)
    Pipeline(PipelineOptions()).start()
    assert started == [str(scripts / name) for name in names]


def test_a_script_beside_the_interpreter_comes_first_and_a_missing_one_is_left_to_path(
        tmp_path, monkeypatch):
    scripts = _installed_prefix(tmp_path, ['sim_device'])
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(scripts.parents[1]))
    venv = tmp_path / 'venv' / 'bin'
    venv.mkdir(parents=True)
    (venv / 'sim_device').write_text('#!/bin/sh\n')
    monkeypatch.setattr(sys, 'executable', str(venv / 'python3'))
    assert pipeline.console_script('sim_device') == str(venv / 'sim_device')
    assert pipeline.console_script('web_view') == 'web_view'
    monkeypatch.delenv('AMENT_PREFIX_PATH')
    assert pipeline.console_script('fabrik_ik') == 'fabrik_ik'



def test_the_default_arm_file_of_an_install_is_its_share_folder_s(tmp_path, monkeypatch):
    scripts = _installed_prefix(tmp_path, ())
    config = scripts.parents[1] / 'share' / 'fabrik_ros' / 'config' / 'arm_4dof.yaml'
    config.parent.mkdir(parents=True)
    config.write_text('/**: {}\n')
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(scripts.parents[1]))
    site = tmp_path / 'install' / 'fabrik_ros' / 'lib' / 'python3.11' / 'site-packages'
    assert pipeline.shipped_config('arm_4dof.yaml', site) == config
    checkout = pipeline.shipped_config('arm_4dof.yaml')
    assert checkout.exists() and checkout.parent.parent == pipeline.DEFAULT_CONFIG.parents[1]
