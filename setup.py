"""Packaging for fabrik_ros: the Python package, its executables and its share/ files."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = 'fabrik_ros'

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'bench', 'bench.*']),
    package_data={PACKAGE: ['py.typed']},
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
        (f'share/{PACKAGE}/launch', glob('launch/*.launch.py')),
        (f'share/{PACKAGE}/config', glob('config/*.yaml')),
        (f'share/{PACKAGE}/config/rviz', glob('config/rviz/*.rviz')),
        (f'share/{PACKAGE}/config/teleop', glob('config/teleop/*.yaml')),
        # The Uno firmware and its simavr harness, for `sim_device --board simavr`, which
        # builds them outside the install tree.
        (f'share/{PACKAGE}/hardware', ['hardware/Makefile', *glob('hardware/*.md')]),
        (f'share/{PACKAGE}/hardware/firmware/fabrik_servo_bridge',
         glob('hardware/firmware/fabrik_servo_bridge/*')),
        (f'share/{PACKAGE}/hardware/sim', glob('hardware/sim/*.c')),
    ],
    install_requires=['setuptools', 'numpy', 'pyserial', 'pyyaml'],
    zip_safe=True,
    maintainer='fabrik_ros maintainers',
    maintainer_email='maintainers@fabrik-ros.invalid',
    description='FABRIK inverse kinematics for hobby-servo robot arms on ROS 2.',
    license='Apache-2.0',
    extras_require={'test': ['pytest'], 'web': ['viser', 'yourdfpy']},
    entry_points={
        'console_scripts': [
            'fabrik_ik = fabrik_ros.nodes.ik_node:main',
            'servo_driver = fabrik_ros.nodes.driver_node:main',
            'sim_arm = fabrik_ros.nodes.sim_arm_node:main',
            'fabrik_arm = fabrik_ros.nodes.arm_composition:main',
            'sim_device = fabrik_ros.boardsim.cli:main',
            'web_view = fabrik_ros.nodes.web_view_node:main',
            'arm_from_urdf = fabrik_ros.tools.arm_from_urdf:main',
            'arm_calibration_from_lerobot = fabrik_ros.tools.arm_calibration_from_lerobot:main',
            'moveit_config_from_arm = fabrik_ros.tools.moveit_config:main',
            'leader_arm = fabrik_ros.nodes.leader_node:main',
            # Hand controls (issue 36): the gamepad's gripper buttons, the keyboard jog.
            'gripper_buttons = fabrik_ros.nodes.gripper_buttons_node:main',
            'jog_keyboard = fabrik_ros.nodes.jog_keyboard:main',
        ],
    },
)
