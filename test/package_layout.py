"""Read what setup.py and package.xml declare, without installing or importing the package."""

import ast
from pathlib import Path
import xml.etree.ElementTree as ET

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = 'fabrik_ros'


def console_scripts() -> dict[str, str]:
    """Return {executable: 'module:function'} from setup.py's console_scripts."""
    tree = ast.parse((REPO_ROOT / 'setup.py').read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == 'entry_points':
            entry_points = ast.literal_eval(node.value)
            pairs = (line.split('=') for line in entry_points['console_scripts'])
            return {name.strip(): target.strip() for name, target in pairs}
    raise AssertionError('setup.py has no entry_points keyword')


def exec_depends() -> set[str]:
    """Return the names package.xml lists as exec_depend or depend."""
    root = ET.parse(REPO_ROOT / 'package.xml').getroot()
    return {el.text.strip() for el in root if el.tag in ('exec_depend', 'depend')}
